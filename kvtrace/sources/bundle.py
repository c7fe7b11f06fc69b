"""Open offline evidence: a bundle (directory or archive) or plain log files.

``open_bundle`` sniffs the layout, in this order: kvtrace's own bundle (``manifest.json`` of kind
BundleManifest), KubeVirt must-gather roots (``version`` file), ``--vm-incident`` roots
(``incident-summary.yaml``), ``kubectl cluster-info dump``, a plain ``oc adm inspect`` tree, and
finally a plain directory whose files are sniffed one by one. Archives are extracted into a
private temp directory that exists exactly as long as the context.
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
from kvtrace.sources.layouts import cluster_dump, kvtrace_bundle, mustgather, plain, vm_incident
from kvtrace.sources.object_filter import ObjectFilter
from kvtrace.sources.safety import (
    Limits,
    probe_readable,
    spool,
    spool_file,
    temp_space,
    unreadable,
)
from kvtrace.sources.tarball import open_tree
from kvtrace.sources.walk import BundleTree
from parsers.paths import source_from_path
from parsers.records import SourceInfo

STDIN = "-"
VMKey = tuple[str, str]
NO_OBJECTS = "no objects: VM/VMI/pods/events come only from a bundle or a live cluster"


@contextmanager
def open_bundle(
    path: Path, limits: Limits | None = None, only: VMKey | None = None
) -> Iterator[Evidence]:
    """The evidence in a bundle directory, archive (tar, tar.gz, …) or single file.

    ``only`` (namespace, name): decode only the objects that VM's timeline can use
    (:mod:`kvtrace.sources.object_filter`); its timeline is the same, other VMs are absent."""
    path = Path(path)
    if not path.exists():
        raise InputError(
            f"{path}: no such file or directory; pass a must-gather directory or archive, "
            "a kvtrace bundle, or log files with --log"
        )
    limits = limits or Limits.from_env()
    with open_tree(path, limits) as tree:
        yield read_tree(tree, limits, ObjectFilter.for_vm(*only) if only else None)


def read_tree(tree: BundleTree, limits: Limits, only: ObjectFilter | None = None) -> Evidence:
    """Sniff the layout of ``tree`` (in the order of the module docstring) and read it with that
    layout's rules."""
    builder = EvidenceBuilder(tree, limits, only)
    own = kvtrace_bundle.find_manifest(tree)
    if own is not None:
        return kvtrace_bundle.read_kvtrace_bundle(builder, *own)
    gather_roots = _outermost(mustgather.find_roots(tree))
    incident_roots = _outermost(vm_incident.find_roots(tree))
    if incident_roots and set(gather_roots) <= set(incident_roots):
        return vm_incident.read_vm_incident(builder, incident_roots)
    if gather_roots:
        return mustgather.read_must_gather(builder, _outermost(gather_roots + incident_roots))
    dump_root = cluster_dump.find_root(tree)
    if dump_root is not None:
        return cluster_dump.read_cluster_dump(builder, dump_root)
    inspect_roots = _outermost(mustgather.find_inspect_roots(tree))
    if inspect_roots:
        return mustgather.read_inspect(builder, inspect_roots)
    return plain.read_plain(builder)


def _outermost(roots: list[str]) -> list[str]:
    """Roots without an ancestor in the list, so no file is read twice."""
    unique = sorted(set(roots))
    return [r for r in unique if not any(_is_ancestor(other, r) for other in unique if other != r)]


def _is_ancestor(ancestor: str, path: str) -> bool:
    return ancestor == "" or path.startswith(f"{ancestor}/")


@contextmanager
def open_logs(
    paths: list[str], limits: Limits | None = None, stdin: IO[bytes] | None = None
) -> Iterator[Evidence]:
    """One log stream per file (``-`` is stdin; gzip etc. read transparently)."""
    limits = limits or Limits.from_env()
    _check_log_paths(paths)
    with temp_space() as scratch:
        tree = BundleTree(root=scratch, origin=", ".join(paths), files=[])
        builder = EvidenceBuilder(tree, limits)
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
        builder.add_log("stdin", SourceInfo("stdin"), prefixed=None, path=spooled)
        return
    path = Path(given)
    if path.stat().st_size == 0:  # empty, or a /proc file that does not know its size
        path = _spool_sizeless(path, copy, limits)
    builder.add_log(given, source_from_path(given), prefixed=None, path=path)


def _spool_sizeless(path: Path, dest: Path, limits: Limits) -> Path:
    """A copy in temp space, read through the log cap, so the stream has a real size."""
    try:
        return spool_file(path, dest, limits.max_log_bytes)
    except OSError as exc:
        raise unreadable(str(path), exc) from None
