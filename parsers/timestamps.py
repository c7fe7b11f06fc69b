"""The one tolerant time parser.

Every time string kvtrace reads goes through :func:`parse_time`, which returns a UTC
:class:`~parsers.records.Timestamp` whose resolution follows the fraction digits written, or
``None`` for "unknown" (``null``, ``"null"``, ``""``, ``~``): never epoch 0. A well-formed time
outside :data:`EARLIEST` … :data:`LATEST` is refused too (None; :func:`out_of_range` tells it
apart): a year-9999 or year-1 stamp is damage, and arithmetic near ``datetime.max`` overflows.

klog headers and stern short times carry no year and no zone; :func:`parse_klog_time` places
them next to an anchor. python-dateutil is used here only, and only as a last fallback.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from parsers.records import MICROSECOND, SECOND, Timestamp

UTC = timezone.utc
TZ_ASSUMED = "tz_assumed"
YEAR_INFERRED = "year_inferred"
INHERITED = "inherited"

# The plausible range of a log or object time. 1970: a node whose clock was never set logs the
# epoch; 2200: far past any real capture, far below datetime.max, so ``at + resolution`` and
# window arithmetic can never overflow.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)

_UNKNOWN = frozenset({"", "null", "~", "none", "<none>", "<unknown>"})
_ASSUMED: tuple[str, ...] = (TZ_ASSUMED,)
_KLOG_FLAGS: tuple[str, ...] = (YEAR_INFERRED, TZ_ASSUMED)

# RFC 3339 and friends: `T` or space, 0-9+ fraction digits, `Z`, `±hh:mm`, `±hhmm`, `±hh`, and
# Go's time.String() tail (`+0000 UTC m=+0.0816`) as in the must-gather `timestamp` file.
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?"
    r" ?(?P<zone>[Zz]|[+-]\d\d(?::?\d\d)?|UTC|GMT)?"
    r"(?: [A-Z]{2,5})?(?: m=[+-][\d.]+)?",
    re.ASCII,
)
# Go standard-library log: `2019/06/03 14:52:17`, optionally with microseconds. Local time.
_STDLOG = re.compile(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?", re.ASCII)
_KLOG_HMS = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.(\d+))?", re.ASCII)
# dateutil fills missing fields from today: only hand it texts with a day, a month name, a
# year and a clock (RFC 1123, ctime and the like).
_DATEUTIL_SHAPE = re.compile(
    r"(?=.*\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
    r"(?=.*(?:^|[\s,])\d{1,2}(?:st|nd|rd|th)?[\s,])(?=.*\b\d{4}\b)(?=.*\b\d\d?:\d\d:\d\d\b)",
    re.ASCII | re.IGNORECASE,
)


_RESOLUTIONS = (SECOND, 100_000, 10_000, 1_000, 100, 10, MICROSECOND)


def resolution_for(fraction_digits: int) -> int:
    """Resolution in µs of a time written with this many fraction digits (capped at 1 µs)."""
    return _RESOLUTIONS[min(fraction_digits, 6)]


def _micros(fraction: str | None) -> int:
    return int((fraction or "")[:6].ljust(6, "0"))


def _fast_utc(text: str) -> Timestamp | None:
    """`YYYY-MM-DDThh:mm:ss.f…Z`, KubeVirt's own layout and the kubelet prefix: the hot path.

    ``fromisoformat`` checks the digits (ASCII only); anything unusual returns None and takes
    the regex path.
    """
    if len(text) < 22 or text[-1] != "Z" or text[10] != "T" or text[19] != ".":
        return None
    digits = len(text) - 21
    head = text[:26] if digits > 6 else text[:-1]
    if not text.isascii() or (digits > 6 and not text[26:-1].isdigit()):
        return None
    try:
        at = datetime.fromisoformat(head + "+00:00")
    except ValueError:
        return None
    return Timestamp(at, _RESOLUTIONS[min(digits, 6)])


def _zone_offset(zone: str) -> timedelta | None:
    """Offset of `Z`, `UTC`, `±hh`, `±hhmm` or `±hh:mm`; None if out of range."""
    if zone in ("Z", "z", "UTC", "GMT"):
        return timedelta(0)
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or "0")
    if hours > 23 or minutes > 59:
        return None
    sign = -1 if zone[0] == "-" else 1
    return sign * timedelta(hours=hours, minutes=minutes)


def _from_match(groups: tuple[str | None, ...], zone: str | None) -> Timestamp | None:
    year, month, day, hour, minute, second = (int(g or "0") for g in groups[:6])
    fraction = groups[6]
    try:
        at = datetime(year, month, day, hour, minute, second, _micros(fraction), tzinfo=UTC)
        if zone is None:
            return Timestamp(at, resolution_for(len(fraction or "")), _ASSUMED)
        offset = _zone_offset(zone)
        if offset is None:
            return None
        return Timestamp(at - offset, resolution_for(len(fraction or "")))
    except (ValueError, OverflowError):
        return None


def _with_dateutil(text: str) -> Timestamp | None:
    """Last resort for odd but dated forms (RFC 1123 and the like). Never guesses a date."""
    if not text.isascii() or not _DATEUTIL_SHAPE.match(text):
        return None
    from dateutil import parser as dateutil_parser  # the one home of dateutil

    try:
        parsed = dateutil_parser.parse(text, fuzzy=False)
    except (ValueError, OverflowError):
        return None
    if parsed.tzinfo is None:
        return Timestamp(parsed.replace(tzinfo=UTC), SECOND, _ASSUMED)
    try:
        return Timestamp(parsed.astimezone(UTC), SECOND)
    except (ValueError, OverflowError):
        return None


def parse_time(text: str | None) -> Timestamp | None:
    """Parse any timestamp kvtrace meets into a UTC :class:`Timestamp`, or None if unknown or
    outside :data:`EARLIEST` … :data:`LATEST`.

    Accepts RFC 3339 with 0-9 fraction digits, `T` or a space, `Z` / `±hh:mm` / `±hhmm` / no zone
    (then flagged ``tz_assumed``), Go std-log `YYYY/MM/DD hh:mm:ss` (1 s, ``tz_assumed``) and the
    must-gather `timestamp` file form (`… +0000 UTC m=+0.08`). Resolution follows the fraction
    digits: none → 1 s, 3 → 1 ms, 6 or more → 1 µs (datetime holds µs; 9 digits are truncated).
    """
    stamp = _parse_any(text)
    return stamp if stamp is None or in_range(stamp.at) else None


def out_of_range(text: str | None) -> bool:
    """True when ``text`` is a well-formed time that :func:`parse_time` refuses for its range:
    the caller counts the line ``time_out_of_range`` instead of treating the time as missing."""
    stamp = _parse_any(text)
    return stamp is not None and not in_range(stamp.at)


def in_range(at: datetime) -> bool:
    """Whether ``at`` (UTC) lies in ``[EARLIEST, LATEST)``."""
    return EARLIEST <= at < LATEST


def _parse_any(text: str | None) -> Timestamp | None:
    if text is None:
        return None
    fast = _fast_utc(text)
    if fast is not None:
        return fast
    cleaned = text.strip().strip("\"'").strip()
    if cleaned.lower() in _UNKNOWN:
        return None
    match = _ISO.fullmatch(cleaned)
    if match is not None:
        return _from_match(match.groups()[:7], match.group("zone"))
    match = _STDLOG.fullmatch(cleaned)
    if match is not None:
        return _from_match(match.groups(), None)
    return _with_dateutil(cleaned)


def _month_day(mmdd: str) -> tuple[int, int] | None:
    digits = mmdd.replace("-", "").replace("/", "")
    if len(digits) != 4 or not (digits.isascii() and digits.isdigit()):
        return None
    return int(digits[:2]), int(digits[2:])


def _closest_year(
    month: int, day: int, clock: tuple[int, int, int, int], anchor: datetime
) -> datetime | None:
    """Year A-1, A or A+1 closest to the anchor (December/January rollover); 02-29 only in leap
    years."""
    best: datetime | None = None
    for year in (anchor.year - 1, anchor.year, anchor.year + 1):
        try:
            candidate = datetime(year, month, day, *clock, tzinfo=UTC)
        except ValueError:
            continue
        if best is None or abs(candidate - anchor) < abs(best - anchor):
            best = candidate
    return best


def _as_utc(anchor: datetime) -> datetime:
    if anchor.tzinfo is None:
        return anchor.replace(tzinfo=UTC)
    return anchor.astimezone(UTC)


def parse_klog_time(mmdd: str, hms: str, anchor: datetime | None) -> Timestamp | None:
    """A klog header time (`0307`, `09:14:05.412208`) or a stern short time (`03-07`,
    `09:14:05`), placed in the year closest to ``anchor`` (the stream passes the line's own
    capture prefix, else the last fully-dated line, else the collection time).

    Returns None without an anchor (the caller counts ``time_partial``) or for an impossible
    date. The zone is unknown: UTC is assumed and flagged, with ``year_inferred``.
    """
    month_day = _month_day(mmdd)
    clock = _KLOG_HMS.fullmatch(hms)
    if anchor is None or month_day is None or clock is None:
        return None
    hour, minute, second = int(clock[1]), int(clock[2]), int(clock[3])
    fraction = clock[4]
    try:
        at = _closest_year(*month_day, (hour, minute, second, _micros(fraction)), _as_utc(anchor))
    except (ValueError, OverflowError):
        return None
    if at is None or not in_range(at):
        return None
    return Timestamp(at, resolution_for(len(fraction or "")), _KLOG_FLAGS)


def inherited(time: Timestamp) -> Timestamp:
    """The same interval, marked as taken from a neighbouring line (a standalone panic block)."""
    if INHERITED in time.flags:
        return time
    return Timestamp(time.at, time.resolution_us, (*time.flags, INHERITED))


def is_fully_dated(time: Timestamp) -> bool:
    """True when the time carries its own year (usable as a klog anchor)."""
    return YEAR_INFERRED not in time.flags and INHERITED not in time.flags
