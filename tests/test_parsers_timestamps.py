"""parse_time / parse_klog_time: every time format kvtrace reads, and klog year inference."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from parsers.records import MICROSECOND, MILLISECOND, SECOND
from parsers.timestamps import parse_klog_time, parse_time

UTC = timezone.utc


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected", "resolution"),
    [
        ("2025-03-07T09:14:05.412208Z", at(2025, 3, 7, 9, 14, 5, 412208), MICROSECOND),
        ("2025-03-07T09:14:05.412530871Z", at(2025, 3, 7, 9, 14, 5, 412530), MICROSECOND),
        ("2025-03-07T09:14:05.4125Z", at(2025, 3, 7, 9, 14, 5, 412500), 100),
        ("2025-03-07T09:14:05.412Z", at(2025, 3, 7, 9, 14, 5, 412000), MILLISECOND),
        ("2025-03-07T09:14:06Z", at(2025, 3, 7, 9, 14, 6), SECOND),
        ("2025-03-07T11:14:05.5+02:00", at(2025, 3, 7, 9, 14, 5, 500000), 100_000),
        ("2025-03-07T04:14:05-0500", at(2025, 3, 7, 9, 14, 5), SECOND),
        ("2025-03-07 09:14:05.000001Z", at(2025, 3, 7, 9, 14, 5, 1), MICROSECOND),
        (
            "2025-03-07 10:05:41.551203114 +0000 UTC m=+0.081622945",
            at(2025, 3, 7, 10, 5, 41, 551203),
            MICROSECOND,
        ),
        ("2025-03-07 11:05:41 +0100 CET", at(2025, 3, 7, 10, 5, 41), SECOND),
        ('"2025-03-07T09:14:06Z"', at(2025, 3, 7, 9, 14, 6), SECOND),
    ],
)
def test_zoned_forms(text: str, expected: datetime, resolution: int) -> None:
    stamp = parse_time(text)
    assert stamp is not None
    assert stamp.at == expected
    assert stamp.at.utcoffset() == timedelta(0)
    assert stamp.resolution_us == resolution
    assert stamp.flags == ()


@pytest.mark.parametrize(
    ("text", "expected", "resolution"),
    [
        ("2025/03/07 09:31:44", at(2025, 3, 7, 9, 31, 44), SECOND),
        ("2019/06/03 14:52:17.123456", at(2019, 6, 3, 14, 52, 17, 123456), MICROSECOND),
        ("2025-03-07T09:14:00.000207", at(2025, 3, 7, 9, 14, 0, 207), MICROSECOND),
    ],
)
def test_zoneless_forms_assume_utc_and_say_so(
    text: str, expected: datetime, resolution: int
) -> None:
    stamp = parse_time(text)
    assert stamp is not None
    assert (stamp.at, stamp.resolution_us, stamp.flags) == (expected, resolution, ("tz_assumed",))


@pytest.mark.parametrize(
    "text", [None, "", "null", '"null"', "~", "  ", "<unknown>", "not a time", "12", "2025-13-07T0"
                                                                                     "9:14:05Z",
             "2025-02-29T00:00:00Z", "2025-03-07T25:00:00Z", "2025-03-07T09:14:05+25:00",
             "0001-01-01T00:30:00+01:00", "２０２５-03-07T09:14:05.000000Z"],
)  # fmt: skip
def test_unknown_or_impossible_is_none(text: str | None) -> None:
    assert parse_time(text) is None


def test_interval_end_follows_resolution() -> None:
    stamp = parse_time("2025-03-07T09:14:06Z")
    assert stamp is not None
    assert stamp.end == at(2025, 3, 7, 9, 14, 7)


def test_dateutil_fallback_for_rfc1123() -> None:
    stamp = parse_time("Fri, 07 Mar 2025 09:14:05 GMT")
    assert stamp is not None
    assert (stamp.at, stamp.resolution_us, stamp.flags) == (at(2025, 3, 7, 9, 14, 5), SECOND, ())


def test_klog_time_takes_the_anchor_year() -> None:
    stamp = parse_klog_time("0307", "09:14:01.873390", at(2025, 3, 7, 9, 0))
    assert stamp is not None
    assert stamp.at == at(2025, 3, 7, 9, 14, 1, 873390)
    assert stamp.flags == ("year_inferred", "tz_assumed")
    assert stamp.resolution_us == MICROSECOND


def test_klog_time_december_line_with_january_anchor_is_previous_year() -> None:
    stamp = parse_klog_time("1231", "23:59:59.900000", at(2026, 1, 1, 0, 0, 5))
    assert stamp is not None
    assert stamp.at == at(2025, 12, 31, 23, 59, 59, 900000)


def test_klog_time_january_line_with_december_anchor_is_next_year() -> None:
    stamp = parse_klog_time("0101", "00:00:02.000001", at(2025, 12, 31, 23, 59, 58))
    assert stamp is not None
    assert stamp.at == at(2026, 1, 1, 0, 0, 2, 1)


def test_klog_feb_29_only_in_a_leap_year() -> None:
    stamp = parse_klog_time("0229", "12:00:00.000000", at(2025, 3, 1))
    assert stamp is not None
    assert stamp.at.year == 2024  # 2025 and 2026 have no 29 February
    assert parse_klog_time("0229", "12:00:00.000000", at(2022, 3, 1)) is None


def test_klog_time_without_anchor_is_unknown() -> None:
    assert parse_klog_time("0307", "09:14:01.873390", None) is None


def test_stern_short_time_has_second_resolution() -> None:
    stamp = parse_klog_time("03-07", "09:14:05", at(2025, 3, 8))
    assert stamp is not None
    assert (stamp.at, stamp.resolution_us) == (at(2025, 3, 7, 9, 14, 5), SECOND)


def test_klog_naive_anchor_is_read_as_utc() -> None:
    stamp = parse_klog_time("0307", "09:14:01.000000", datetime(2025, 3, 7))
    assert stamp is not None
    assert stamp.at == at(2025, 3, 7, 9, 14, 1)


@pytest.mark.parametrize("text", ["Mar 2025 09:14:05", "March 7 09:14:05", "09:14:05.0000"])
def test_dateutil_never_fills_in_missing_fields(text: str) -> None:
    assert parse_time(text) is None
