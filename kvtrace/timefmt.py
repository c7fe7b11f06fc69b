"""Time display and window options: how kvtrace writes times, and reads --since/--until."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from kvtrace.errors import UsageError
from parsers.records import Timestamp
from parsers.timestamps import EARLIEST, LATEST, in_range, parse_time

_DURATION = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?$")


def iso(ts: Timestamp | None) -> str | None:
    """RFC 3339 in UTC with exactly the precision the source has (µs or whole seconds)."""
    if ts is None:
        return None
    if ts.resolution_us >= 1_000_000:
        return ts.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return ts.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def display(ts: Timestamp | None) -> str:
    """Table form: ``2026-11-28 00:42:31.912345`` or ``2026-11-28 00:42:32`` (1 s precision)."""
    if ts is None:
        return "?"
    if ts.resolution_us >= 1_000_000:
        return ts.at.strftime("%Y-%m-%d %H:%M:%S")
    return ts.at.strftime("%Y-%m-%d %H:%M:%S.%f")


def delta_seconds(prev: Timestamp | None, cur: Timestamp | None) -> float | None:
    if prev is None or cur is None:
        return None
    return (cur.at - prev.at).total_seconds()


def parse_window_bound(text: str | None, reference: datetime) -> datetime | None:
    """``--since/--until``: an RFC 3339 time, or a duration (``90s``, ``15m``, ``2h``, ``1d``)
    counted back from ``reference`` (the capture time of the evidence, or its last row)."""
    if not text:
        return None
    duration = _DURATION.match(text)
    if duration and any(duration.groupdict().values()):
        return _back_from(
            reference, text, {k: int(v or 0) for k, v in duration.groupdict().items()}
        )
    parsed = parse_time(text)
    if parsed is None:
        raise UsageError(
            f"cannot read time {text!r}: give RFC 3339 (2026-11-28T00:42:00Z) between "
            f"{EARLIEST.year} and {LATEST.year - 1}, or a duration (15m, 2h)"
        )
    return parsed.at


def _back_from(reference: datetime, text: str, parts: dict[str, int]) -> datetime:
    """``reference`` minus a duration; one reaching before :data:`EARLIEST` is a usage error."""
    try:
        delta = timedelta(days=parts["d"], hours=parts["h"], minutes=parts["m"], seconds=parts["s"])
        start = reference - delta
    except OverflowError:
        start = None
    if start is None or not in_range(start):
        raise UsageError(f"duration {text!r} reaches before {EARLIEST.year}: give a shorter one")
    return start


def window(
    since: str | None, until: str | None, reference: datetime
) -> tuple[datetime | None, datetime | None]:
    """Both bounds, durations counted back from ``reference``; a window that ends before it
    begins is a usage error."""
    start, end = parse_window_bound(since, reference), parse_window_bound(until, reference)
    if start is not None and end is not None and start > end:
        raise UsageError(f"--since {since} is after --until {until}: the window would be empty")
    return start, end


def now() -> datetime:
    return datetime.now(timezone.utc)
