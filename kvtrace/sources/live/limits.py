"""Caps on what one API server may send, so a hostile or broken server cannot exhaust memory,
disk or time. Each has a documented default (docs/collect.md) and a ``KVTRACE_MAX_*`` variable,
as the bundle reader's caps (``kvtrace/sources/safety.py``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from kvtrace.errors import UsageError

MiB = 1024**2
GiB = 1024**3
ENV_MAX_RESPONSE_BYTES = "KVTRACE_MAX_RESPONSE_BYTES"
ENV_MAX_LOG_STREAM_BYTES = "KVTRACE_MAX_LOG_STREAM_BYTES"
ENV_MAX_LIST_PAGES = "KVTRACE_MAX_LIST_PAGES"
ENV_MAX_LIST_BYTES = "KVTRACE_MAX_LIST_BYTES"
ENV_MAX_RETRIES = "KVTRACE_MAX_RETRIES"


@dataclass(frozen=True)
class LiveLimits:
    """Per collection. ``max_retries`` is shared by every request of the collection."""

    max_response_bytes: int = 256 * MiB  # one object or one list page
    max_log_stream_bytes: int = 1 * GiB  # one container log; the rest is cut, and recorded
    max_list_pages: int = 2_000  # pages of one list: a million objects at limit=500
    max_list_bytes: int = 1 * GiB  # all the pages of one list together
    max_retries: int = 100  # retries of all requests together, after the first attempts

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LiveLimits:
        """Defaults overridden by ``KVTRACE_MAX_*`` variables (bad values are a usage error)."""
        env = os.environ if env is None else env
        default = cls()
        return cls(
            _positive(env, ENV_MAX_RESPONSE_BYTES, default.max_response_bytes),
            _positive(env, ENV_MAX_LOG_STREAM_BYTES, default.max_log_stream_bytes),
            _positive(env, ENV_MAX_LIST_PAGES, default.max_list_pages),
            _positive(env, ENV_MAX_LIST_BYTES, default.max_list_bytes),
            _positive(env, ENV_MAX_RETRIES, default.max_retries, zero=True),
        )


def _positive(env: Mapping[str, str], name: str, default: int, zero: bool = False) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or (int(text) == 0 and not zero):
        raise UsageError(f"{name}={text!r} is not a positive whole number; fix or unset it")
    return int(text)


def truncation(size: int) -> str:
    """The ``missing[]`` reason of a log cut at the cap (its first ``size`` bytes are kept)."""
    return (
        f"truncated: the log is longer than {size} bytes, only the first {size} are kept; "
        f"raise the cap with {ENV_MAX_LOG_STREAM_BYTES}=<bytes>"
    )
