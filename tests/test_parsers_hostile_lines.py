"""Over-long lines (issue 14): read in linear time and bounded memory, counted ``too_long``."""

from __future__ import annotations

import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers.scan as scan
from parsers.lines import MAX_LINE, bounded_lines, read_line
from parsers.logstream import LogParser
from parsers.records import RECORD, TOO_LONG, SourceInfo
from parsers.scan import scan_range
from tests.conftest import SAMPLES
from tests.helpers import run_cli

NULS = 64 << 20
VM_LINE = (
    b'{"level":"info","msg":"Starting VM","name":"testvm","timestamp":"2026-11-28T00:40:30.0Z"}'
)


class _Pieces(io.RawIOBase):
    """``total`` NUL bytes without a newline, then ``tail``, made as they are read: the test
    never holds the input."""

    def __init__(self, total: int, tail: bytes = b"") -> None:
        super().__init__()
        self.left, self.tail = total, tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        if self.left:
            size = min(len(buffer), self.left)
            buffer[:size] = bytes(size)
            self.left -= size
            return size
        size = min(len(buffer), len(self.tail))
        buffer[:size], self.tail = self.tail[:size], self.tail[size:]
        return size


def _nuls(tail: bytes = b"") -> io.BufferedReader:
    return io.BufferedReader(_Pieces(NULS, tail), 256 << 10)


def test_read_line_keeps_the_head_and_reports_what_it_took() -> None:
    head, taken = read_line(io.BytesIO(b"x" * 50 + b"\nnext\n"), 10)
    assert head == b"x" * 11 and taken == 51


def test_64_mib_of_nuls_is_one_too_long_line() -> None:
    parser = LogParser(SourceInfo("crash.log"))
    records = list(parser.parse(_nuls(b"\n" + VM_LINE + b"\n")))
    assert parser.tally == {TOO_LONG: 1, RECORD: 1}
    assert records[-1].msg == "Starting VM" and records[-1].line_no == 2


def test_a_gzipped_run_of_nuls_is_one_too_long_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "crash.log.gz"
    with gzip.open(path, "wb") as out:
        for _ in range(NULS >> 20):
            out.write(bytes(1 << 20))
    parser = LogParser(SourceInfo(str(path)))
    with gzip.open(path, "rb") as stream:
        list(parser.parse(stream))
    assert parser.tally == {TOO_LONG: 1}


def test_bounded_lines_never_hold_more_than_the_cap() -> None:
    assert max(len(line) for line in bounded_lines(_nuls(b"\n" + VM_LINE))) == MAX_LINE + 1


@pytest.mark.parametrize("everything", [True, False])
def test_scan_drops_the_tail_of_64_mib_of_nuls(everything: bool) -> None:
    result = scan_range(_nuls(b"testvm\n" + VM_LINE + b"\n"), [b"testvm"], everything=everything)
    assert result.lines == 2 and result.bytes_read == NULS + 8 + len(VM_LINE)
    assert [n for n, _ in result.hits] == [1, 2]  # the cut line is a candidate, needle or not
    assert all(len(line) <= MAX_LINE + 1 for _, line in result.hits)


def test_scan_of_one_long_line_hands_its_head_to_the_parser() -> None:
    data = b"zz\n" + VM_LINE[:-1] + b"x" * (3 * MAX_LINE) + b"}\nzz\n" + b"y" * (2 * MAX_LINE)
    result = scan_range(io.BytesIO(data), [b"testvm"])
    assert [(n, len(line)) for n, line in result.hits] == [(2, MAX_LINE + 1), (4, MAX_LINE + 1)]
    parser = LogParser(SourceInfo("long.log"))
    for line_no, line in result.hits:
        parser.feed(line_no, line)
    parser.close()
    assert parser.tally == {TOO_LONG: 2}


def _cut(lines: list[bytes], max_line: int) -> list[bytes]:
    return [line[: max_line + 1] for line in lines]


line = st.sampled_from([b"", b"testvm", b"x" * 40 + b"testvm", b"testvm" + b"\0" * 90, b"ab"])


@settings(max_examples=60, deadline=None)
@given(st.lists(line, max_size=30), st.integers(1, 5), st.sampled_from([7, 16, 21]))
def test_long_lines_scan_as_their_heads_in_any_chunking(lines, parts, chunk) -> None:  # type: ignore[no-untyped-def]
    data = b"".join(x + b"\n" for x in lines)
    expected = list(enumerate(_cut(lines, 20), 1))
    old, scan.CHUNK = scan.CHUNK, chunk
    try:
        whole = scan_range(io.BytesIO(data), [b"testvm"], everything=True, max_line=20)
        needled = scan_range(io.BytesIO(data), [b"testvm"], max_line=20)
        size, step, ranged = len(data), max(1, -(-len(data) // parts)), []
        for start in range(0, size, step):
            part = scan_range(
                io.BytesIO(data), [], start, min(start + step, size), everything=True, max_line=20
            )
            ranged += [(len(ranged) + n, x) for n, x in part.hits]
    finally:
        scan.CHUNK = old
    assert whole.hits == expected and whole.lines == len(lines)
    assert needled.hits == [(n, x) for n, x in expected if b"testvm" in x or len(x) > 20]
    assert [x[: 20 + 1] for _, x in ranged] == [x for _, x in expected]


def test_timeline_reports_a_gzipped_run_of_nuls_as_one_too_long_line(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    logs = sorted((SAMPLES / "always-restart" / "logs").rglob("*.log"))
    lines = [ln for log in logs for ln in log.read_bytes().splitlines() if b"testvm" in ln][:3]
    path = tmp_path / "virt-controller.log.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"\n".join(lines) + b"\n")
        for _ in range(NULS >> 20):
            out.write(bytes(1 << 20))
    code, out_text, err = run_cli(capsys, "timeline", "default/testvm", "--log", str(path))
    assert "internal error" not in err and code in (0, 3), err
    assert "1 too_long" in out_text + err
