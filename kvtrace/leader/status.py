"""``kvtrace leader status``: the lock now and every virt-controller replica. Readiness never tells
the leader: ``/leader`` always answers 200 (application.go:1017-1035 at v1.9.0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kvtrace.evidence import POD, Evidence, KubeObject
from kvtrace.leader.lines import read_leader_lines
from kvtrace.leader.lock import (
    ABSENT,
    EXPIRED,
    LATE,
    UNDECIDED,
    LockRecord,
    is_controller_pod,
    judge,
    read_endpoints_lock,
    read_lease,
)
from kvtrace.model.leader_epochs import LOCK_NAME, replica_of
from kvtrace.timeline.rows import TimelineRow
from parsers.records import Timestamp
from parsers.timestamps import parse_time


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
    pods = [o for o in evidence.of_kind(POD) if o.namespace == namespace and is_controller_pod(o)]
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
    state, age = _judged(lock, evidence, reference)
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


def _judged(
    lock: LockRecord | None, evidence: Evidence, reference: datetime
) -> tuple[str, float | None]:
    """The lock's state at the end of the collection — unless it was read during a collection
    that took a while and was healthier at its start: then which it was is undecided."""
    state, age = judge(lock, reference)
    started = evidence.capture_started
    if state not in (LATE, EXPIRED) or started is None or reference != evidence.captured_at:
        return state, age
    early, _ = judge(lock, started)
    return (UNDECIDED if early != state else state), age


def _window_note(status: LeaderStatus, started: datetime) -> str:
    lock = status.lock
    assert lock is not None and lock.renew is not None
    until = lock.renew.at + timedelta(seconds=lock.duration)
    return (
        f"the {lock.kind} was read at some moment between {_when(started)} and "
        f"{_when(status.reference)} (the collection's start and end): renewed at "
        f"{_when(lock.renew.at)}, it was live if read before {_when(until)} and lapsed if "
        f"read after; a read at a known time (kubectl get {lock.kind.lower()} -n "
        f"{status.namespace} {LOCK_NAME} -o yaml) decides it"
    )


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S.%f")


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
    if status.state == UNDECIDED and evidence.capture_started is not None:
        notes.append(_window_note(status, evidence.capture_started))
    if status.lock is not None and status.other_lock is not None:
        notes.append(_both_locks(status.lock, status.other_lock, status.namespace))
    if status.lock is not None and not has_pods:
        notes.append("no Pod objects in the evidence: whether the holder pod exists is unknown")
    if status.age is not None and status.age < 0:
        notes.append(f"renewTime is {-status.age:.3f}s after the reference time (clock skew)")
    return notes


def _both_locks(lease: LockRecord, endpoints: LockRecord, namespace: str) -> str:
    """A Lease and an Endpoints lock side by side: KubeVirt v1.0–v1.2 elect on both at once
    (EndpointsLeases, leaderelectionconfig/config.go:42 at v1.0.0: client-go's MultiLock, the
    Endpoints its primary); from v1.3 only the Lease is read."""
    where = f"Endpoints {namespace}/{LOCK_NAME}"
    if endpoints.holder == lease.holder:
        return (
            f"the {where} names the same holder: KubeVirt v1.0–v1.2 keep the lock in both "
            "(EndpointsLeases)"
        )
    return (
        f"the {where} names {endpoints.holder or 'no holder'}, the Lease "
        f"{lease.holder or 'no holder'}: under KubeVirt v1.0–v1.2 (EndpointsLeases) client-go "
        "reads an unknown leader until they agree (resourcelock/multilock.go); from v1.3 only "
        "the Lease counts and the Endpoints record is one an older release left behind"
    )


# -- history ---------------------------------------------------------------------------------
