"""Split big logs into per-VM buckets of raw lines, so every bucket can be checked on its own.

``kvtrace check`` over a large log set must stay within memory and use every core. Phase one
(this module) reads each log once in byte ranges, in parallel, and appends every line, unparsed,
to the bucket of the VM it names (``crc32(namespace/name) % buckets``); leader-election lines go
to a shared file every bucket reads, lines naming no VM to an ``unrouted`` file that is only
counted. Continuation lines (stack frames) follow the line before them. Phase two
(:mod:`kvtrace.check.workers`) parses and checks one bucket per worker, so no process ever holds
more than its bucket's rows.

Bucket files hold ``<range id>\\t<line number in range>\\t<raw line>`` so each line keeps its
provenance: the range id gives the stream and the range's first line number.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kvtrace.evidence import LogStream
from kvtrace.timeline.log_rows import TEXT_KEY, text_key
from parsers.lines import read_line, skip_line

LEADER = "leader"
UNROUTED = "unrouted"
_LEADER_MARKS = (
    b"leaderelection",
    b"STARTING controllers",
    b"Starting VirtualMachine controller",
    b"Starting vmi controller",
)
_NAME = b'"name":"'
_NAMESPACE = b'"namespace":"'
_KEY_IN_MSG = re.compile(
    rb"(?:VirtualMachine|VirtualMachineInstance|vmi) ([^ /\"\\]+)/([^ \"\\]+)"
    # the VM controller's expectations lines, logged with no object (expectations.go:123-344
    # at v1.9.0): ``Controller ns/name (name: …``, or the key inside the printed struct
    rb"|Controller ([^ /\"\\]+)/([^ \"\\]+) "
    rb"|key:(?:\\?\")?([^ /\"\\]+)/([^ \"\\}]+)"
)
_TEXT_KEY = re.compile(TEXT_KEY.pattern.encode())
LAUNCHER = b"virt-launcher-"
RANGE_BYTES = 64 << 20
WRITE_BUFFER = 64 << 10  # per open bucket file: a range may write to hundreds of buckets


@dataclass(frozen=True)
class Range:
    """Lines starting in ``[start, end)`` of stream ``stream``."""

    id: int
    stream: int
    start: int
    end: int | None


def vm_key(line: bytes) -> bytes | None:
    """``namespace/name`` of the VM a raw line is about, from bytes alone (no decoding): the VM
    or VMI its text names (a migration line logged with its VMIM, a pool line with its pool,
    the node controller's line with the node: ``log_rows.TEXT_KEY``), else the object it is
    logged with."""
    named = _TEXT_KEY.search(line) if b"/" in line or b" in namespace " in line else None
    if named is not None:
        named_ns, named_vm = text_key(named)
        return named_ns + b"/" + named_vm
    name = _field(line, _NAME)
    namespace = _field(line, _NAMESPACE)
    if name and namespace:
        if name.startswith(LAUNCHER) and len(name) > len(LAUNCHER) + 6:
            name = name[len(LAUNCHER) : -6]  # virt-launcher-<vm>-<5 chars>
        return namespace + b"/" + name
    found = _KEY_IN_MSG.search(line)
    if found is None:
        return None
    namespace, name = (part for part in found.groups() if part is not None)
    return namespace + b"/" + name


def _field(line: bytes, marker: bytes) -> bytes | None:
    at = line.find(marker)
    if at < 0:
        return None
    start = at + len(marker)
    end = line.find(b'"', start)
    return line[start:end] if end > start else None


def bucket_of(key: bytes, buckets: int) -> int:
    return zlib.crc32(key) % buckets


def key_bucket(namespace: str, name: str, buckets: int) -> int:
    return bucket_of(f"{namespace}/{name}".encode(), buckets)


def _is_continuation(line: bytes) -> bool:
    return line[:1] in (b"\t", b" ") or line.startswith((b"goroutine ", b"panic: ", b"created by "))


class _Writers:
    """Append-only bucket files of one range (one file per bucket per range: no locking)."""

    def __init__(self, directory: Path, range_id: int) -> None:
        self.directory, self.range_id = directory, range_id
        self.files: dict[str, IO[bytes]] = {}

    def write(self, bucket: str, line_no: int, line: bytes) -> None:
        handle = self.files.get(bucket)
        if handle is None:
            path = self.directory / f"{bucket}.{self.range_id}"
            handle = self.files[bucket] = open(path, "wb", buffering=WRITE_BUFFER)  # noqa: SIM115
        handle.write(b"%d\t%d\t%s\n" % (self.range_id, line_no, line))

    def close(self) -> None:
        for handle in self.files.values():
            handle.close()


Aliases = dict[bytes, bytes]  # b"ns/object" → b"ns/vm": objects whose lines are a VM's


def split_range(
    stream: LogStream, part: Range, directory: str, buckets: int, aliases: Aliases | None = None
) -> int:
    """Phase one for one range: route every line; returns the number of lines in the range."""
    writers = _Writers(Path(directory), part.id)
    previous = UNROUTED
    count = 0
    try:
        with stream.open() as handle:
            for count, line in enumerate(_lines(handle, part), 1):
                previous = _route(line, previous, buckets, aliases or {})
                writers.write(previous, count, line)
    finally:
        writers.close()
    return count


def _route(line: bytes, previous: str, buckets: int, aliases: Aliases) -> str:
    if _is_continuation(line):
        return previous
    if any(mark in line for mark in _LEADER_MARKS):
        return LEADER
    key = vm_key(line)
    key = aliases.get(key, key) if key else key  # a restore's line goes with its VM's
    return str(bucket_of(key, buckets)) if key else UNROUTED


def _lines(handle: IO[bytes], part: Range) -> Iterator[bytes]:
    """The lines starting in the range, without their newline; an over-long line is its head
    (parsers.lines: read in bounded memory)."""
    if part.start:
        handle.seek(part.start - 1)
        skip_line(handle)
    position = handle.tell()
    while part.end is None or position < part.end:
        head, taken = read_line(handle)
        if not taken:
            return
        position += taken
        yield head.rstrip(b"\n")


def ranges(streams: Sequence[LogStream]) -> list[Range]:
    """Byte ranges of plain files (so big files split across workers); whole other streams."""
    out: list[Range] = []
    for index, stream in enumerate(streams):
        size = _size(stream)
        if size is None or size <= RANGE_BYTES:
            out.append(Range(len(out), index, 0, None))
            continue
        for start in range(0, size, RANGE_BYTES):
            out.append(Range(len(out), index, start, min(start + RANGE_BYTES, size)))
    return out


def _size(stream: LogStream) -> int | None:
    try:
        return stream.path.stat().st_size if stream.path else None
    except OSError:
        return None


# ``map`` over the workers: a function and its tasks in, results in task order out
Mapper = Callable[[Callable[[Any], Any], list[Any]], list[Any]]


def split_all(
    mapper: Mapper,
    streams: Sequence[LogStream],
    directory: str,
    buckets: int,
    aliases: Aliases | None = None,
) -> tuple[dict[int, int], dict[int, int]]:
    """Run phase one; returns how many lines come before each range in its stream, and how many
    lines each stream has."""
    parts = ranges(streams)
    tasks = [(streams[p.stream], p, directory, buckets, aliases) for p in parts]
    counts: list[int] = mapper(_split_task, tasks)
    first: dict[int, int] = {}
    seen: dict[int, int] = {}
    for part, count in zip(parts, counts, strict=True):
        first[part.id] = seen.get(part.stream, 0)
        seen[part.stream] = first[part.id] + count
    return first, seen


def _split_task(args: tuple[LogStream, Range, str, int, Aliases | None]) -> int:
    return split_range(*args)


def range_streams(streams: Sequence[LogStream]) -> dict[int, int]:
    """Range id → stream index, the same numbering :func:`split_all` used."""
    return {p.id: p.stream for p in ranges(streams)}


def bucket_files(directory: str, bucket: str) -> list[str]:
    return sorted(
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if name.split(".")[0] == bucket
    )
