"""Log files given with ``--log`` (``-`` is stdin): one stream each, read like a bundle's logs.

A file must be a regular, readable file (a FIFO or a device is an error naming it, never a hang);
stdin and files that report no size are first copied into temp space through the log cap.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from kvtrace.errors import InputError
from kvtrace.evidence import Evidence
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.layouts.plain import BINARY, SKIP_REASONS, SNIFF_BYTES, looks_binary
from kvtrace.sources.logstores import add_export
from kvtrace.sources.safety import (
    DECODE_ERRORS,
    Limits,
    open_capped,
    probe_readable,
    spool,
    spool_file,
    temp_space,
    unreadable,
)
from kvtrace.sources.spool import spool_space
from kvtrace.sources.walk import BundleTree
from parsers.envelopes import sniff_envelope
from parsers.paths import source_from_path
from parsers.records import SourceInfo

STDIN = "-"
NO_OBJECTS = "no objects: VM/VMI/pods/events come only from a bundle or a live cluster"
BINARY_REASON = SKIP_REASONS[BINARY]


@contextmanager
def open_logs(
    paths: list[str], limits: Limits | None = None, stdin: IO[bytes] | None = None
) -> Iterator[Evidence]:
    """One log stream per file (``-`` is stdin; gzip etc. read transparently)."""
    limits = limits or Limits.from_env()
    _check_log_paths(paths)
    with temp_space() as scratch, spool_space() as exports:
        tree = BundleTree(root=scratch, origin=", ".join(paths), files=[])
        builder = EvidenceBuilder(tree, limits, spool=exports)
        for index, given in enumerate(paths):
            _add_log_file(builder, given, scratch / f"log-{index}", limits, stdin)
        builder.missing.append(NO_OBJECTS)
        yield builder.build("logs", "low")


def _check_log_paths(paths: list[str]) -> None:
    if not paths:
        raise InputError("no log files given; pass --log FILE (or --log - for stdin)")
    if paths.count(STDIN) > 1:
        raise InputError("stdin ('-') given more than once; pass --log - only once")
    for given in paths:
        if given != STDIN:
            _check_log_file(given)


def _check_log_file(given: str) -> None:
    """A ``--log`` path must be a regular file kvtrace can read: anything else is an
    :class:`InputError` naming it, never a hang (FIFO, ``/dev/zero``) or a traceback."""
    try:
        mode = os.stat(given).st_mode
    except FileNotFoundError:
        raise InputError(f"{given}: no such log file; check the path given to --log") from None
    except OSError as exc:
        raise unreadable(given, exc) from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{given}: is a directory; pass it with --bundle instead of --log")
    if not stat.S_ISREG(mode):
        raise InputError(
            f"{given}: is a {_special_kind(mode)}, not a regular file; --log reads files: "
            f"pipe it in with --log - (… --log - < {given}) or save it to a file first"
        )
    try:
        probe_readable(Path(given))
    except OSError as exc:
        raise unreadable(given, exc) from None


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "socket" if stat.S_ISSOCK(mode) else "special file"


def _add_log_file(
    builder: EvidenceBuilder, given: str, copy: Path, limits: Limits, stdin: IO[bytes] | None
) -> None:
    """Register one ``--log``; stdin and files that report no size are first copied to ``copy``
    in temp space."""
    if given == STDIN:
        stream = stdin if stdin is not None else sys.stdin.buffer
        spooled = spool(stream, copy, limits.max_log_bytes, "stdin")
        _add_sniffed(builder, "stdin", SourceInfo("stdin"), spooled)
        return
    path = Path(given)
    if path.stat().st_size == 0:  # empty, or a /proc file that does not know its size
        path = _spool_sizeless(path, copy, limits)
    _add_sniffed(builder, given, source_from_path(given), path)


def _add_sniffed(builder: EvidenceBuilder, given: str, info: SourceInfo, path: Path) -> None:
    """A binary file is a reported skip, never a log source; a log-store export is split into
    its pods' streams (:mod:`kvtrace.sources.logstores`); anything else is one log."""
    head = _head(builder, path, given)
    if head is None:
        return
    if looks_binary(head):
        builder.skip(given, f"{BINARY_REASON}; --log reads text logs")
    elif sniff_envelope(head) is not None:
        add_export(builder, given, path)
    else:
        builder.add_log(given, info, prefixed=None, path=path)


def _head(builder: EvidenceBuilder, path: Path, name: str) -> bytes | None:
    """The first bytes (decompressed), or None with the reason in ``skipped``."""
    try:
        with open_capped(path, builder.limits.max_log_bytes, name) as stream:
            return stream.read(SNIFF_BYTES)
    except (*DECODE_ERRORS, InputError) as exc:
        builder.skip(name, f"unreadable: {getattr(exc, 'strerror', None) or exc}")
    return None


def _spool_sizeless(path: Path, dest: Path, limits: Limits) -> Path:
    """A copy in temp space, read through the log cap, so the stream has a real size."""
    try:
        return spool_file(path, dest, limits.max_log_bytes)
    except OSError as exc:
        raise unreadable(str(path), exc) from None
