"""Leader epochs: which virt-controller replica held the Lease when.

Evidence (``controllers.md`` §9.2): client-go's klog lines ``successfully acquired lease
<ns>/virt-controller`` (leaderelection.go:271) start an epoch, as does the ``STARTING controllers``
stdlib line (application.go:614) that follows it; ``failed to renew lease`` (leaderelection.go:297)
and ``leaderelection lost`` (application.go:1171, then exit 1) end it. A replica that only logged
``attempting to acquire leader lease`` (leaderelection.go:257) is a standby. The one implementation
used by the model's "leader only" rules and by ``kvtrace leader``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from kvtrace.rows import TimelineRow

LEASE_SECONDS = 15  # leaseDurationSeconds default (leaderelectionconfig/config.go:30-44)
STARTS = {"leader.acquired", "leader.controllers"}
ENDS = {"leader.renew-failed", "leader.lost"}


@dataclass
class Epoch:
    """One replica's leadership: from ``start`` to ``end`` (None: still leading, as far as the
    evidence goes). ``ended_by`` names the line that ended it."""

    replica: str
    start: datetime
    end: datetime | None = None
    ended_by: str | None = None
    rows: list[TimelineRow] = field(default_factory=list)

    def holds(self, at: datetime) -> bool:
        return self.start <= at and (self.end is None or at <= self.end)


def replica_of(source: str) -> str:
    """``virt-controller-x (previous)`` and ``virt-controller-x`` are one replica (pod)."""
    return source.removesuffix(" (previous)")


def lease_epochs(rows: Iterable[TimelineRow]) -> list[Epoch]:
    """Epochs per replica from its leader lines, oldest first."""
    epochs: list[Epoch] = []
    open_by_replica: dict[str, Epoch] = {}
    leader_rows = [r for r in rows if r.category == "leader" and r.time is not None]
    for row in sorted(
        leader_rows, key=lambda r: (r.time.at, r.source) if r.time else (datetime.min, "")
    ):
        assert row.time is not None
        replica = replica_of(row.source)
        current = open_by_replica.get(replica)
        if row.message_id in STARTS:
            if current is None:
                current = Epoch(replica, row.time.at)
                open_by_replica[replica] = current
                epochs.append(current)
            current.rows.append(row)
        elif row.message_id in ENDS and current is not None:
            current.end, current.ended_by = row.time.at, row.message_id
            current.rows.append(row)
            del open_by_replica[replica]
        elif row.message_id == "leader.attempt" and current is not None:
            # a new container of the same pod starts over: the old epoch ended unseen
            current.end, current.ended_by = row.time.at, "restart"
            del open_by_replica[replica]
    return epochs


def leader_at(epochs: list[Epoch], at: datetime) -> list[str]:
    """Replicas whose epochs cover ``at`` (more than one: overlapping leadership)."""
    return sorted({e.replica for e in epochs if e.holds(at)})


def replicas_with_lease_lines(rows: Iterable[TimelineRow]) -> set[str]:
    return {replica_of(r.source) for r in rows if r.category == "leader"}
