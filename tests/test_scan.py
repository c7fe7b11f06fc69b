"""The raw-byte candidate scan finds exactly the lines a naive per-line search finds."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers.scan as scan
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
