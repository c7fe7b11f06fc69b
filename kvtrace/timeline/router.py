"""Every VM at once: parse each log once and route its lines to the VMs they belong to.

``kvtrace timeline`` looks for one VM with a raw-byte scan; ``kvtrace check`` needs all of them, so
it reads every line once and routes each record by uid, by namespace/name, by launcher pod name
and by the key inside object-less messages — the same attribution rules as the timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from kvtrace.evidence import VM, VMI, Evidence, KubeObject, LogStream
from kvtrace.timeline import catalog
from kvtrace.timeline.log_rows import (
    LineDedup,
    ScopeIds,
    SourceReport,
    attribute_to,
    keys_in_text,
    make_row,
    stream_order,
)
from kvtrace.timeline.rows import TimelineRow
from kvtrace.timeline.vmscope import VMScope, build_scope, vmi_only_keys
from parsers.logstream import LogParser
from parsers.records import DUPLICATE, RECORD, LogRecord

VMKey = tuple[str, str]
ACTION_FILES = {"vm.go", "vmi.go", "lifecycle.go"}


@dataclass
class Router:
    """Indexes from identifiers to VM keys, grown as logs name VMs without objects."""

    scopes: dict[VMKey, VMScope]
    evidence: Evidence
    by_uid: dict[str, VMKey] = field(default_factory=dict)
    by_pod: dict[tuple[str, str], VMKey] = field(default_factory=dict)
    discover: bool = True
    namespaces: set[str] | None = None
    # Which VMs known only from logs this router may discover (a check partition's share).
    claims: Callable[[str, str], bool] | None = None
    ids: dict[VMKey, ScopeIds] = field(default_factory=dict)  # each scope's, for attribution

    def index(self, key: VMKey, scope: VMScope) -> None:
        self.scopes[key] = scope
        self.ids[key] = ScopeIds.of(scope)
        for uid in (scope.vm_uid, *scope.vmi_uids, *(p.uid for p in scope.pods)):
            if uid:
                self.by_uid[uid] = key
        for name in (*(p.name for p in scope.pods), *scope.owned_names):
            self.by_pod[(scope.namespace, name)] = key  # objects whose lines are the VM's

    def ids_of(self, key: VMKey) -> ScopeIds:
        found = self.ids.get(key)
        if found is None:  # a scope put in ``scopes`` without :meth:`index`
            found = self.ids[key] = ScopeIds.of(self.scopes[key])
        return found

    def keys_for(
        self, record: LogRecord, matched: dict[str, str], message_id: str | None = None
    ) -> set[VMKey]:
        keys = set()
        uid = record.uid
        if uid and uid in self.by_uid:
            keys.add(self.by_uid[uid])
        namespace, name = record.namespace, record.name
        if namespace and name:
            key = (namespace, name)
            if key in self.scopes:  # most lines: logged with the VM (``_by_name``'s first case)
                keys.add(key)
            else:
                self._add(keys, namespace, name, message_id)
        named = matched.get("key", "") if matched else ""
        if "/" in named:
            namespace, name = named.split("/", 1)
            self._add(keys, namespace, name, message_id)
        for namespace, name in keys_in_text(record.msg):
            self._add(keys, namespace, name, message_id)
        return keys

    def _add(self, keys: set[VMKey], namespace: str, name: str, message_id: str | None) -> None:
        found = self._by_name(namespace, name, message_id)
        if found is not None:
            keys.add(found)

    def _by_name(self, namespace: str, name: str, message_id: str | None) -> VMKey | None:
        key = (namespace, name)
        if key in self.scopes:
            return key
        owner = self.by_pod.get(key)
        if owner is not None:
            return owner
        if name.startswith("virt-launcher-") and len(name) > 20:
            owner = (namespace, name[len("virt-launcher-") : -6])
            if owner in self.scopes:
                return owner
        if self._discoverable(namespace, name, message_id):
            self.index(key, build_scope(self.evidence, namespace, name))
            return key
        return None

    def _discoverable(self, namespace: str, name: str, message_id: str | None) -> bool:
        """A VM known only from logs: a known VM-controller message about it (logged with the
        VM or naming its key), or the VMI controller's requeue of the VMI of that name. Lines
        the VM controller logs with a DataVolume, and other controllers' lines about
        migrations, name no VM."""
        in_scope = self.namespaces is None or namespace in self.namespaces
        if self.claims is not None:
            in_scope = in_scope and self.claims(namespace, name)
        return self.discover and in_scope and catalog.names_vm(message_id)


def router_for(
    evidence: Evidence,
    namespaces: set[str] | None,
    only: VMKey | None,
    keep: Callable[[KubeObject], bool] | None = None,
) -> Router:
    """A router for ``only``, or every VM of ``namespaces``; ``keep`` (a label selector) limits
    it to VM objects it accepts, and then no VM is discovered from log lines alone (a VM with
    no object has no labels to match)."""
    discover = only is None and keep is None
    router = Router({}, evidence, discover=discover, namespaces=namespaces)
    vms = evidence.of_kind(VM)
    keys = {(o.namespace or "default", o.name) for o in vms if keep is None or keep(o)}
    keys |= _vmi_only(evidence, keep)
    if only is not None:
        keys = {only}
    for key in sorted(keys):
        if namespaces is None or key[0] in namespaces:
            router.index(key, build_scope(evidence, *key))
    return router


def _vmi_only(evidence: Evidence, keep: Callable[[KubeObject], bool] | None) -> set[VMKey]:
    """VMIs with no VM (a replica set's, a user's): each is checked as a scope of its own."""
    keys = vmi_only_keys(evidence)
    if keep is None:
        return keys
    return {(o.namespace or "default", o.name) for o in evidence.of_kind(VMI) if keep(o)} & keys


@dataclass
class BulkResult:
    rows: dict[VMKey, list[TimelineRow]]
    leader_rows: list[TimelineRow]
    reports: list[SourceReport]


def bulk_log_rows(
    router: Router, streams: Iterable[LogStream], anchor: datetime | None
) -> BulkResult:
    result = BulkResult({}, [], [])
    dedup = LineDedup()
    for stream in sorted(streams, key=stream_order):
        report = SourceReport(
            stream.info.source_id,
            stream.info.pod,
            stream.info.container,
            stream.info.instance,
            0,
            0,
        )
        for record in _records(stream, anchor, report):
            route_record(router, record, stream, result, report, dedup)
        result.reports.append(report)
    return named(result, dedup)


def named(result: BulkResult, dedup: LineDedup) -> BulkResult:
    """Rows of a file that repeats another under that file's source (:class:`LineDedup`)."""
    result.rows = {key: dedup.named(rows) for key, rows in result.rows.items()}
    result.leader_rows = dedup.named(result.leader_rows)
    return result


def _records(
    stream: LogStream, anchor: datetime | None, report: SourceReport
) -> Iterator[LogRecord]:
    parser = LogParser(stream.info, policy="skip", anchor=anchor)
    with stream.open() as handle:
        yield from parser.parse(handle)
    report.tally.update(parser.tally)
    report.lines = report.candidates = parser.tally.lines()


def route_record(
    router: Router,
    record: LogRecord,
    stream: LogStream,
    result: BulkResult,
    report: SourceReport,
    dedup: LineDedup,
) -> None:
    found = catalog.match_record(record)
    entry, matched = found if found else (None, _NO_ARGS)
    if entry is not None and entry.category == "leader":
        if not _duplicate(record, stream, report, dedup):
            result.leader_rows.append(make_row(record, stream, entry, matched, None))
        return
    keys = router.keys_for(record, matched, entry.id if entry else None)
    if not keys or _duplicate(record, stream, report, dedup):
        return
    for key in keys:
        attribution = attribute_to(record, router.ids_of(key), matched)
        if attribution is not None:
            row = make_row(record, stream, entry, matched, attribution.vmi_uid)
            result.rows.setdefault(key, []).append(row)
            report.rows += 1


_NO_ARGS: dict[str, str] = {}


def _duplicate(
    record: LogRecord, stream: LogStream, report: SourceReport, dedup: LineDedup
) -> bool:
    """Whether the line was seen before (:class:`LineDedup`); if so, tallied as a duplicate."""
    if not dedup.duplicate(record, stream):
        return False
    report.tally[RECORD] -= 1
    report.tally[DUPLICATE] += 1
    return True
