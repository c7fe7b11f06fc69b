"""Invariants of the line parser (never crash, never drop a line silently): in skip and keep
mode it never raises on any bytes, every line ends as exactly one counted outcome, and parsing is
deterministic."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.logstream import LogParser
from parsers.records import OUTCOMES, LogRecord, SourceInfo
from parsers.timestamps import parse_time

ANCHOR = datetime(2025, 3, 7, tzinfo=timezone.utc)
POD = "virt-controller-7c9d5b6f4-h2xqm"
SHAPES = [
    b'{"component":"virt-controller","kind":"","level":"info","msg":"Starting '
    b'VM","name":"pg-main","namespace":"shop-prod","pos":"vm.go:1081","timestamp":"2025-03-07T09:1'
    b'4:05.412208Z","uid":"940dbef6-7c4e-47dd-8335-331151d9fd89"}',
    b"2025-03-07T09:14:05.412530871Z "
    b'{"level":"info","msg":"m","timestamp":"2025-03-07T09:14:05.412208Z"}',
    b'2025-03-07T09:14:07.9182Z stderr P {"level":"error","msg":"part one ',
    b'2025-03-07T09:14:07.918244Z stderr F part two","timestamp":"2025-03-07T09:14:07.917931Z"}',
    b"I0307 09:13:58.100214       1 leaderelection.go:257] attempting to acquire leader lease "
    b"kubevirt/virt-controller...",
    b'E0307 09:27:12.640019       1 runtime.go:142] "Observed a panic" panic="x" stacktrace=<',
    b"\tgoroutine 731 [running]:",
    b" >",
    b"panic: runtime error: index out of range [2] with length 2 [recovered]",
    b"goroutine 731 [running]:",
    b"main.main()",
    b'level=info timestamp=2018-06-11T08:02:33.019271Z pos=vm.go:112 kind= msg="Creating"',
    b"2019/06/03 14:52:17 failed to build in-cluster client config",
    b"==== START logs for container virt-controller of pod kubevirt/" + POD.encode() + b" ====",
    b"Pod name: " + POD.encode() + b"\t Pod phase: Running",
    b"2025-03-07T09:14:05:",
    b"```",
    b'{"level":"info","msg":"cut off',
    b'"timestamp":"2025-03-07T09:14:05.412208Z"}',
    b"",
    b"\xef\xbb\xbf\x1b[32m" + POD.encode() + b"\x1b[0m virt-controller {}",
    b"[pod/" + POD.encode() + b'/virt-controller] {"level":"warning"}',
]
lines = st.one_of(st.sampled_from(SHAPES), st.binary(max_size=200))
policies = st.sampled_from(["skip", "keep"])


def parse_all(
    chunks: list[bytes], policy: str, max_line: int = 1 << 20
) -> tuple[list[LogRecord], LogParser]:
    parser = LogParser(SourceInfo("prop"), policy=policy, anchor=ANCHOR, max_line=max_line)
    return list(parser.parse(chunks)), parser


def check_accounting(chunks: list[bytes], records: list[LogRecord], parser: LogParser) -> None:
    assert parser.internal_errors == []
    assert parser.tally.lines() == len(chunks)
    assert set(parser.tally) <= OUTCOMES
    assert all(count > 0 for count in parser.tally.values())
    assert all(1 <= r.line_no <= len(chunks) for r in records)
    assert len({r.line_no for r in records}) == len(records)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), policies)
def test_any_single_line_of_bytes(line: bytes, policy: str) -> None:
    records, parser = parse_all([line], policy)
    check_accounting([line], records, parser)
    if policy == "keep" and parser.tally.problems():
        assert len(records) == 1


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=40), policies)
def test_mixed_shapes_and_garbage(chunks: list[bytes], policy: str) -> None:
    records, parser = parse_all(chunks, policy)
    check_accounting(chunks, records, parser)


@settings(max_examples=150)
@given(st.lists(lines, max_size=30), st.integers(min_value=1, max_value=120))
def test_a_small_line_cap_never_loses_lines(chunks: list[bytes], max_line: int) -> None:
    records, parser = parse_all(chunks, "keep", max_line)
    check_accounting(chunks, records, parser)


@settings(max_examples=150)
@given(st.lists(lines, max_size=30), policies)
def test_parsing_is_deterministic(chunks: list[bytes], policy: str) -> None:
    first, _ = parse_all(chunks, policy)
    second, _ = parse_all(chunks, policy)
    assert first == second


@settings(max_examples=150)
@given(st.lists(lines, max_size=30))
def test_keep_emits_every_record_skip_emits(chunks: list[bytes]) -> None:
    skipped, _ = parse_all(chunks, "skip")
    kept, _ = parse_all(chunks, "keep")
    assert [r for r in kept if r.shape != "unparsed"] == skipped
    unparsed = [r for r in kept if r.shape == "unparsed"]
    assert all(len(r.flags) >= 1 and r.flags[0] in OUTCOMES for r in unparsed)


@given(st.text(max_size=60))
def test_parse_time_never_raises_and_is_utc(text: str) -> None:
    stamp = parse_time(text)
    if stamp is not None:
        assert stamp.at.utcoffset() is not None
        assert stamp.at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert stamp.resolution_us >= 1
