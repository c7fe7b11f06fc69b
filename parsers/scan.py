"""Find candidate lines in raw bytes before any decoding.

Looking for one VM in a 1 GiB log, almost every line is irrelevant. ``bytes.find`` over large
chunks skips them at memory speed; only lines that contain a needle (plus the continuation lines
that follow them, such as stack frames) are handed to the full parser.

A scan covers the lines that *start* inside ``[start, end)`` of a stream, so a file can be split
into byte ranges scanned in parallel; :class:`ScanResult` carries the range's newline count so the
caller can turn range-relative line numbers into file line numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO

CHUNK = 16 << 20
MAX_FOLLOWERS = 200


@dataclass
class ScanResult:
    """Candidate lines of one range: ``(line_no relative to the range, 1-based; line bytes)``."""

    hits: list[tuple[int, bytes]] = field(default_factory=list)
    lines: int = 0
    bytes_read: int = 0


def _is_follower(line: bytes, previous: bytes) -> bool:
    """A line that belongs to the candidate before it: stack frames, klog ``key=<`` values, the
    rest of a CRI partial line (``inputs.md`` §1.3.2, §1.4, §1.6)."""
    if line[:1] in (b"\t", b" "):
        return True
    if line.startswith((b"goroutine ", b"panic: ", b"created by ")):
        return True
    head = previous[:64]
    return b" P " in head and head.split(b" ", 3)[2:3] == [b"P"]


def _hits_in(data: bytes, end: int, needles: Sequence[bytes]) -> list[int]:
    """Sorted start offsets of the lines in ``data[:end]`` that contain any needle."""
    starts: set[int] = set()
    for needle in needles:
        at = data.find(needle, 0, end)
        while at != -1:
            line_start = data.rfind(b"\n", 0, at) + 1
            starts.add(line_start)
            line_end = data.find(b"\n", at, end)
            at = data.find(needle, line_end + 1, end) if line_end != -1 else -1
    return sorted(starts)


def _collect(data: bytes, end: int, starts: list[int], base_line: int, out: ScanResult) -> None:
    """Append the hit lines and their followers, numbering them from ``base_line``."""
    counted_to, line_no, next_free = 0, base_line, 0
    for start in starts:
        if start < next_free:
            continue
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        next_free = _take_with_followers(data, end, start, line_no, out)


def _take_with_followers(data: bytes, end: int, start: int, line_no: int, out: ScanResult) -> int:
    previous = b""
    for offset in range(MAX_FOLLOWERS + 1):
        stop = data.find(b"\n", start, end)
        stop = end if stop == -1 else stop
        line = data[start:stop]
        if offset and not _is_follower(line, previous):
            return start
        out.hits.append((line_no + offset, line))
        previous, start = line, stop + 1
        if start >= end:
            break
    return start


def scan_range(
    stream: IO[bytes], needles: Sequence[bytes], start: int = 0, end: int | None = None
) -> ScanResult:
    """Scan the lines starting in ``[start, end)`` of a seekable or sequential stream."""
    result = ScanResult()
    if start:
        stream.seek(start - 1)
        skipped = stream.readline()
        start = start - 1 + len(skipped)
        if end is not None and start >= end:
            return result  # the range holds no line start: its line belongs to the range before
    limit = None if end is None else end - start
    carry, line_base = b"", 1
    for data, final in _chunks(stream, limit):
        data = carry + data
        cut = len(data) if final else data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        _collect(data, cut, _hits_in(data, cut, needles), line_base, result)
        newlines = data.count(b"\n", 0, cut)
        line_base += newlines
        result.lines += newlines + (1 if final and cut and data[cut - 1 : cut] != b"\n" else 0)
        result.bytes_read += cut
        carry = data[cut:]
    return result


def _chunks(stream: IO[bytes], limit: int | None) -> Iterable[tuple[bytes, bool]]:
    """Yield ``(chunk, is_last)``; past ``limit`` bytes, read only to the end of the open line."""
    remaining = limit
    while True:
        size = CHUNK if remaining is None else min(CHUNK, remaining)
        data = stream.read(size) if size > 0 else b""
        if remaining is not None:
            remaining -= len(data)
            if remaining <= 0:
                tail = b"" if data.endswith(b"\n") else stream.readline()
                yield data + tail, True
                return
        if not data:
            yield b"", True
            return
        yield data, False
