"""Find one VM's candidate lines in every log stream, in parallel where it pays.

A plain file larger than :data:`PARALLEL_MIN` is split into byte ranges scanned by worker
processes (one per core); compressed files and stdin are scanned sequentially. Either way only
raw-byte candidates reach the parser (see :mod:`parsers.scan`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kvtrace.evidence import LogStream
from parsers.scan import ScanResult, combine, scan_range

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

PARALLEL_MIN = 64 << 20
# Plain files up to this size are parsed whole: pasted excerpts, where a terminal may have
# hard-wrapped a JSON line and cut the VM's name in two, cost little to read line by line.
WHOLE_MAX = 4 << 20


@dataclass
class StreamScan:
    """Candidate lines of one stream with file line numbers, and how much was scanned."""

    stream: LogStream
    hits: list[tuple[int, bytes]]
    lines: int
    bytes_read: int


@dataclass(frozen=True)
class Needles:
    """What to look for: ``everywhere`` in the whole stream, ``edges`` near its two ends."""

    everywhere: tuple[bytes, ...]
    edges: tuple[bytes, ...] = ()


def _scan_file_range(path: str, needles: Needles, start: int, end: int, size: int) -> ScanResult:
    with open(path, "rb") as handle:
        return scan_range(
            handle, needles.everywhere, start, end, edge_needles=needles.edges, size=size
        )


def _ranges(size: int, parts: int) -> list[tuple[int, int]]:
    step = -(-size // parts)
    return [(i, min(i + step, size)) for i in range(0, size, step)] or [(0, 0)]


def _workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def _splittable(stream: LogStream) -> Path | None:
    path = stream.path
    if path is None or _workers() < 2:
        return None
    try:
        return path if path.stat().st_size >= PARALLEL_MIN else None
    except OSError:
        return None


def scan_streams(streams: Sequence[LogStream], needles: Needles) -> Iterator[StreamScan]:
    """Scan every stream for ``needles``; results come in the order of ``streams``."""
    big = {i: p for i, s in enumerate(streams) if (p := _splittable(s)) is not None}
    if not big:
        yield from (_scan_sequential(s, needles) for s in streams)
        return
    # a pool only for big files: multiprocessing and concurrent.futures (which imports logging)
    # cost a small log's timeline about 20 ms of start-up
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=_workers(), mp_context=context) as pool:
        pending = {i: _submit_ranges(pool, p, needles) for i, p in big.items()}
        for i, stream in enumerate(streams):
            if i in pending:
                yield _combine(stream, [f.result() for f in pending[i]])
            else:
                yield _scan_sequential(stream, needles)


def _submit_ranges(pool: Executor, path: Path, needles: Needles) -> list[Future[ScanResult]]:
    size = path.stat().st_size
    return [
        pool.submit(_scan_file_range, str(path), needles, start, end, size)
        for start, end in _ranges(size, _workers() * 2)
    ]


def _combine(stream: LogStream, parts: list[ScanResult]) -> StreamScan:
    hits, lines = combine(parts)
    return StreamScan(stream, hits, lines, sum(p.bytes_read for p in parts))


def _scan_sequential(stream: LogStream, needles: Needles) -> StreamScan:
    size = stream.path.stat().st_size if stream.path else None
    whole = size is not None and size <= WHOLE_MAX
    with stream.open() as handle:
        result = scan_range(
            handle, needles.everywhere, edge_needles=needles.edges, size=size, everything=whole
        )
    return StreamScan(stream, result.hits, result.lines, result.bytes_read)
