"""The raw-byte candidate scan finds exactly the lines a naive per-line search finds."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers.scan as scan
from parsers.logstream import LogParser
from parsers.records import SourceInfo
from parsers.scan import scan_range

NEEDLES = [b"testvm", b"leaderelection"]


def naive(data: bytes, needles: list[bytes]) -> list[tuple[int, bytes]]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [(n, line) for n, line in enumerate(lines, 1) if any(x in line for x in needles)]


def ranged(data: bytes, needles: list[bytes], parts: int) -> list[tuple[int, bytes]]:
    size, hits, base = len(data), [], 0
    step = max(1, -(-size // parts))
    for start in range(0, size, step):
        result = scan_range(io.BytesIO(data), needles, start, min(start + step, size))
        hits += [(base + n, line) for n, line in result.hits]
        base += result.lines
    return hits


line = st.sampled_from(
    [
        b'{"msg":"Stopping VM","name":"testvm"}',
        b'{"name":"other"}',
        b"",
        b"x testvm y",
        b"I1128 00:41:58.100214       1 leaderelection.go:257] attempting",
        b"plain text",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(line, max_size=60), st.integers(min_value=1, max_value=7), st.booleans())
def test_ranges_and_chunks_agree_with_naive_search(lines, parts, trailing_newline):
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    old = scan.CHUNK
    scan.CHUNK = 17
    try:
        expected = naive(data, NEEDLES)
        whole = scan_range(io.BytesIO(data), NEEDLES)
        assert whole.hits == expected
        assert ranged(data, NEEDLES, parts) == expected
    finally:
        scan.CHUNK = old


def test_line_count_covers_every_line():
    data = b"a\nb\ntestvm\nc"
    result = scan_range(io.BytesIO(data), NEEDLES)
    assert result.lines == 4
    assert result.hits == [(3, b"testvm")]


def test_followers_are_taken_with_their_candidate():
    data = b'E1128 x runtime.go:142] "Observed a panic" name testvm\n\tgoroutine 1 [running]:\n\t\tframe\nnext line\n'
    result = scan_range(io.BytesIO(data), NEEDLES)
    assert [n for n, _ in result.hits] == [1, 2, 3]


@pytest.mark.parametrize("needle", [b"testvm", b"leaderelection"])
def test_each_needle_is_searched(needle):
    data = b"zzz\n" + needle + b"\nzzz\n"
    assert scan_range(io.BytesIO(data), NEEDLES).hits == [(2, needle)]


# --- a candidate's followers across the 512 KiB read boundary (issue 14) ---

_BLOCK = [
    b'2026-11-28T00:40:30.000001Z stderr P {"level":"info","name":"testvm","msg":"Start',
    b'2026-11-28T00:40:30.000002Z stderr F ing VM","timestamp":"2026-11-28T00:40:30.000001Z"}',
    b'E1128 00:40:31.000000       1 runtime.go:142] "Observed a panic" name testvm',
    b"goroutine 1 [running]:",
    b"\tkubevirt.io/kubevirt/pkg/virt-controller/watch.(*Controller).sync(0x1)",
    b"\t\t/go/src/kubevirt.io/kubevirt/pkg/virt-controller/watch/vm.go:1007 +0x1d",
    b"created by kubevirt.io/kubevirt/pkg/controller.Run",
    b"next line",
]


def _with_block_at(offset: int) -> bytes:
    """Filler lines that do not match, then the block starting at byte ``offset``."""
    filler = b"".join(b"f" * 99 + b"\n" for _ in range(offset // 100 - 1))
    pad = offset - len(filler) - 1
    return filler + b"p" * pad + b"\n" + b"\n".join(_BLOCK) + b"\n" + b"tail\n" * 3


def _parsed(hits: list[tuple[int, bytes]]) -> tuple[list[tuple[int, str, str]], dict[str, int]]:
    parser = LogParser(SourceInfo("boundary.log"))
    records = [r for n, line in hits for r in parser.feed(n, line)] + parser.close()
    return [(r.line_no, r.msg, r.stack or "") for r in records], dict(parser.tally)


def _block_spans() -> list[int]:
    """Offsets placing the read boundary before, inside and after each line of the block."""
    ends, at = [], 0
    for line in _BLOCK:
        ends += [at, at + 1, at + len(line) // 2, at + len(line), at + len(line) + 1]
        at += len(line) + 1
    return sorted(set(ends))


@pytest.mark.parametrize("into_block", _block_spans())
def test_followers_across_the_read_boundary_are_kept(into_block, monkeypatch):
    data = _with_block_at(scan.CHUNK - into_block)
    cut = scan_range(io.BytesIO(data), NEEDLES)
    monkeypatch.setattr(scan, "CHUNK", len(data) + 1)
    whole = scan_range(io.BytesIO(data), NEEDLES)
    assert len(whole.hits) == len(_BLOCK) - 1
    assert cut.hits == whole.hits and cut.lines == whole.lines
    assert _parsed(cut.hits) == _parsed(whole.hits)


@pytest.mark.parametrize("into_block", _block_spans())
def test_followers_across_a_range_boundary_are_kept(into_block):
    data = _with_block_at(4096 - into_block)
    whole = scan_range(io.BytesIO(data), NEEDLES)
    for parts in ([(0, 4096), (4096, len(data))], [(0, 4096), (4096, 4100), (4100, len(data))]):
        results = [scan_range(io.BytesIO(data), NEEDLES, lo, hi) for lo, hi in parts]
        assert scan.combine(results) == (whole.hits, whole.lines)
