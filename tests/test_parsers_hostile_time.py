"""Absurd timestamps (issue 14): a year-9999 or year-1 time is a counted outcome, never a crash."""

from __future__ import annotations

import json

import pytest

from kvtrace.errors import UsageError
from kvtrace.timefmt import parse_window_bound
from parsers.records import RECORD, TIME_OUT_OF_RANGE
from parsers.timestamps import LATEST, out_of_range, parse_klog_time, parse_time
from tests.conftest import SAMPLES
from tests.helpers import parse_lines, run_cli

ABSURD = ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"]
VM_LINE = (
    '{"component":"virt-controller","kind":"","level":"info","msg":"Starting VM due to '
    'runStrategy: Always","name":"testvm","namespace":"default","pos":"vm.go:1032",'
    '"timestamp":"%s","uid":"f82c1eeb-5b30-4c0a-8dec-0433ff9e442c"}'
)


@pytest.mark.parametrize("text", ABSURD)
def test_parse_time_refuses_and_names_an_absurd_time(text: str) -> None:
    assert parse_time(text) is None
    assert out_of_range(text)


def test_a_plausible_time_is_not_out_of_range() -> None:
    assert not out_of_range("2026-11-28T00:40:30.008089Z")
    assert not out_of_range("not a time")


def test_klog_time_next_to_an_absurd_anchor_is_refused() -> None:
    assert parse_klog_time("1231", "23:59:59.999999", LATEST.replace(year=9999)) is None


@pytest.mark.parametrize("text", ABSURD)
def test_json_line_keeps_no_time_and_counts_the_reason(text: str) -> None:
    records, tally = parse_lines([VM_LINE % text, VM_LINE % "2026-11-28T00:40:30.008089Z"])
    assert [r.time is None for r in records] == [True, False]
    assert TIME_OUT_OF_RANGE in records[0].flags
    assert tally == {TIME_OUT_OF_RANGE: 1, RECORD: 1}


def test_cri_prefix_with_an_absurd_time_is_counted() -> None:
    line = "9999-12-31T23:59:59.999999999Z stderr F " + VM_LINE % "2026-11-28T00:40:30.008089Z"
    records, tally = parse_lines([line])
    assert records[0].captured_at is None and records[0].msg.startswith("Starting VM")
    assert tally == {TIME_OUT_OF_RANGE: 1}


def test_stdlog_and_klog_lines_with_absurd_times_never_raise() -> None:
    lines = ["9999/12/31 23:59:59 hello", "I1231 23:59:59.999999       1 vm.go:1] x"]
    _, tally = parse_lines(lines, anchor=LATEST.replace(year=9999))
    assert tally[TIME_OUT_OF_RANGE] == 1 and tally.lines() == 2


@pytest.mark.parametrize("text", ["99999999999d", "2000000d"])
def test_a_window_reaching_past_the_range_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError):
        parse_window_bound(text, parse_time("2026-11-28T00:40:30Z").at)  # type: ignore[union-attr]


def test_an_absurd_since_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="between 1970 and 2199"):
        parse_window_bound("9999-12-31T23:59:59Z", parse_time("2026-11-28T00:40:30Z").at)  # type: ignore[union-attr]


def _vm_log(tmp_path, text: str):  # type: ignore[no-untyped-def]
    logs = sorted((SAMPLES / "always-restart" / "logs").rglob("*.log"))
    lines = [ln for log in logs for ln in log.read_text().splitlines() if "testvm" in ln][:3]
    path = tmp_path / "virt-controller.log"
    path.write_text("\n".join([*lines, VM_LINE % text]) + "\n")
    return path


@pytest.mark.parametrize("output", ["table", "json", "html"])
@pytest.mark.parametrize("text", ABSURD[:2])
def test_timeline_with_an_absurd_time_does_not_crash(capsys, tmp_path, output, text) -> None:  # type: ignore[no-untyped-def]
    log = _vm_log(tmp_path, text)
    code, out, err = run_cli(capsys, "timeline", "default/testvm", "--log", str(log), "-o", output)
    assert "internal error" not in err and code in (0, 3), err
    assert out
    if output == "json":
        assert TIME_OUT_OF_RANGE in json.dumps(json.loads(out))
    if output == "table":
        assert "1 time_out_of_range" in out + err


def test_check_with_an_absurd_time_does_not_crash(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(capsys, "check", "--log", str(_vm_log(tmp_path, ABSURD[0])))
    assert "internal error" not in err and code in (0, 3), err
    assert "time_out_of_range" in out + err
