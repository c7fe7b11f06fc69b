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
    dedup, ids = LineDedup(), ScopeIds.of(scope)
    for scan in scan_streams(ordered, needles_for(scope)):
        report = _report(scan)
        for record in _parse(scan, anchor, report.tally):
            row = _row_for(record, ids, scan.stream)
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

    # a line's key -> the record's pod, stream and kubelet stamp where it was first seen
    seen: dict[tuple[object, ...], tuple[str | None, LogStream, object]] = field(
        default_factory=dict
    )
    # the kubelet stamps of a line seen more than once
    written: dict[tuple[object, ...], set[object]] = field(default_factory=dict)
    alias: dict[str, str] = field(default_factory=dict)

    def duplicate(self, record: LogRecord, stream: LogStream) -> bool:
        time = record.time
        if time is None:
            return False
        key = (  # the Timestamp's fields rather than the Timestamp: they hash in C
            time.at,
            time.resolution_us,
            time.flags,
            record.msg,
            record.pos,
            record.uid,
            record.reason,
            record.level,
        )
        first = self.seen.get(key)
        if first is None:  # most lines: seen once (their source is named only if seen again)
            self.seen[key] = (record.pod, stream, record.captured_at)
            return False
        first_pod, first_stream, first_stamp = first
        if self._written_again(key, first_stamp, record.captured_at):
            return False
        pod, first_pod = record.pod or stream.info.pod, first_pod or first_stream.info.pod
        if pod and first_pod and pod != first_pod:
            return False  # two replicas printing the same line at the same µs: both happened
        source, first_source = source_name(record, stream), _name_of(first_pod, first_stream)
        if first_source != source and not pod:
            self.alias.setdefault(source, first_source)
        return True

    def _written_again(self, key: tuple[object, ...], first: object, written_at: object) -> bool:
        """One text printed twice in one µs (two log calls in a row): the kubelet stamped each
        write with its own nanosecond. With no prefix on either side the two cannot be told
        from one line given twice, and one line is the safe reading."""
        stamps = self.written.get(key)
        if stamps is None:
            stamps = self.written[key] = {first}
        again = written_at is not None and not stamps & {None, written_at}
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


@dataclass(frozen=True, slots=True)
class ScopeIds:
    """What lines are attributed to a scope by, computed once per scope (not once per line)."""

    namespace: str
    name: str
    key: str  # ``ns/name``
    vm_uid: str | None
    vmi_uids: frozenset[str]
    pod_uids: frozenset[str | None]
    pod_names: frozenset[str]
    owned_names: frozenset[str]
    launcher_prefix: str  # ``virt-launcher-<name>-``: the generated names of its launcher pods

    @classmethod
    def of(cls, scope: VMScope) -> ScopeIds:
        return cls(
            scope.namespace,
            scope.name,
            f"{scope.namespace}/{scope.name}",
            scope.vm_uid,
            frozenset(scope.vmi_uids),
            frozenset(p.uid for p in scope.pods),
            frozenset(scope.pod_names),
            frozenset(scope.owned_names),
            f"virt-launcher-{scope.name}-",
        )


_BY_UID, _BY_POD_UID, _BY_NAME = Attribution("uid"), Attribution("pod uid"), Attribution("name")
_BY_POD_NAME, _BY_OWNED = Attribution("pod name"), Attribution("snapshot or restore of the VM")
_BY_KEY, _BY_TEXT = Attribution("key in message"), Attribution("named in message")


def attribute(record: LogRecord, scope: VMScope, matched: dict[str, str]) -> Attribution | None:
    """How ``record`` is tied to ``scope``, or None when it is not its VM's line."""
    return attribute_to(record, ScopeIds.of(scope), matched)


def attribute_to(record: LogRecord, ids: ScopeIds, matched: dict[str, str]) -> Attribution | None:
    """:func:`attribute` with the scope's identifiers computed once."""
    uid = record.uid
    if uid:
        if uid == ids.vm_uid:
            return _BY_UID
        if uid in ids.vmi_uids:
            return Attribution("uid", uid)
        if uid in ids.pod_uids:
            return _BY_POD_UID
    if record.namespace == ids.namespace:
        name = record.name
        if name == ids.name:
            vmi_uid = _vmi_uid_from_unknown(record, ids.vm_uid)
            return _BY_NAME if vmi_uid is None else Attribution("name", vmi_uid)
        if _is_launcher_of(name, ids):
            return _BY_POD_NAME
        if name in ids.owned_names:
            return _BY_OWNED
    if matched and matched.get("key") == ids.key:
        return _BY_KEY
    if _named_in_text(record.msg, ids.namespace, ids.name, record.namespace):
        return _BY_TEXT
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


def keys_in_text(text: str) -> tuple[tuple[str, str], ...]:
    """``(namespace, name)`` of every VM or VMI the text names (:data:`TEXT_KEY`). Most lines
    name none: without a ``/`` or an ``in namespace`` no pattern can match (checked first, as
    ``check`` asks this of every line); the others repeat (a requeue per failed reconcile)."""
    if "/" not in text and " in namespace " not in text:
        return ()
    return _keys_in_text(text)


@lru_cache(maxsize=4096)
def _keys_in_text(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(text_key(found) for found in TEXT_KEY.finditer(text))


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


def _vmi_uid_from_unknown(record: LogRecord, vm_uid: str | None) -> str | None:
    """A uid on a VMI-controller line that is not the VM's is a VMI incarnation."""
    uid = record.uid
    if not uid or uid == vm_uid:
        return None
    return uid if (record.pos or "").split(":", 1)[0] in {"vmi.go", "lifecycle.go"} else None


def _is_launcher_of(name: str | None, ids: ScopeIds) -> bool:
    if not name:
        return False
    return name in ids.pod_names or (
        name.startswith(ids.launcher_prefix) and len(name) == len(ids.launcher_prefix) + 5
    )


def _row_for(record: LogRecord, ids: ScopeIds, stream: LogStream) -> TimelineRow | None:
    found = catalog.match_record(record)
    entry, matched = found if found else (None, {})
    if entry and entry.category == "leader":
        return make_row(record, stream, entry, matched, None)
    attribution = attribute_to(record, ids, matched)
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
    if not _may_report_failure(record.pos, record.level):
        return "log"  # most lines: no call site at their pos tells of a failure, whatever the text
    site = _site(record.pos, record.level, record.msg)
    return "failure" if site is not None and site.reports_failure else "log"


@lru_cache(maxsize=1024)
def _may_report_failure(pos: str | None, level: str) -> bool:
    file, _, line = (pos or "").rpartition(":")
    if not file or not line.isdigit():
        return False
    return callsite_catalog().may_report_failure(file, int(line), level)


@lru_cache(maxsize=4096)
def _site(pos: str | None, level: str, msg: str) -> CallSite | None:
    file, _, line = (pos or "").rpartition(":")
    if not file or not line.isdigit():
        return None
    return callsite_catalog().site_of(CallSiteLine(file, int(line), level, msg, "json"))


def source_name(record: LogRecord, stream: LogStream) -> str:
    return _name_of(record.pod or stream.info.pod, stream)


def _name_of(pod: str | None, stream: LogStream) -> str:
    """The source name of a line of ``stream`` printed by ``pod`` (the record's or the stream's)."""
    return _source_name(pod, stream.info.instance, stream.info.source_id)


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
    # Every field by position, in TimelineRow's order: a frozen dataclass built with keywords
    # costs half as much again, and this runs for every line of a log.
    info = stream.info
    return TimelineRow(
        record.time,
        "log",  # origin
        _source_name(record.pod or info.pod, info.instance, info.source_id),
        entry.category if entry else category(record, None),
        record.msg,  # what
        Provenance("log", info.source_id, record.line_no),
        vmi_uid,  # incarnation
        record.pos,
        record.level,
        record.reason,
        entry.id if entry else None,  # message_id
        tuple(sorted(matched.items())) if matched else (),  # args
        False,  # order_uncertain
        record.uid,  # subject
        record.name,  # subject_name
    )
