"""Shaping for ``kvtrace leader status`` and ``kvtrace leader history``: tables and kubectl-shaped
``LeaderStatus`` / ``LeaderHistory`` documents, both from the same library objects."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kvtrace import __version__
from kvtrace.leader.history import LeaderHistory
from kvtrace.leader.lock import LockRecord
from kvtrace.leader.status import LeaderStatus, Replica
from kvtrace.model.leader_epochs import (
    LEASE_SECONDS,
    LOCK_NAME,
    RENEW_DEADLINE_SECONDS,
    Action,
    Epoch,
    Gap,
)
from kvtrace.render.words import count, duration
from kvtrace.timefmt import display, iso
from kvtrace.timeline.rows import TimelineRow
from parsers.records import Timestamp

API_VERSION = "kvtrace.io/v1alpha1"
REPLICA_HEADERS = ["POD", "NODE", "PHASE", "READY", "RESTARTS", "STARTED", "HOLDER",
                   "LAST ATTEMPT", "EVIDENCE"]  # fmt: skip
REPLICA_WIDE_HEADERS = [*REPLICA_HEADERS, "MESSAGE"]
EPOCH_HEADERS = ["#", "HOLDER", "START", "END", "LASTED", "ENDED BY"]
EPOCH_WIDE_HEADERS = [*EPOCH_HEADERS, "ACQUIRED AT", "ENDED AT"]
GAP_HEADERS = ["FROM", "TO", "LENGTH", "AFTER", "NEXT LEADER", "ACTIONS IN GAP",
               f"ACTIONS IN NEXT {LEASE_SECONDS}s", "OBJECTS"]  # fmt: skip
ACTION_HEADERS = ["TIME", "REPLICA", "LEADING", "OBJECT", "WHAT", "EVIDENCE"]
ENDINGS = {
    "leader.renew-failed": "failed to renew lease",
    "leader.lost": "leaderelection lost",
    "restart": "container restarted",
    "expired": "lease expired (renewTime + leaseDurationSeconds)",
}


def _micro(at: datetime) -> Timestamp:
    return Timestamp(at)


def _age(status: LeaderStatus) -> str:
    """How long before the reference the lock was renewed; ``~`` when the record has whole
    seconds only (the Endpoints annotation)."""
    renew = status.lock.renew if status.lock else None
    if status.age is None:
        return "-"
    return duration(status.age, uncertain=renew is not None and renew.resolution_us >= 1_000_000)


def _yes(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


# -- status ----------------------------------------------------------------------------------


def lock_lines(status: LeaderStatus) -> list[str]:
    lock = status.lock
    if lock is None:
        return [f"Lock:         none found in {status.namespace}", f"State:        {status.state}"]
    when = "capture" if status.reference_is_capture else "now"
    holder = lock.holder or "(none)"
    if lock.holder:
        holder += " (pod NOT FOUND)" if status.holder_missing else ""
    return [
        f"Lock:         {lock.kind} {lock.namespace}/{LOCK_NAME}",
        f"Holder:       {holder}",
        f"Acquired:     {display(lock.acquire)}",
        f"Renewed:      {display(lock.renew)} ({_age(status)} before {when}"
        f" {display(_micro(status.reference))})",
        f"Duration:     {lock.duration}s lease (renew deadline {RENEW_DEADLINE_SECONDS}s)",
        f"Transitions:  {_transitions(lock)}",
        f"State:        {status.state}",
    ]


def _transitions(lock: LockRecord) -> str:
    return "?" if lock.transitions is None else str(lock.transitions)


def replica_rows(status: LeaderStatus, wide: bool = False) -> list[list[str]]:
    return [_replica_row(r, wide) for r in status.replicas]


def _replica_row(r: Replica, wide: bool = False) -> list[str]:
    attempt = None if r.holder else r.last_attempt
    message = [attempt.what if attempt else "-"] if wide else []
    return [
        r.pod,
        r.node or "?",
        r.phase or "?",
        _yes(r.ready),
        str(r.restarts),
        display(r.started),
        "yes" if r.holder else "no",
        display(attempt.time) if attempt else "-",
        str(attempt.evidence) if attempt else "-",
        *message,
    ]


def _metadata(namespace: str) -> dict[str, Any]:
    return {"name": LOCK_NAME, "namespace": namespace, "generator": f"kvtrace {__version__}"}


def status_document(status: LeaderStatus) -> dict[str, Any]:
    """``kind: LeaderStatus``: spec is the moment judged, status what the lock and pods say."""
    return {
        "apiVersion": API_VERSION,
        "kind": "LeaderStatus",
        "metadata": _metadata(status.namespace),
        "spec": {
            "reference": {
                "time": iso(_micro(status.reference)),
                "from": "capture" if status.reference_is_capture else "now",
            },
        },
        "status": {
            "state": status.state,
            "lock": _lock_doc(status.lock, status.age),
            "otherLock": _lock_doc(status.other_lock, None),
            "holderPodFound": None if status.lock is None else not status.holder_missing,
            "replicas": [_replica_doc(r) for r in status.replicas],
            "notes": status.notes,
        },
    }


def _lock_doc(lock: LockRecord | None, age: float | None) -> dict[str, Any] | None:
    if lock is None:
        return None
    count = "leaseTransitions" if lock.kind == "Lease" else "leaderTransitions"
    return {
        "kind": lock.kind,
        "holderIdentity": lock.holder,
        "acquireTime": iso(lock.acquire),
        "renewTime": iso(lock.renew),
        "leaseDurationSeconds": lock.duration,
        count: lock.transitions,
        "renewAgeSeconds": None if age is None else round(age, 6),
    }


def _replica_doc(r: Replica) -> dict[str, Any]:
    attempt = None if r.holder else r.last_attempt
    return {
        "pod": r.pod,
        "node": r.node,
        "phase": r.phase,
        "ready": r.ready,
        "restarts": r.restarts,
        "startTime": iso(r.started),
        "holder": r.holder,
        "lastAttempt": _row_doc(attempt) if attempt else None,
    }


def _row_doc(row: TimelineRow) -> dict[str, Any]:
    return {"time": iso(row.time), "what": row.what, "evidence": str(row.evidence)}


# -- history ---------------------------------------------------------------------------------


def history_header(history: LeaderHistory) -> list[str]:
    lock = history.lock
    logs = count(len(history.sources), "virt-controller log")
    lines = [f"Logs read:    {logs} in {history.namespace}"]
    if lock is None:
        return [f"Lock:         none found in {history.namespace}", *lines]
    return [
        f"Lock:         {lock.kind} {lock.namespace}/{LOCK_NAME}: {lock.holder or '(none)'} "
        f"since {display(lock.acquire)}, transitions {_transitions(lock)}",
        *lines,
    ]


def ended_by(epoch: Epoch) -> str:
    if epoch.ended_by is None:
        return "still leading at the end of the evidence"
    said = [ENDINGS.get(r.message_id or "", "") for r in epoch.rows]
    seen = [ENDINGS[epoch.ended_by]] + [s for s in said if s and s != ENDINGS[epoch.ended_by]]
    return ", then ".join(dict.fromkeys(seen))


def _lasted(epoch: Epoch) -> str:
    if epoch.end is None:
        return "-"
    return duration((epoch.end - epoch.start).total_seconds())


def epoch_rows(history: LeaderHistory, wide: bool = False) -> list[list[str]]:
    return [
        [
            str(i),
            e.replica,
            display(_micro(e.start)),
            display(_micro(e.end)) if e.end else "-",
            _lasted(e),
            ended_by(e),
            *(_epoch_evidence(e) if wide else []),
        ]
        for i, e in enumerate(history.epochs, 1)
    ]


def _epoch_evidence(epoch: Epoch) -> list[str]:
    """Where the epoch's first line is, and the line that ended it."""
    first = str(epoch.rows[0].evidence) if epoch.rows else "-"
    ended = str(epoch.rows[-1].evidence) if epoch.rows and epoch.ended_by else "-"
    return [first, ended]


def evidence_lines(history: LeaderHistory) -> list[str]:
    return [
        f"#{i}  {row.evidence}  {row.what}"
        for i, epoch in enumerate(history.epochs, 1)
        for row in epoch.rows
    ]


def gap_rows(history: LeaderHistory) -> list[list[str]]:
    return [_gap_row(g) for g in history.gaps]


def _gap_row(gap: Gap) -> list[str]:
    length = duration(gap.seconds) + (" LONG" if gap.too_long else "")
    return [
        display(_micro(gap.start)),
        display(_micro(gap.end)),
        length,
        gap.after.replica,
        gap.before.replica if gap.before else "none by capture",
        str(len(gap.in_gap)),
        str(len(gap.caught_up)),
        _first(_targets(gap.caught_up)),
    ]


def _first(names: list[str], shown: int = 5) -> str:
    """A table cell: the first few names and how many more (``-o json`` has them all)."""
    if len(names) <= shown:
        return ", ".join(names) or "-"
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _targets(actions: Iterable[Action]) -> list[str]:
    return sorted({a.target for a in actions if a.target})


def action_rows(
    actions: Iterable[Action], leading: dict[str, bool] | None = None
) -> list[list[str]]:
    return [
        [
            display(a.row.time),
            a.replica,
            _yes(leading.get(a.replica)) if leading is not None else "no",
            a.target or "?",
            a.row.what,
            str(a.row.evidence),
        ]
        for a in actions
    ]


def history_document(history: LeaderHistory) -> dict[str, Any]:
    """``kind: LeaderHistory``: spec is the logs read, status what they show."""
    return {
        "apiVersion": API_VERSION,
        "kind": "LeaderHistory",
        "metadata": _metadata(history.namespace),
        "spec": {"sources": history.sources},
        "status": {
            "lock": _lock_doc(history.lock, None),
            "epochs": [_epoch_doc(e) for e in history.epochs],
            "gaps": [_gap_doc(g) for g in history.gaps],
            "overlaps": [
                {
                    "from": iso(_micro(o.start)),
                    "to": iso(_micro(o.end)),
                    "replicas": list(o.replicas),
                    "leading": o.leading,
                    "actions": [_action_doc(a) for a in o.actions],
                }
                for o in history.overlaps
            ],
            "actionsWithoutLease": [_action_doc(a) for a in history.strays],
            "notes": history.notes,
        },
    }


def _epoch_doc(e: Epoch) -> dict[str, Any]:
    return {
        "holder": e.replica,
        "start": iso(_micro(e.start)),
        "end": iso(_micro(e.end)) if e.end else None,
        "endedBy": e.ended_by,
        "evidence": [_row_doc(r) for r in e.rows],
    }


def _gap_doc(g: Gap) -> dict[str, Any]:
    return {
        "from": iso(_micro(g.start)),
        "to": iso(_micro(g.end)),
        "seconds": round(g.seconds, 6),
        "longerThanLease": g.too_long,
        "after": g.after.replica,
        "nextLeader": g.before.replica if g.before else None,
        "actionsInGap": [_action_doc(a) for a in g.in_gap],
        "actionsAfter": [_action_doc(a) for a in g.caught_up],
        "objectsAfter": _targets(g.caught_up),
    }


def _action_doc(a: Action) -> dict[str, Any]:
    return {"replica": a.replica, "object": a.target, **_row_doc(a.row)}
