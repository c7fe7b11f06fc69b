"""Find candidate lines in raw bytes before any decoding.

Looking for one VM in a 1 GiB log, almost every line is irrelevant. ``bytes.find`` over large
chunks skips them at memory speed; only lines that contain a needle (plus the continuation lines
that follow them, such as stack frames) are handed to the full parser.

A scan covers the lines that *start* inside ``[start, end)`` of a stream, so a file can be split
into byte ranges scanned in parallel; :class:`ScanResult` carries the range's newline count so the
caller can turn range-relative line numbers into file line numbers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

from parsers.lines import MAX_LINE, read_line, skip_line

CHUNK = 512 << 10  # small enough that the find and count passes hit cache, not memory
EDGE = 16 << 20
MAX_FOLLOWERS = 200


@dataclass
class ScanResult:
    """Candidate lines of one range: ``(line_no relative to the range, 1-based; line bytes)``."""

    hits: list[tuple[int, bytes]] = field(default_factory=list)
    lines: int = 0
    bytes_read: int = 0
    # For :func:`combine`: the candidate still taking followers at the range's end (its last
    # line, lines taken), and the range's first lines, which may be those followers.
    open_end: tuple[bytes, int] | None = None
    leading: list[bytes] = field(default_factory=list)


def combine(parts: Sequence[ScanResult]) -> tuple[list[tuple[int, bytes]], int]:
    """The hits of consecutive ranges of one file, numbered from the file's first line, and its
    line count. A candidate that ends one range takes its followers from the next range's start,
    as a whole-file scan would."""
    hits: list[tuple[int, bytes]] = []
    base, open_end = 0, None
    for part in parts:
        carried, still_open = _followers_from(part, open_end, base)
        merged = dict(carried)
        merged.update((base + n, line) for n, line in part.hits)
        hits.extend(sorted(merged.items()))
        open_end = part.open_end or still_open
        base += part.lines
    return hits, base


def _followers_from(
    part: ScanResult, open_end: tuple[bytes, int] | None, base: int
) -> tuple[list[tuple[int, bytes]], tuple[bytes, int] | None]:
    """The followers ``open_end``'s candidate takes from ``part``'s start, and whether it is
    still open after them (they were every line of the range)."""
    if open_end is None:
        return [], None
    previous, taken = open_end
    out: list[tuple[int, bytes]] = []
    for index, line in enumerate(part.leading):
        if taken > MAX_FOLLOWERS or not _is_follower(line, previous):
            return out, None
        out.append((base + index + 1, line))
        previous, taken = line, taken + 1
    return out, ((previous, taken) if len(out) == part.lines else None)


def _leading(data: bytearray, end: int) -> list[bytes]:
    """The first line of ``data[:end]`` and the followers after it (at most MAX_FOLLOWERS)."""
    lines: list[bytes] = []
    at = 0
    while at < end and len(lines) <= MAX_FOLLOWERS:
        stop = data.find(b"\n", at, end)
        stop = end if stop == -1 else stop
        line = bytes(data[at:stop])
        if lines and not _is_follower(line, lines[-1]):
            break
        lines.append(line)
        at = stop + 1
    return lines


def _is_follower(line: bytes, previous: bytes) -> bool:
    """A line that belongs to the candidate before it: stack frames, klog ``key=<`` values, the
    rest of a CRI partial line."""
    if line[:1] in (b"\t", b" "):
        return True
    if line.startswith((b"goroutine ", b"panic: ", b"created by ")):
        return True
    head = previous[:64]
    return b" P " in head and head.split(b" ", 3)[2:3] == [b"P"]


def _hits_in(data: bytearray, end: int, needles: Sequence[bytes]) -> list[int]:
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


def _every_start(data: bytearray, end: int) -> list[int]:
    """Every line start in ``data[:end]``: a small stream is handed to the parser whole."""
    starts, at = [0], data.find(b"\n", 0, end)
    while at != -1 and at + 1 < end:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1, end)
    return starts


@dataclass(frozen=True)
class _Open:
    """A candidate that ended its chunk: its followers may go on in the next chunk."""

    previous: bytes  # the last line taken
    taken: int  # lines taken so far: the candidate and its followers


def _collect(
    data: bytearray, end: int, starts: list[int], base_line: int, out: ScanResult, pending: _Open
) -> _Open:
    """Append the hit lines and their followers, numbering them from ``base_line``; ``pending``
    is the previous chunk's open candidate, whose followers start this chunk."""
    counted_to, line_no = 0, base_line
    next_free, pending = _take_with_followers(data, end, 0, line_no, out, pending)
    for start in starts:
        if start < next_free:
            continue
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        next_free, pending = _take_with_followers(data, end, start, line_no, out, _Open(b"", 0))
    return pending


_CLOSED = _Open(b"", MAX_FOLLOWERS + 1)


def _take_with_followers(
    data: bytearray, end: int, start: int, line_no: int, out: ScanResult, open_: _Open
) -> tuple[int, _Open]:
    """Take the line at ``start`` (unless ``open_`` continues a candidate: then only followers)
    and its followers; returns where the next free line starts and what stays open."""
    previous, first = open_.previous, open_.taken
    for offset in range(first, MAX_FOLLOWERS + 1):
        stop = data.find(b"\n", start, end)
        stop = end if stop == -1 else stop
        line = bytes(data[start:stop])
        if offset and not _is_follower(line, previous):
            return start, _CLOSED
        out.hits.append((line_no + offset - first, line))
        previous, start = line, stop + 1
        if start >= end:
            return start, _Open(previous, offset + 1)
    return start, _CLOSED


def scan_range(
    stream: IO[bytes],
    needles: Sequence[bytes],
    start: int = 0,
    end: int | None = None,
    *,
    edge_needles: Sequence[bytes] = (),
    size: int | None = None,
    everything: bool = False,
    max_line: int = MAX_LINE,
) -> ScanResult:
    """Scan the lines starting in ``[start, end)`` of a seekable or sequential stream.

    ``edge_needles`` are searched only within :data:`EDGE` bytes of either end of a stream of
    known ``size`` (everywhere when the size is unknown): leader-election lines sit at the start
    and end of a container's log, and skipping the middle halves the cost of finding them.
    With ``everything`` every line is a candidate: what a needle cannot find, such as a line a
    terminal hard-wrapped with the name cut in two, still reaches the parser. A line longer than
    ``max_line`` is cut to its first ``max_line + 1`` bytes and is always a candidate: its tail
    is never searched, and the parser counts it ``too_long``.
    """
    result = ScanResult()
    if start:
        stream.seek(start - 1)
        start = start - 1 + skip_line(stream)
        if end is not None and start >= end:
            return result  # the range holds no line start: its line belongs to the range before
    reader = _Reader(stream, None if end is None else end - start, max_line)
    line_base, offset, pending = 1, start, _CLOSED
    for data, cut in reader.chunks():
        wanted = _needles_at(needles, edge_needles, offset, offset + cut, size)
        starts = _every_start(data, cut) if everything else _hits_in(data, cut, wanted)
        if reader.cut_starts and not everything:
            starts = sorted({*starts, *reader.cut_starts})  # damage is reported, needle or not
        if start and not result.lines:
            result.leading = _leading(data, cut)
        pending = _collect(data, cut, starts, line_base, result, pending)
        newlines = data.count(b"\n", 0, cut)
        line_base += newlines
        result.lines += newlines + (0 if data[cut - 1] == 10 else 1)
        read = cut + reader.dropped
        reader.dropped = 0
        result.bytes_read += read
        offset += read
    if pending.taken <= MAX_FOLLOWERS:
        result.open_end = (pending.previous, pending.taken)
    return result


class _Reader:
    """Whole lines from a stream, in one reused buffer (``readinto``: no per-chunk copies).

    With a ``limit``, reading stops at the end of the line that crosses it. A line longer than
    ``max_line`` keeps its first ``max_line + 1`` bytes and its newline; the bytes between are
    read and dropped, so the buffer never grows past ``max_line`` plus one chunk and every
    byte is looked at a bounded number of times, newline or not.
    """

    def __init__(self, stream: IO[bytes], limit: int | None, max_line: int) -> None:
        self.stream, self.remaining, self.max_line = stream, limit, max_line
        self.buf = bytearray(CHUNK * 2)
        self.keep = 0  # bytes of an unfinished line carried to the front of the buffer
        self.dropping = False  # the carried line is over the cap: drop bytes up to its newline
        self.dropped = 0  # bytes read and dropped since the last chunk was yielded
        self.cut_starts: set[int] = set()  # where over-long lines start in the yielded chunk

    def _read(self) -> int:
        want = CHUNK if self.remaining is None else min(CHUNK, self.remaining)
        if want <= 0:
            return 0
        if len(self.buf) < self.keep + want:
            self.buf.extend(bytes(self.keep + want - len(self.buf)))
        got = self.stream.readinto(memoryview(self.buf)[self.keep : self.keep + want]) or 0  # type: ignore[attr-defined]
        if self.remaining is not None:
            self.remaining -= got
        return got

    def chunks(self) -> Iterator[tuple[bytearray, int]]:
        """Yield ``(buffer, cut)``: ``buffer[:cut]`` holds whole lines (the last may lack a
        newline at the end of the stream or range)."""
        while True:
            got = self._read()
            total = self._drop(self.keep + got) if self.dropping else self.keep + got
            if got:
                total = self._trim_carried(total)
            if got and self.remaining is not None and self.remaining <= 0:
                total = self._finish_line(total)
                got = 0
            # the carried bytes hold no newline: search only what was just read
            cut = self.buf.rfind(b"\n", self.keep, total) + 1 if got else total
            if cut:
                yield self.buf, cut
                self.buf[: total - cut] = self.buf[cut:total]
                self.cut_starts = set()
            self.keep = total - cut
            if not got:
                return

    def _trim_carried(self, total: int) -> int:
        """Cut the line that starts the buffer to its head when it is over the cap; without its
        newline yet, drop what follows until it comes."""
        head = self.max_line + 1
        newline = self.buf.find(b"\n", self.keep, total)
        end = total if newline == -1 else newline
        if end > self.max_line:
            self.cut_starts.add(0)  # over the cap, so counted too_long: a candidate
        if end <= head:
            return total
        self.dropped += end - head
        if newline == -1:
            self.dropping = True
            return head
        del self.buf[head:newline]
        return total - (newline - head)

    def _drop(self, total: int) -> int:
        """Remove the bytes of an over-long line between its kept head and its newline."""
        newline = self.buf.find(b"\n", self.keep, total)
        if newline == -1:
            self.dropped += total - self.keep
            return self.keep
        self.dropped += newline - self.keep
        del self.buf[self.keep : newline]
        self.dropping = False
        return total - (newline - self.keep)

    def _finish_line(self, total: int) -> int:
        """Read the rest of the line crossing the range's end, keeping at most its head."""
        if not self.dropping and self.buf[total - 1] != 10:
            start = self.buf.rfind(b"\n", 0, total) + 1
            room = max(0, self.max_line + 1 - (total - start))
            tail, taken = (
                read_line(self.stream, room - 1) if room else (b"", skip_line(self.stream))
            )
            self.buf[total:total] = tail
            total += len(tail)
            self.dropped += taken - len(tail)
            if taken > len(tail):
                self.cut_starts.add(start)
        elif self.dropping:
            self.dropped += skip_line(self.stream)
        del self.buf[total:]
        return total


def _needles_at(
    needles: Sequence[bytes], edge: Sequence[bytes], lo: int, hi: int, size: int | None
) -> Sequence[bytes]:
    if not edge:
        return needles
    if size is None or lo < EDGE or hi > size - EDGE:
        return [*needles, *edge]
    return needles
