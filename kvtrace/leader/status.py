"""The leader state in one Evidence: the lock object, the virt-controller replicas, their lines.

The lock is the Lease ``<ns>/virt-controller`` (leaderelectionconfig/config.go:34,
application.go:1148-1150 at v1.9.0; client-go writes its fields in leaselock.go:149-166); v0.x
used an Endpoints object and v1.0–v1.2 both (config.go:42 at v1.0.0), the Endpoints carrying the
record as JSON in the ``control-plane.alpha.kubernetes.io/leader`` annotation (whole seconds,
``leaderTransitions``). Lease health is judged from ``renewTime`` against the reference time
(capture time of a bundle, else now): the holder renews about every 2 s and gives up when a round
fails for the renew deadline (leaderelection.go:278-299); any standby takes over once the record is
older than ``leaseDurationSeconds`` in its view (leaderelection.go:461-470). Readiness never tells
the leader: ``/leader`` always answers 200 (application.go:1017-1035).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson

from kvtrace.evidence import ENDPOINTS, KUBEVIRT, LEASE, POD, Evidence, KubeObject, LogStream
from kvtrace.model.leader_epochs import (
    LEASE_SECONDS,
    LOCK_NAME,
    RENEW_DEADLINE_SECONDS,
    Action,
    Epoch,
    Gap,
    Overlap,
    action_overlaps,
    leader_at,
    leader_gaps,
    lease_epochs,
    replica_of,
)
from kvtrace.timeline import catalog
from kvtrace.timeline.log_rows import is_duplicate, make_row
from kvtrace.timeline.logscan import Needles, scan_streams
from kvtrace.timeline.router import ACTION_FILES
from kvtrace.timeline.rows import Provenance, TimelineRow
from parsers.logstream import LogParser
from parsers.records import LogRecord, Timestamp
from parsers.timestamps import parse_time

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
CONTROLLER_LABEL = ("kubevirt.io", "virt-controller")
# Every leader line, the VM/VMI controller lines (sorted-key JSON: "pos" then "timestamp"), and
# the startup lines (application.go) that date the klog ``attempting`` line after them in logs
# without a kubelet prefix: the parser anchors a klog year on the nearest earlier dated candidate.
HISTORY_NEEDLES = Needles(
    (
        b"leaderelection",
        b'"pos":"application.go:',
        b"STARTING controllers",
        b"attempting to acquire",
        b'"pos":"vm.go:',
        b'"pos":"vmi.go:',
        b'"pos":"lifecycle.go:',
    )
)
HEALTHY, LATE, EXPIRED, ABSENT = "healthy", "renewal late", "expired", "absent"


@dataclass(frozen=True)
class LockRecord:
    """The election record as one lock object holds it."""

    kind: str  # Lease | Endpoints
    namespace: str
    holder: str | None
    acquire: Timestamp | None
    renew: Timestamp | None
    duration: int
    transitions: int | None

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{LOCK_NAME}"


def kubevirt_namespace(evidence: Evidence, given: str | None) -> str:
    """``--kubevirt-namespace``, else the bundle manifest, the KubeVirt CR, the virt-controller
    pods, the lock objects; else ``kubevirt`` (the fallback of application.go:330-333)."""
    if given:
        return given
    manifest_ns = (evidence.manifest or {}).get("kubevirtNamespace")
    if isinstance(manifest_ns, str) and manifest_ns:
        return manifest_ns
    found = [o.namespace for o in evidence.of_kind(KUBEVIRT)]
    found += [o.namespace for o in evidence.of_kind(POD) if _is_controller_pod(o)]
    found += [
        o.namespace
        for o in (*evidence.of_kind(LEASE), *evidence.of_kind(ENDPOINTS))
        if o.name == LOCK_NAME
    ]
    return next((ns for ns in found if ns), "kubevirt")


def _is_controller_pod(pod: KubeObject) -> bool:
    labels = (pod.body.get("metadata") or {}).get("labels") or {}
    key, value = CONTROLLER_LABEL
    return labels.get(key) == value or pod.name.startswith("virt-controller-")


def _lock_object(evidence: Evidence, kind: str, namespace: str) -> KubeObject | None:
    return next(
        (o for o in evidence.of_kind(kind) if o.namespace == namespace and o.name == LOCK_NAME),
        None,
    )


def read_lease(evidence: Evidence, namespace: str) -> LockRecord | None:
    lease = _lock_object(evidence, LEASE, namespace)
    if lease is None:
        return None
    return _record(LEASE, namespace, lease.body.get("spec") or {}, "leaseTransitions")


def read_endpoints_lock(evidence: Evidence, namespace: str) -> LockRecord | None:
    """The annotation record of the pre-v1.3 Endpoints lock: JSON in the annotation
    ``control-plane.alpha.kubernetes.io/leader``, whole seconds, ``leaderTransitions``."""
    endpoints = _lock_object(evidence, ENDPOINTS, namespace)
    if endpoints is None:
        return None
    annotations = (endpoints.body.get("metadata") or {}).get("annotations") or {}
    try:
        record = orjson.loads(annotations.get(LEADER_ANNOTATION) or "null")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    return _record(ENDPOINTS, namespace, record, "leaderTransitions")


def _record(kind: str, namespace: str, fields: dict[str, Any], transitions: str) -> LockRecord:
    duration = fields.get("leaseDurationSeconds")
    count = fields.get(transitions)
    return LockRecord(
        kind,
        namespace,
        str(fields["holderIdentity"]) if fields.get("holderIdentity") else None,
        parse_time(fields.get("acquireTime")),
        parse_time(fields.get("renewTime")),
        duration if isinstance(duration, int) and duration > 0 else LEASE_SECONDS,
        count if isinstance(count, int) else (0 if kind == LEASE else None),
    )


def judge(lock: LockRecord | None, reference: datetime) -> tuple[str, float | None]:
    """State and age of ``renewTime`` at ``reference``: late past the renew deadline (the holder
    has given up renewing), expired past the lease duration (any standby may take over)."""
    if lock is None or lock.renew is None or not lock.holder:
        return ABSENT, None
    age = (reference - lock.renew.at).total_seconds()
    if age > lock.duration:
        return EXPIRED, age
    if age > min(RENEW_DEADLINE_SECONDS, lock.duration):
        return LATE, age
    return HEALTHY, age


# -- log lines -------------------------------------------------------------------------------


@dataclass
class LeaderLines:
    """Every leader line and every VM/VMI controller action line of the controller logs."""

    leader_rows: list[TimelineRow] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def controller_streams(evidence: Evidence, namespace: str) -> list[LogStream]:
    """Logs of virt-controller pods (and logs whose pod is unknown: files given with --log)."""

    def wanted(stream: LogStream) -> bool:
        info = stream.info
        if info.pod is None:
            return True
        in_ns = info.namespace in (None, namespace)
        return in_ns and (info.pod.startswith("virt-controller-") or info.container == LOCK_NAME)

    return sorted((s for s in evidence.logs if wanted(s)), key=lambda s: s.info.source_id)


def read_leader_lines(evidence: Evidence, namespace: str) -> LeaderLines:
    """Leader rows, and the action rows (``model.facts.is_action``) of the VM and VMI controllers
    (``timeline.router.ACTION_FILES``): client-go's klog errors are no controller action."""
    from kvtrace.model.facts import is_action

    found = LeaderLines()
    seen: set[tuple[object, ...]] = set()
    for scan in scan_streams(controller_streams(evidence, namespace), HISTORY_NEEDLES):
        found.sources.append(scan.stream.info.source_id)
        parser = LogParser(scan.stream.info, policy="skip", anchor=evidence.captured_at)
        records = [r for n, line in scan.hits for r in parser.feed(n, line)] + parser.close()
        for record in records:
            if record.time is None or is_duplicate(record, scan.stream, seen):
                continue
            row = _row(record, scan.stream)
            if row.category == "leader":
                found.leader_rows.append(row)
            elif is_action(row) and (row.pos or "").split(":")[0] in ACTION_FILES:
                found.actions.append(Action(row, _target(record, row)))
    return found


def _row(record: LogRecord, stream: LogStream) -> TimelineRow:
    matched = catalog.match(record.msg)
    entry, args = matched if matched else (None, {})
    return make_row(record, stream, entry, args, None)


def _target(record: LogRecord, row: TimelineRow) -> str | None:
    if record.namespace and record.name:
        return f"{record.namespace}/{record.name}"
    return row.arg("key")


# -- status ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    """One virt-controller pod as the objects show it, and its last ``attempting`` line."""

    pod: str
    node: str | None
    phase: str | None
    ready: bool | None
    restarts: int
    started: Timestamp | None
    holder: bool
    last_attempt: TimelineRow | None


def replicas(
    evidence: Evidence, namespace: str, holder: str | None, rows: list[TimelineRow]
) -> list[Replica]:
    pods = [o for o in evidence.of_kind(POD) if o.namespace == namespace and _is_controller_pod(o)]
    return [_replica(p, holder, rows) for p in sorted(pods, key=lambda p: p.name)]


def _replica(pod: KubeObject, holder: str | None, rows: list[TimelineRow]) -> Replica:
    spec, status = pod.body.get("spec") or {}, pod.body.get("status") or {}
    ready = next(
        (
            c.get("status") == "True"
            for c in status.get("conditions") or []
            if c.get("type") == "Ready"
        ),
        None,
    )
    attempts = [
        r for r in rows if r.message_id == "leader.attempt" and replica_of(r.source) == pod.name
    ]
    return Replica(
        pod.name,
        spec.get("nodeName"),
        status.get("phase"),
        ready,
        sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or []),
        parse_time(status.get("startTime")),
        pod.name == holder,
        max(attempts, key=_row_at, default=None),
    )


def _row_at(row: TimelineRow) -> datetime:
    return row.time.at if row.time else datetime.min


@dataclass
class LeaderStatus:
    namespace: str
    reference: datetime
    reference_is_capture: bool
    lock: LockRecord | None
    other_lock: LockRecord | None  # the Endpoints record next to a Lease (v1.0–v1.2)
    state: str
    age: float | None
    replicas: list[Replica]
    holder_missing: bool
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.state in (EXPIRED, ABSENT) or self.holder_missing


def leader_status(evidence: Evidence, namespace: str, reference: datetime) -> LeaderStatus:
    lease, endpoints = read_lease(evidence, namespace), read_endpoints_lock(evidence, namespace)
    lock = lease or endpoints
    state, age = judge(lock, reference)
    holder = lock.holder if lock else None
    rows = read_leader_lines(evidence, namespace).leader_rows
    pods = replicas(evidence, namespace, holder, rows)
    has_pods = bool(evidence.of_kind(POD))
    missing = bool(holder) and has_pods and not any(r.holder for r in pods)
    status = LeaderStatus(
        namespace,
        reference,
        evidence.captured_at is not None,
        lock,
        endpoints if lease else None,
        state,
        age,
        pods,
        missing,
    )
    status.notes = _status_notes(evidence, status, has_pods)
    return status


def _status_notes(evidence: Evidence, status: LeaderStatus, has_pods: bool) -> list[str]:
    notes = []
    if status.lock is None:
        why = [m for m in evidence.missing if "Lease" in m]
        notes.append(
            why[0]
            if why
            else f"no Lease or Endpoints {status.namespace}/{LOCK_NAME} in the evidence: "
            "virt-controller never elected a leader here, or the namespace is wrong "
            "(--kubevirt-namespace)"
        )
    if status.lock is not None and not has_pods:
        notes.append("no Pod objects in the evidence: whether the holder pod exists is unknown")
    if status.age is not None and status.age < 0:
        notes.append(f"renewTime is {-status.age:.3f}s after the reference time (clock skew)")
    return notes


# -- history ---------------------------------------------------------------------------------


@dataclass
class LeaderHistory:
    namespace: str
    lock: LockRecord | None
    epochs: list[Epoch]
    gaps: list[Gap]
    overlaps: list[Overlap]
    strays: list[Action]  # actions of a replica that held no epoch then (application.go:604)
    sources: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(g.too_long for g in self.gaps) or bool(self.overlaps) or bool(self.strays)


def leader_history(evidence: Evidence, namespace: str) -> LeaderHistory:
    lines = read_leader_lines(evidence, namespace)
    lock = read_lease(evidence, namespace) or read_endpoints_lock(evidence, namespace)
    epochs = lease_epochs(lines.leader_rows)
    from_lock = lock_epoch(lock, epochs, evidence.captured_at)
    if from_lock is not None:
        epochs = sorted([*epochs, from_lock], key=lambda e: e.start)
    history = LeaderHistory(
        namespace,
        lock,
        epochs,
        leader_gaps(epochs, lines.actions, evidence.captured_at),
        action_overlaps(lines.actions, epochs),
        [a for a in lines.actions if epochs and a.replica not in leader_at(epochs, a.at)],
        lines.sources,
    )
    history.notes = _history_notes(evidence, history)
    return history


def lock_epoch(
    lock: LockRecord | None, epochs: list[Epoch], reference: datetime | None
) -> Epoch | None:
    """The holder's epoch from ``acquireTime`` when no log line of the holder shows it; it ended
    at ``renewTime + leaseDurationSeconds`` when that is before ``reference``."""
    if lock is None or not lock.holder or lock.acquire is None:
        return None
    if any(e.replica == lock.holder and e.end is None for e in epochs):
        return None
    row = TimelineRow(
        time=lock.acquire,
        origin="object",
        source=lock.ref,
        category="leader",
        what=f"holderIdentity {lock.holder} since acquireTime",
        evidence=Provenance("object", lock.ref, field="spec.acquireTime"),
    )
    epoch = Epoch(lock.holder, lock.acquire.at, rows=[row])
    if reference and judge(lock, reference)[0] == EXPIRED and lock.renew is not None:
        epoch.end, epoch.ended_by = lock.renew.at + timedelta(seconds=lock.duration), EXPIRED
    return epoch


def _history_notes(evidence: Evidence, history: LeaderHistory) -> list[str]:
    notes = [m for m in evidence.missing if "Lease" in m]
    if not history.sources:
        notes.append("no virt-controller logs in the evidence: epochs come from the lock only")
    elif not history.epochs:
        notes.append("no leader-election lines in the virt-controller logs")
    notes.append(
        "only the last terminated container of each pod is kept (previous.log): "
        "earlier epochs of a pod that restarted twice are not in the evidence"
    )
    return notes
