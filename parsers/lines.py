"""Physical lines from a byte stream, in memory bounded by the line cap.

``for line in stream`` (``readline()`` without a size) holds a whole line in memory however long
it is: a crash-truncated log of 300 MiB of NUL bytes without a newline, or one 500 MB line, was
read whole. Here a line longer than ``max_line`` bytes keeps its head of ``max_line + 1`` bytes
(so the parser sees it is over the cap and counts it ``too_long``); the rest is read in
:data:`SKIP_CHUNK` pieces and dropped while looking for its newline. Time is linear in the input,
memory is ``max_line`` plus one piece.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

MAX_LINE = 1 << 20  # bytes of one physical line that are parsed; the rest is counted, not read
SKIP_CHUNK = 256 << 10


def read_line(stream: IO[bytes], max_line: int = MAX_LINE) -> tuple[bytes, int]:
    """The next line's head (at most ``max_line + 1`` bytes, with its newline if it fits) and
    how many bytes of the stream the whole line took; ``(b"", 0)`` at the end."""
    head = stream.readline(max_line + 1)
    if len(head) <= max_line or head.endswith(b"\n"):
        return head, len(head)
    return head, len(head) + skip_line(stream)


def skip_line(stream: IO[bytes]) -> int:
    """Read past the next newline (or to the end) in bounded pieces; returns the bytes read."""
    skipped = 0
    while piece := stream.readline(SKIP_CHUNK):
        skipped += len(piece)
        if piece.endswith(b"\n"):
            break
    return skipped


def bounded_lines(stream: IO[bytes], max_line: int = MAX_LINE) -> Iterator[bytes]:
    """Every line of ``stream``, an over-long one cut to its head (see :func:`read_line`)."""
    while True:
        head, taken = read_line(stream, max_line)
        if not taken:
            return
        yield head
