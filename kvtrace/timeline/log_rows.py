"""Timeline rows from controller logs: parse the candidates, attribute them to the VM.

Attribution (docs/timeline.md, "Where rows come from"): by uid (VM, any VMI incarnation,
launcher pod), by namespace/name, by launcher pod name, and by the ``ns/name`` key inside
messages that carry no object (``re-enqueuing VirtualMachine ns/name`` at ``vm.go:348``,
``reenqueuing VirtualMachineInstance ns/name`` at ``vmi.go:288``, ``Dispatching delete event for
vmi ns/name`` at ``vm.go:1685``, all at v1.9.0), and by the VM or VMI named in the text of the
other controllers' lines (``_named_in_text``). Leader-election lines are kept as context for
every replica.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from pathlib import PurePath
from typing import AnyStr

from kvtrace.evidence import LogStream
from kvtrace.timeline import catalog
from kvtrace.timeline.callsites import CallSite
from kvtrace.timeline.callsites import catalog as callsite_catalog
from kvtrace.timeline.logscan import Needles, StreamScan, scan_streams
from kvtrace.timeline.rows import Provenance, TimelineRow
from kvtrace.timeline.vmscope import VMScope
from parsers.callsite import CallSiteLine
from parsers.logstream import LogParser
from parsers.records import DUPLICATE, RECORD, LineTally, LogRecord

# klog lease lines (leaderelection.go) and the stdlib line printed on becoming leader
LEADER_NEEDLES = (
    b"leaderelection",
    b"STARTING controllers",
    b"Starting VirtualMachine controller",
    b"Starting vmi controller",
)


@dataclass
class SourceReport:
    """What reading one log stream gave: scanned lines, candidates, outcomes, rows."""

    source_id: str
    pod: str | None
    container: str | None
    instance: str | None
    lines: int
    candidates: int
    rows: int = 0
    tally: LineTally = field(default_factory=LineTally)


@dataclass
class Attribution:
    """How a record is tied to the VM; ``vmi_uid`` when it names an incarnation."""

    via: str
    vmi_uid: str | None = None


def needles_for(scope: VMScope) -> Needles:
    """The VM name is in every line about it (uid lines carry the name too; keys and launcher
    pod names contain it); leader-election lines are looked for near each log's two ends."""
    return Needles((scope.name.encode(),), LEADER_NEEDLES)


def log_rows(
    streams: list[LogStream], scope: VMScope, anchor: datetime | None
) -> tuple[list[TimelineRow], list[SourceReport]]:
    ordered = sorted(streams, key=stream_order)
    rows: list[TimelineRow] = []
    reports: list[SourceReport] = []
    dedup = LineDedup()
    for scan in scan_streams(ordered, needles_for(scope)):
        report = _report(scan)
        for record in _parse(scan, anchor, report.tally):
            row = _row_for(record, scope, scan.stream)
            if row is None:
                continue
            if dedup.duplicate(record, scan.stream):
                report.tally[RECORD] -= 1
                report.tally[DUPLICATE] += 1
                continue
            rows.append(row)
            report.rows += 1
        reports.append(report)
    return dedup.named(rows), reports


def _report(scan: StreamScan) -> SourceReport:
    info = scan.stream.info
    return SourceReport(
        info.source_id, info.pod, info.container, info.instance, scan.lines, len(scan.hits)
    )


def _parse(scan: StreamScan, anchor: datetime | None, tally: LineTally) -> Iterator[LogRecord]:
    parser = LogParser(scan.stream.info, policy="skip", anchor=anchor)
    for line_no, line in scan.hits:
        yield from parser.feed(line_no, line)
    yield from parser.close()
    tally.update(parser.tally)


@dataclass
class LineDedup:
    """One line seen in two places is one line (docs/timeline.md, "Ordering"): the same log in
    two overlapping snapshots, given twice, or concatenated twice. A line is its microsecond
    timestamp, text, position, object and reason; two files whose lines coincide are one
    container's log, so a file that names no pod takes the name of the one it repeats."""

    seen: dict[tuple[object, ...], tuple[str, str | None]] = field(default_factory=dict)
    written: dict[tuple[object, ...], set[object]] = field(default_factory=dict)
    alias: dict[str, str] = field(default_factory=dict)

    def duplicate(self, record: LogRecord, stream: LogStream) -> bool:
        if record.time is None:
            return False
        key = (record.time, record.msg, record.pos, record.uid, record.reason, record.level)
        source, pod = source_name(record, stream), record.pod or stream.info.pod
        first = self.seen.get(key)
        if self._written_again(key, record.captured_at) or first is None:
            self.seen.setdefault(key, (source, pod))
            return False
        first_source, first_pod = first
        if pod and first_pod and pod != first_pod:
            return False  # two replicas printing the same line at the same µs: both happened
        if first_source != source and not pod:
            self.alias.setdefault(source, first_source)
        return True

    def _written_again(self, key: tuple[object, ...], written_at: object) -> bool:
        """One text printed twice in one µs (two log calls in a row): the kubelet stamped each
        write with its own nanosecond. With no prefix on either side the two cannot be told
        from one line given twice, and one line is the safe reading."""
        stamps = self.written.setdefault(key, set())
        again = bool(stamps) and written_at is not None and not stamps & {None, written_at}
        stamps.add(written_at)
        return again

    def named(self, rows: list[TimelineRow]) -> list[TimelineRow]:
        """The rows with every file that repeats another under that one's source name."""
        if not self.alias:
            return rows
        return [replace(r, source=self.alias.get(r.source, r.source)) for r in rows]


def stream_order(stream: LogStream) -> tuple[bool, str]:
    """Files that name their pod first, so a repeated line keeps the pod's name."""
    return stream.info.pod is None, stream.info.source_id


def attribute(record: LogRecord, scope: VMScope, matched: dict[str, str]) -> Attribution | None:
    uid = record.uid or None
    if uid and uid == scope.vm_uid:
        return Attribution("uid")
    if uid and uid in scope.vmi_uids:
        return Attribution("uid", uid)
    if uid and uid in {p.uid for p in scope.pods}:
        return Attribution("pod uid")
    if record.namespace == scope.namespace and record.name == scope.name:
        return Attribution("name", _vmi_uid_from_unknown(record, scope))
    if record.namespace == scope.namespace and _is_launcher_of(record.name, scope):
        return Attribution("pod name")
    if record.namespace == scope.namespace and record.name in scope.owned_names:
        return Attribution("snapshot or restore of the VM")
    key = matched.get("key")
    if key == f"{scope.namespace}/{scope.name}":
        return Attribution("key in message")
    if _named_in_text(record.msg, scope.namespace, scope.name, record.namespace):
        return Attribution("named in message")
    return None


_MENTIONS_VM = re.compile(r"(?i)\bvmis?\b|\bvms?\b|virtualmachine")
_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
# A VM or VMI named in a message's text: ``VM ns/name``, ``VMI [ns/name]``, ``vmi ns/name``,
# ``VirtualMachine ns/name``, ``vmi name in namespace ns`` (the formats of the node, pool,
# migration and VM controllers at v1.9.0); the same patterns route raw lines in ``check``.
TEXT_KEY = re.compile(
    rf"(?:\b(?i:vmis?|vms?)|VirtualMachine(?:Instance)?) \[?(?P<ns>{_NAME})/(?P<name>{_NAME})\b"
    rf"|\bvmi (?P<name2>{_NAME}) in namespace (?P<ns2>{_NAME})\b"
)


def keys_in_text(text: str) -> list[tuple[str, str]]:
    """``(namespace, name)`` of every VM or VMI the text names (:data:`TEXT_KEY`). Most lines
    name none: without a ``/`` or an ``in namespace`` no pattern can match (checked first, as
    ``check`` asks this of every line)."""
    if "/" not in text and " in namespace " not in text:
        return []
    return [text_key(found) for found in TEXT_KEY.finditer(text)]


def text_key(found: re.Match[AnyStr]) -> tuple[AnyStr, AnyStr]:
    """The ``(namespace, name)`` of one :data:`TEXT_KEY` match (either of its two forms)."""
    return (found["ns"], found["name"]) if found["ns"] else (found["ns2"], found["name2"])


def _named_in_text(text: str, namespace: str, name: str, logged_in: str | None = None) -> bool:
    """Lines of the other controllers name the VM or VMI only in their text, whatever object
    they are logged with: ``ns/name`` (``Proactive update of VM %s/%s by deleting outdated VMI``
    at pool.go:1636, ``Migration target pod for VMI [%s/%s] is currently unschedulable.`` at
    migration.go:1740) or name and namespace apart (``Moving vmi %s in namespace %s on
    unresponsive node to failed state`` at node.go:278, all at v1.9.0), or the name alone in a
    line logged with another object of the VM's namespace (a snapshot, restore or pool object).
    A name counts only as a whole token (``web`` is not ``web-2``); without its ``ns/`` only in a
    line that speaks of a VM or VMI. A name alone with no namespace anywhere (``Failed freezing
    vm %s: %v``, source.go:463, has no object) could be any namespace's VM: not attributed."""
    if name not in text:
        return False
    key, alone, space = _tokens(namespace, name)
    if key.search(text):
        return True
    if not (alone.search(text) and _MENTIONS_VM.search(text)):
        return False
    return logged_in == namespace or bool(space.search(text))


@lru_cache(maxsize=256)
def _tokens(namespace: str, name: str) -> tuple[re.Pattern[str], ...]:
    return tuple(
        re.compile(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])")
        for word in (f"{namespace}/{name}", name, namespace)
    )


def _vmi_uid_from_unknown(record: LogRecord, scope: VMScope) -> str | None:
    """A uid on a VMI-controller line that is not the VM's is a VMI incarnation."""
    pos_file = (record.pos or "").split(":", 1)[0]
    if record.uid and record.uid != scope.vm_uid and pos_file in {"vmi.go", "lifecycle.go"}:
        return record.uid
    return None


def _is_launcher_of(name: str | None, scope: VMScope) -> bool:
    if not name:
        return False
    return name in scope.pod_names or (
        name.startswith(f"virt-launcher-{scope.name}-")
        and (len(name) == len(f"virt-launcher-{scope.name}-") + 5)
    )


def _row_for(record: LogRecord, scope: VMScope, stream: LogStream) -> TimelineRow | None:
    found = catalog.match_record(record)
    entry, matched = found if found else (None, {})
    if entry and entry.category == "leader":
        return make_row(record, stream, entry, matched, None)
    attribution = attribute(record, scope, matched)
    if attribution is None:
        return None
    return make_row(record, stream, entry, matched, attribution.vmi_uid)


def category(record: LogRecord, entry: catalog.Message | None) -> str:
    """The message catalog's category; else ``failure`` for a line printed at error level or by
    a call site that tells of a failure at a lower one (``CallSite.reports_failure``), else
    ``log``."""
    if entry:
        return entry.category
    if record.level in ("error", "fatal"):
        return "failure"
    site = _site(record.pos, record.level, record.msg)
    return "failure" if site is not None and site.reports_failure else "log"


@lru_cache(maxsize=4096)
def _site(pos: str | None, level: str, msg: str) -> CallSite | None:
    file, _, line = (pos or "").rpartition(":")
    if not file or not line.isdigit():
        return None
    return callsite_catalog().site_of(CallSiteLine(file, int(line), level, msg, "json"))


def source_name(record: LogRecord, stream: LogStream) -> str:
    return _source_name(record.pod or stream.info.pod, stream.info.instance, stream.info.source_id)


@lru_cache(maxsize=1024)
def _source_name(pod: str | None, instance: str | None, source_id: str) -> str:
    if pod:
        return f"{pod} (previous)" if instance == "previous" else pod
    return PurePath(source_id).name or source_id


def make_row(
    record: LogRecord,
    stream: LogStream,
    entry: catalog.Message | None,
    matched: dict[str, str],
    vmi_uid: str | None,
) -> TimelineRow:
    return TimelineRow(
        time=record.time,
        origin="log",
        source=source_name(record, stream),
        category=category(record, entry),
        what=record.msg,
        evidence=Provenance("log", stream.info.source_id, line=record.line_no),
        incarnation=vmi_uid,
        pos=record.pos,
        level=record.level,
        reason=record.reason,
        message_id=entry.id if entry else None,
        args=tuple(sorted(matched.items())),
        subject=record.uid,
        subject_name=record.name,
    )
