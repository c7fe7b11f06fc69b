"""klog leader lines carry no year and no zone (docs/leader.md, "Clocks"): the year comes from the
line's kubelet prefix, else the nearest earlier fully-dated line of the stream, else the capture
time; UTC is assumed and flagged."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from kvtrace.evidence import Evidence, LogStream
from kvtrace.leader.history import leader_history
from kvtrace.leader.lines import read_leader_lines
from parsers.records import SourceInfo

POD = "virt-controller-6f8b9c7d54-aaaaa"
ATTEMPT = "I{md} {hms}       1 leaderelection.go:257] attempting to acquire leader lease kubevirt/virt-controller..."
ACQUIRED = "I{md} {hms}       1 leaderelection.go:271] successfully acquired lease kubevirt/virt-controller"
JSON = (
    '{{"component":"virt-controller","level":"info","msg":"we are on kubernetes",'
    '"pos":"application.go:449","timestamp":"{ts}"}}'
)


def evidence(lines: list[str], captured: datetime | None = None) -> Evidence:
    data = ("\n".join(lines) + "\n").encode()
    info = SourceInfo(
        f"logs/kubevirt/{POD}/virt-controller/current.log",
        POD,
        "kubevirt",
        "virt-controller",
        "current",
    )
    stream = LogStream(info, lambda: io.BytesIO(data))
    return Evidence("logs", "low", {}, [stream], captured_at=captured)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)


def leader_times(ev: Evidence) -> list[datetime]:
    return [r.time.at for r in read_leader_lines(ev, "kubevirt").leader_rows if r.time]


def test_year_from_the_earlier_json_line_across_new_year():
    ev = evidence(
        [
            JSON.format(ts="2026-12-31T23:59:58.500000Z"),
            ATTEMPT.format(md="0101", hms="00:00:01.000001"),
        ],
        captured=utc(2025, 6, 1),  # a wrong capture time loses to the stream's own anchor
    )
    assert leader_times(ev) == [utc(2027, 1, 1, 0, 0, 1, 1)]


def test_year_from_the_capture_time_when_no_line_before_is_dated():
    ev = evidence(
        [ATTEMPT.format(md="1231", hms="23:59:59.000000")], captured=utc(2027, 1, 1, 0, 5)
    )
    assert leader_times(ev) == [utc(2026, 12, 31, 23, 59, 59)]


def test_the_kubelet_prefix_dates_its_own_line():
    line = "2027-01-01T00:00:00.412530871Z " + ATTEMPT.format(md="1231", hms="23:59:59.900000")
    ev = evidence([line], captured=utc(2030, 1, 1))
    assert leader_times(ev) == [utc(2026, 12, 31, 23, 59, 59, 900000)]


def test_times_are_flagged_as_inferred_and_utc_assumed():
    ev = evidence([ATTEMPT.format(md="1231", hms="23:59:59.000000")], captured=utc(2027, 1, 1))
    (row,) = read_leader_lines(ev, "kubevirt").leader_rows
    assert row.time is not None
    assert {"year_inferred", "tz_assumed"} <= set(row.time.flags)


def test_an_epoch_across_new_year_keeps_its_order():
    ev = evidence(
        [
            ATTEMPT.format(md="1231", hms="23:59:50.000000"),
            ACQUIRED.format(md="0101", hms="00:00:06.000000"),
        ],
        captured=utc(2027, 1, 1, 0, 10),
    )
    (epoch,) = leader_history(ev, "kubevirt").epochs
    assert epoch.start == utc(2027, 1, 1, 0, 0, 6)


def test_without_any_anchor_klog_lines_cannot_be_placed():
    ev = evidence([ACQUIRED.format(md="0101", hms="00:00:06.000000")])
    history = leader_history(ev, "kubevirt")
    assert history.epochs == []
    assert "no leader-election lines in the virt-controller logs" in history.notes
