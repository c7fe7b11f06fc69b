"""Leader epochs: which virt-controller replica held the Lease when, and where that was unclear.

Evidence (KubeVirt v1.9.0 and the client-go it vendors): client-go's klog lines ``successfully
acquired lease <ns>/virt-controller`` (leaderelection.go:271) start an epoch, as does the
``STARTING controllers`` stdlib line (application.go:614) that follows it; ``failed to renew
lease`` (leaderelection.go:297) and ``leaderelection lost`` (application.go:1171, then exit 1) end
it. A replica that only logged ``attempting to acquire leader lease`` (leaderelection.go:257) is a
standby. The one implementation used by the model's "leader only" rules and by ``kvtrace leader``.

Gaps and overlaps (renewal rounds leaderelection.go:278-299, expiry judged by each standby on its
own clock 461-470): a deposed leader gives up about 12 s after its last renewal and a standby takes
over 15–23.8 s after it, so a normal failover leaves 3–12 s without a leader; a gap longer than
the lease duration means nobody could take over. Two replicas whose
controller actions interleave (a stalled leader resuming after another took over) are split-brain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kvtrace.timeline.rows import TimelineRow

LEASE_SECONDS = 15  # leaseDurationSeconds default (leaderelectionconfig/config.go:30-44)
RENEW_DEADLINE_SECONDS = 10  # RenewDeadline default (leaderelectionconfig/config.go:32)
RETRY_PERIOD_SECONDS = 2  # RetryPeriod default (leaderelectionconfig/config.go:33)
LOCK_NAME = "virt-controller"  # Lease (and pre-v1.3 Endpoints) name (application.go:1148-1150)
# Leadership shows in the klog acquisition, the STARTING controllers line and the controllers'
# own start lines, all printed only once the lease is held (application.go:604-672 at v1.9.0).
STARTS = {"leader.acquired", "leader.controllers", "controller.vm-start", "controller.vmi-start"}
ENDS = {"leader.renew-failed", "leader.lost"}
LEASE_WINDOW = timedelta(seconds=LEASE_SECONDS)


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


def _time_key(row: TimelineRow) -> tuple[datetime, str]:
    return (row.time.at, row.source) if row.time else (datetime.min, "")


def lease_epochs(rows: Iterable[TimelineRow]) -> list[Epoch]:
    """Epochs per replica from its leader lines, oldest first."""
    epochs: list[Epoch] = []
    open_by_replica: dict[str, Epoch] = {}
    closed_by_replica: dict[str, Epoch] = {}
    leader_rows = [r for r in rows if r.category == "leader" and r.time is not None]
    for row in sorted(leader_rows, key=_time_key):
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
            closed_by_replica[replica] = open_by_replica.pop(replica)
        elif row.message_id in ENDS and replica in closed_by_replica:
            # ``leaderelection lost`` right after ``failed to renew``: evidence of the same end
            closed_by_replica[replica].rows.append(row)
        elif row.message_id == "leader.attempt" and current is not None:
            # a new container of the same pod starts over: the old epoch ended unseen
            current.end, current.ended_by = row.time.at, "restart"
            closed_by_replica[replica] = open_by_replica.pop(replica)
    return epochs


def leader_at(epochs: list[Epoch], at: datetime) -> list[str]:
    """Replicas whose epochs cover ``at`` (more than one: overlapping leadership)."""
    return sorted({e.replica for e in epochs if e.holds(at)})


def replicas_with_lease_lines(rows: Iterable[TimelineRow]) -> set[str]:
    return {replica_of(r.source) for r in rows if r.category == "leader"}


@dataclass(frozen=True)
class Action:
    """A VM/VMI controller action line (``model.facts.is_action``) and the object it names."""

    row: TimelineRow
    target: str | None  # "namespace/name" from the line's object fields or its key

    @property
    def at(self) -> datetime:
        assert self.row.time is not None
        return self.row.time.at

    @property
    def replica(self) -> str:
        return replica_of(self.row.source)


@dataclass
class Gap:
    """No replica led from ``start`` (the end of ``after``) to the start of ``before`` (None: no
    leader up to the end of the evidence, ``end``).

    ``in_gap``: actions logged inside it (should be none: nobody ran controllers);
    ``caught_up``: the next leader's actions in its first lease duration, the work that waited."""

    start: datetime
    end: datetime
    after: Epoch
    before: Epoch | None
    in_gap: list[Action] = field(default_factory=list)
    caught_up: list[Action] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    @property
    def too_long(self) -> bool:
        return self.seconds > LEASE_SECONDS


def leader_gaps(
    epochs: list[Epoch], actions: list[Action], until: datetime | None = None
) -> list[Gap]:
    """Leaderless spans between an ended epoch and the next start (every length; see
    ``Gap.too_long``), and after the last ended epoch up to ``until`` (the capture time)."""
    gaps: list[Gap] = []
    covering: Epoch | None = None
    for epoch in sorted(epochs, key=lambda e: e.start):
        if covering is not None and covering.end is not None and epoch.start > covering.end:
            gaps.append(_gap(covering, epoch, epoch.start, actions))
        if covering is None or _ends_later(epoch, covering):
            covering = epoch
    if covering is not None and covering.end is not None and until and until > covering.end:
        gaps.append(_gap(covering, None, until, actions))
    return gaps


def _ends_later(a: Epoch, b: Epoch) -> bool:
    if b.end is None:
        return False
    return a.end is None or a.end > b.end


def _gap(after: Epoch, before: Epoch | None, end: datetime, actions: list[Action]) -> Gap:
    assert after.end is not None
    gap = Gap(after.end, end, after, before)
    gap.in_gap = [a for a in actions if gap.start < a.at < gap.end]
    if before is not None:
        until = gap.end + LEASE_WINDOW
        gap.caught_up = [
            a for a in actions if a.replica == before.replica and gap.end <= a.at <= until
        ]
    return gap


@dataclass
class Overlap:
    """Two replicas logged controller actions in intersecting windows: both ran controllers."""

    start: datetime
    end: datetime
    replicas: tuple[str, str]
    actions: list[Action]
    leading: dict[str, bool]  # replica → whether an epoch of its own covered its actions


@dataclass
class _Window:
    replica: str
    actions: list[Action]

    @property
    def start(self) -> datetime:
        return self.actions[0].at

    @property
    def end(self) -> datetime:
        return self.actions[-1].at


def activity_windows(actions: list[Action]) -> list[_Window]:
    """Per replica, runs of actions with no pause longer than the lease duration."""
    windows: list[_Window] = []
    last: dict[str, _Window] = {}
    for action in sorted(actions, key=lambda a: (a.at, a.row.source)):
        window = last.get(action.replica)
        if window is None or action.at - window.end > LEASE_WINDOW:
            window = _Window(action.replica, [])
            last[action.replica] = window
            windows.append(window)
        window.actions.append(action)
    return windows


def usurper(epochs: list[Epoch], replica: str, at: datetime) -> Epoch | None:
    """The epoch of another replica that took the lease from ``replica`` while ``replica``'s
    own epoch is still open at ``at``: ``replica`` acting then is a deposed leader acting."""
    own = [e for e in epochs if e.replica == replica and e.holds(at)]
    return next(
        (
            e
            for e in epochs
            if e.replica != replica and e.holds(at) and any(e.start > mine.start for mine in own)
        ),
        None,
    )


def deposed_overlaps(actions: list[Action], epochs: list[Epoch]) -> list[Overlap]:
    """Actions of a replica after another acquired the lease from it, before its own loss shows,
    each with the usurper's acquisition: both believed they led."""
    by_pair: dict[tuple[str, str], list[Action]] = {}
    for action in actions:
        epoch = usurper(epochs, action.replica, action.at)
        if epoch is not None:
            by_pair.setdefault((action.replica, epoch.replica), []).append(action)
    found = []
    for (replica, taker), acted in sorted(by_pair.items()):
        first, second = sorted((replica, taker))
        start = min(e.start for e in epochs if e.replica == taker and e.start <= acted[0].at)
        end = acted[-1].at
        theirs = [a for a in actions if a.replica == taker and start <= a.at <= end]
        both = sorted([*acted, *theirs], key=lambda a: (a.at, a.row.source))
        found.append(Overlap(start, end, (first, second), both, {replica: False, taker: True}))
    return found


def action_overlaps(actions: list[Action], epochs: list[Epoch]) -> list[Overlap]:
    """Windows of two replicas that intersect, with the actions of both inside the overlap, and
    the actions of a deposed leader (:func:`deposed_overlaps`)."""
    windows = activity_windows(actions)
    found: list[Overlap] = list(deposed_overlaps(actions, epochs))
    pairs = {o.replicas for o in found}
    for i, first in enumerate(windows):
        for second in windows[i + 1 :]:
            if first.replica == second.replica:
                continue
            start, end = max(first.start, second.start), min(first.end, second.end)
            overlap = _overlap(first, second, start, end, epochs) if start <= end else None
            if overlap is not None and overlap.replicas not in pairs:
                found.append(overlap)
    return sorted(found, key=lambda o: (o.start, o.replicas))


def _overlap(
    first: _Window, second: _Window, start: datetime, end: datetime, epochs: list[Epoch]
) -> Overlap:
    inside = [a for w in (first, second) for a in _around(w, start, end)]
    inside.sort(key=lambda a: (a.at, a.row.source))
    pair = tuple(sorted((first.replica, second.replica)))
    leading = {r: all(r in leader_at(epochs, a.at) for a in inside if a.replica == r) for r in pair}
    return Overlap(start, end, (pair[0], pair[1]), inside, leading)


def _around(window: _Window, start: datetime, end: datetime) -> list[Action]:
    """The window's actions inside ``[start, end]``, else the ones just before and after it."""
    inside = [a for a in window.actions if start <= a.at <= end]
    if inside:
        return inside
    before = [a for a in window.actions if a.at < start][-1:]
    return [*before, *[a for a in window.actions if a.at > end][:1]]
