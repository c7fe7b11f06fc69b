"""Log-store exports (Loki, OpenShift Logging, Elasticsearch/OpenSearch, Vector, OTLP) read as a
bundle's container logs.

An export mixes every pod's lines; its envelope names the pod, container and namespace of each
(:mod:`parsers.envelopes`). Each export is split into one stream per pod, container and restart,
written to temp space with the collector's time as the kubelet's ``--timestamps`` prefix and in
time order (``logcli`` prints newest first, a search returns hits in any order), so the line
de-duplication, the current/previous naming and the leader attribution read them exactly as they
read a bundle's ``logs/<ns>/<pod>/<container>/*.log``. Lines whose envelope names no pod form one
stream of the export, attributed as a ``--log`` file is, and are reported.
"""

from __future__ import annotations

import shutil
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson

from kvtrace.errors import InputError
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.safety import DECODE_ERRORS, open_capped, read_capped
from parsers.envelopes import STRUCTURE, EnvelopeLine, read_document, read_lines
from parsers.lines import bounded_lines
from parsers.records import SourceInfo
from parsers.timestamps import parse_time

FREE_SHARE = 0.9  # as for archives: the machine keeps a tenth of its temp space
MAX_RECORD = 64 << 20  # one NDJSON record (an OTLP request of many lines) is read up to this
_FLUSH_BYTES = 1 << 20
# namespace, pod, container, restart count, container id
StreamKey = tuple[str | None, str | None, str | None, int | None, str | None]


@dataclass
class _Stream:
    """One pod/container/restart of an export, written as a kubelet-prefixed log."""

    path: Path
    pending: list[str] = field(default_factory=list)
    pending_bytes: int = 0
    entries: array[int] = field(default_factory=lambda: array("I"))  # physical lines of each
    timed: int = 0
    first: str | None = None
    last: str | None = None
    in_order: bool = True

    def add(self, entry: EnvelopeLine) -> None:
        lines = entry.text.rstrip("\r\n").split("\n")
        prefix = f"{entry.time} " if entry.time else ""
        for line in lines:
            self.pending.append(f"{prefix}{line.rstrip(chr(13))}\n")
            self.pending_bytes += len(line) + len(prefix) + 1
        self.entries.append(len(lines))
        self._order(entry.time)
        if self.pending_bytes > _FLUSH_BYTES:
            self.flush()

    def _order(self, time: str | None) -> None:
        if time is None:
            return
        self.timed += 1
        key = time_key(time)
        self.first = key if self.first is None else min(key, self.first)
        if self.last is not None and key < self.last:
            self.in_order = False
        self.last = max(key, self.last or key)

    def flush(self) -> None:
        with self.path.open("a", encoding="utf-8", errors="surrogateescape") as handle:
            handle.writelines(self.pending)
        self.pending, self.pending_bytes = [], 0

    def finish(self) -> None:
        self.flush()
        if not self.in_order:
            _sort_by_time(self.path, self.entries)


def _sort_by_time(path: Path, entries: array[int]) -> None:
    """Rewrite the stream in time order, each entry's lines kept together (a stable sort: lines
    of one instant keep the export's order)."""
    lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True)
    groups, at = [], 0
    for count in entries:
        groups.append(lines[at : at + count])
        at += count
    groups.sort(key=_group_time)
    with path.open("w", encoding="utf-8", errors="surrogateescape") as handle:
        for group in groups:
            handle.writelines(group)


def _group_time(group: list[str]) -> str:
    return time_key(group[0].split(" ", 1)[0]) if group else ""


def time_key(time: str) -> str:
    """A string that sorts as the instant does: ``YYYY-MM-DDThh:mm:ss.nnnnnnnnn`` in UTC. The
    common form (``…Z``) is cut and padded without parsing; others go through the parser."""
    if len(time) >= 20 and time[-1] == "Z" and time[19] in ".Z" and time[10] == "T":
        fraction = time[20:-1] if time[19] == "." else ""
        return f"{time[:19]}.{fraction:0<9}"
    stamp = parse_time(time)
    if stamp is None:
        return ""
    return f"{stamp.at:%Y-%m-%dT%H:%M:%S}.{stamp.at.microsecond:06d}000"


def add_export(builder: EvidenceBuilder, relative: str, path: Path | None = None) -> None:
    """Register the streams of the export at ``relative`` (``path`` for a ``--log`` file); its
    skipped records are reported by reason, lines naming no pod as one unnamed stream."""
    path = path or builder.path(relative)
    if builder.spool is None:
        builder.skip(relative, "a log-store export, but no temp space to split it: not read")
        return
    directory = builder.spool.new_dir()
    no_room = _no_room(path, directory)
    if no_room is not None:
        builder.skip(relative, no_room)
        return
    skips: Counter[str] = Counter()
    streams: dict[StreamKey, _Stream] = {}
    try:
        for entry in _entries(builder, relative, path, skips):
            instance_id = None if entry.restart is not None else entry.container_id
            key = (entry.namespace, entry.pod, entry.container, entry.restart, instance_id)
            if key not in streams:
                streams[key] = _Stream(directory / f"{len(streams):05d}.log")
            streams[key].add(entry)
    except (*DECODE_ERRORS, InputError) as exc:
        builder.skip(
            relative,
            f"unreadable after {sum(len(s.entries) for s in streams.values())} "
            f"record(s): {getattr(exc, 'strerror', None) or exc}",
        )
    for stream in streams.values():
        stream.finish()
    _register(builder, relative, streams)
    for reason, count in sorted(skips.items()):
        if reason not in STRUCTURE:
            builder.skip(relative, f"{count} record(s) of this log-store export skipped: {reason}")


def _no_room(path: Path, directory: Path) -> str | None:
    """The split copy is at most about the export's size (the envelopes go, a stamp stays); one
    that would fill more than 90% of the temp directory's free space is refused before writing
    (a compressed export is judged by its compressed size: its copy is capped by the log cap)."""
    try:
        size, free = path.stat().st_size, shutil.disk_usage(directory).free
    except OSError:
        return None
    if size <= free * FREE_SHARE:
        return None
    return (
        f"a log-store export of {size} bytes, and {free} bytes free in the temp directory: not "
        "split; point TMPDIR at a larger disk"
    )


def _entries(
    builder: EvidenceBuilder, relative: str, path: Path, skips: Counter[str]
) -> Iterator[EnvelopeLine]:
    """NDJSON or Loki text line by line; a pretty-printed search response or OTLP request whole
    (through the member cap)."""
    if _is_document(builder, path, relative):
        data = read_capped(path, builder.limits.max_member_bytes, relative)
        yield from read_document(data, skips)
        return
    with open_capped(path, builder.limits.max_log_bytes, relative) as stream:
        yield from read_lines(bounded_lines(stream, MAX_RECORD), skips)


def _is_document(builder: EvidenceBuilder, path: Path, relative: str) -> bool:
    """True when the first non-blank line is not a JSON value on its own."""
    with open_capped(path, builder.limits.max_log_bytes, relative) as stream:
        first = _first_line(stream)
    if not first.startswith(b"{") and not first.startswith(b"["):
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return True
    return first.startswith(b"[")


def _first_line(stream: IO[bytes]) -> bytes:
    for line in bounded_lines(stream, MAX_RECORD):
        if line.strip():
            return line.strip().lstrip(b"\xef\xbb\xbf")
    return b""


def _register(builder: EvidenceBuilder, relative: str, streams: dict[StreamKey, _Stream]) -> None:
    instances = _instances(streams)
    unsaid = 0
    for key, stream in sorted(streams.items(), key=lambda kv: _sort_key(kv[0])):
        namespace, pod, container = key[:3]
        info = SourceInfo(_source_id(relative, key), pod, namespace, container, instances[key])
        prefixed = True if stream.timed == len(stream.entries) else None
        builder.add_log(info.source_id, info, prefixed, path=stream.path)
        if pod is not None and key[3] is None and key[4] is None and instances[key] is None:
            unsaid += 1
        if pod is None:
            builder.missing.append(
                f"{relative}: {len(stream.entries)} line(s) whose envelope names no pod, read as "
                "one source of unknown pod (as a --log file is): export with the pod label"
            )
    if unsaid:
        builder.missing.append(
            f"{relative}: its envelope numbers no restart and names no container id, so each of "
            f"{unsaid} container(s) is one stream across its restarts (no previous instance told "
            "apart): export the file name or container id label too"
        )


def _instances(streams: dict[StreamKey, _Stream]) -> dict[StreamKey, str | None]:
    """``current`` and ``previous`` per container, as the kubelet's files say: the last restart
    is current (the ``<n>.log`` numbering); with container ids only, the instance whose lines
    begin last is current. One instance of unknown number is not named."""
    containers: dict[tuple[str | None, ...], list[StreamKey]] = {}
    for key in streams:
        containers.setdefault(key[:3], []).append(key)
    named: dict[StreamKey, str | None] = {}
    for keys in containers.values():
        order = _newest_last(keys, streams)
        for key in keys:
            if key not in order or (len(order) < 2 and key[3] is None):
                named[key] = None  # its instance is not said, or it is the only one seen
            else:
                named[key] = "current" if key == order[-1] else "previous"
    return named


def _newest_last(keys: list[StreamKey], streams: dict[StreamKey, _Stream]) -> list[StreamKey]:
    numbered = [key for key in keys if key[3] is not None]
    if numbered:
        return sorted(numbered, key=lambda key: key[3] or 0)
    identified = [key for key in keys if key[4] is not None]
    return sorted(identified, key=lambda key: streams[key].first or "")


def _source_id(relative: str, key: StreamKey) -> str:
    namespace, pod, container, restart, instance_id = key
    if pod is None:
        return relative
    names = "/".join(part or "?" for part in (namespace, pod, container))
    if restart is not None:
        names += f" restart {restart}"
    elif instance_id is not None:
        names += f" container {instance_id.rsplit('/', 1)[-1][:12]}"
    return f"{relative} [{names}]"


def _sort_key(key: StreamKey) -> tuple[str, str, str, int, str]:
    namespace, pod, container, restart, instance_id = key
    restart_order = -1 if restart is None else restart
    return namespace or "", pod or "", container or "", restart_order, instance_id or ""
