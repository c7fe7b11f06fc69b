"""``kvtrace leader history``: leader epochs from every replica's lines and the lock object, with
the gaps, overlaps and actions without the lease among them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from kvtrace.evidence import Evidence
from kvtrace.leader.lines import read_leader_lines
from kvtrace.leader.lock import EXPIRED, LockRecord, judge, read_endpoints_lock, read_lease
from kvtrace.model.leader_epochs import (
    Action,
    Epoch,
    Gap,
    Overlap,
    action_overlaps,
    leader_at,
    leader_gaps,
    lease_epochs,
)
from kvtrace.timeline.rows import Provenance, TimelineRow


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
    from_lock = lock_epoch(lock, epochs, evidence.read_from)
    if from_lock is not None:
        epochs = sorted([*epochs, from_lock], key=lambda e: e.start)
    history = LeaderHistory(
        namespace,
        lock,
        epochs,
        leader_gaps(epochs, lines.actions, evidence.read_from),
        action_overlaps(lines.actions, epochs),
        [a for a in lines.actions if epochs and a.replica not in leader_at(epochs, a.at)],
        lines.sources,
    )
    history.notes = _history_notes(evidence, history)
    return history


def since_moment(history: LeaderHistory, moment: datetime) -> LeaderHistory:
    """``leader history --since``: what reaches ``moment`` or comes after it. The history is
    built from every line first, so an epoch begun before ``moment`` keeps its true start and a
    gap is never invented at the window's edge."""
    kept = replace(
        history,
        epochs=[e for e in history.epochs if e.end is None or e.end >= moment],
        gaps=[g for g in history.gaps if g.end >= moment],
        overlaps=[o for o in history.overlaps if o.end >= moment],
        strays=[a for a in history.strays if a.at >= moment],
    )
    hidden = len(history.epochs) - len(kept.epochs)
    if hidden:
        kept.notes = [*history.notes, f"{hidden} epoch(s) that ended before --since not shown"]
    return kept


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
