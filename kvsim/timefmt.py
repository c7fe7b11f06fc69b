"""The time formats the simulated cluster writes, each as its writer prints it."""

from __future__ import annotations

import datetime as dt

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def to_datetime(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=us)


def from_iso(text: str) -> int:
    """``2026-12-08T14:00:00Z`` or with a fraction → µs since the epoch."""
    text = text.rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    moment = dt.datetime.strptime(text, fmt).replace(tzinfo=dt.timezone.utc)
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def micro(us: int) -> str:
    """KubeVirt logger ``timestamp`` and metav1.MicroTime: 6 fraction digits, literal Z
    (log.go:43 at v1.9.0)."""
    return to_datetime(us).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seconds(us: int) -> str:
    """metav1.Time: whole seconds, truncated, literal Z."""
    return to_datetime(us).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubelet(ns: int) -> str:
    """The kubelet ``--timestamps`` / CRI prefix: RFC 3339 with 9 fraction digits."""
    sec, frac = divmod(ns, 1_000_000_000)
    return to_datetime(sec * 1_000_000).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def stdlib(us: int) -> str:
    """Go's standard ``log`` prefix as go-kit's StdlibAdapter keeps it in ``ts``."""
    return to_datetime(us).strftime("%Y/%m/%d %H:%M:%S")


def klog_header(us: int) -> str:
    """``mmdd hh:mm:ss.uuuuuu`` of a klog header (local time: UTC in these containers)."""
    moment = to_datetime(us)
    return f"{moment:%m%d} {moment:%H:%M:%S}.{moment.microsecond:06d}"
