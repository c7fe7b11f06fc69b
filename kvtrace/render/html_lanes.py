"""Where each timeline row is drawn: lanes (actors), spans (epochs, phases, pods) and the
arrows from a controller action to its observed effect.

Shared by the HTML report (swimlanes) and the Perfetto export (threads and slices), so both
visual outputs tell the same story about the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from kvtrace.model.leader_epochs import lease_epochs, replica_of
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.rows import TimelineRow

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
FINAL_PHASES = {"Succeeded", "Failed"}


@dataclass(frozen=True)
class Lane:
    """One swimlane (HTML) or thread (Perfetto): an actor or an object that changes over time."""

    key: str  # replica:<pod> | vm | revisions | vmi:<uid> | pod:<name> | events:<kind>
    group: str
    label: str


@dataclass(frozen=True)
class Span:
    """Something with a duration: a leader epoch, a VMI phase, a launcher pod's life."""

    lane: str
    kind: str  # epoch | phase | pod
    name: str
    start: datetime
    end: datetime
    uncertainty_us: int  # the start is known only within [start, start + uncertainty)
    row: int | None  # index of the row that starts it
    open_end: bool  # ends where the evidence ends, not at an observed row


def epoch_us(at: datetime) -> int:
    """Microseconds since the Unix epoch (naive times are UTC, as everywhere in kvtrace)."""
    aware = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return (aware - EPOCH) // timedelta(microseconds=1)


def lane_key(row: TimelineRow) -> str:
    if row.origin == "log":
        return f"replica:{replica_of(row.source)}"
    if row.origin == "event":
        return f"events:{row.arg('kind') or row.source.removeprefix('Event/')}"
    if row.origin == "pod":
        return f"pod:{row.source.removeprefix('Pod/')}"
    if row.origin == "revision":
        return "revisions"
    if row.origin == "migration":
        return f"migration:{row.arg('migration') or row.source.removeprefix('VMIM/')}"
    if row.source.startswith("VMI/") or row.origin == "phase":
        return f"vmi:{row.incarnation or row.source}"
    return "vm"


def lanes(timeline: Timeline) -> list[Lane]:
    """Every lane that holds a timed row, in reading order: controller, VM, VMIs, Events."""
    keys = {lane_key(r) for r in timeline.rows if r.time is not None}
    replicas = sorted(k for k in keys if k.startswith("replica:"))
    out = [Lane(k, "virt-controller", k.removeprefix("replica:")) for k in replicas]
    out += [Lane(k, "VirtualMachine", label) for k, label in _object_lanes() if k in keys]
    for uid in _incarnation_order(timeline, keys):
        group = f"VMI {uid.removeprefix('vmi:')[:8]}"
        out.append(Lane(uid, group, "phases"))
        out += [Lane(p, group, p.removeprefix("pod:")) for p in _pods_of(timeline, uid, keys)]
    shown = {lane.key for lane in out}
    pods = sorted(k for k in keys if k.startswith("pod:") and k not in shown)
    out += [Lane(p, "launcher pods", p.removeprefix("pod:")) for p in pods]
    migrations = sorted(k for k in keys if k.startswith("migration:"))
    out += [Lane(k, "migrations", k.removeprefix("migration:")) for k in migrations]
    events = sorted(k for k in keys if k.startswith("events:"))
    out += [Lane(k, "Events", k.removeprefix("events:")) for k in events]
    return out


def _object_lanes() -> list[tuple[str, str]]:
    return [("vm", "object"), ("revisions", "revisions")]


def _incarnation_order(timeline: Timeline, keys: set[str]) -> list[str]:
    ordered = [f"vmi:{uid}" for uid in timeline.incarnations]
    ordered += sorted(k for k in keys if k.startswith("vmi:") and k not in ordered)
    return ordered  # every incarnation gets a lane, even one whose VMI object is gone


def _pods_of(timeline: Timeline, vmi_key: str, keys: set[str]) -> list[str]:
    uid = vmi_key.removeprefix("vmi:")
    pods = {lane_key(r) for r in timeline.rows if r.origin == "pod" and r.incarnation == uid}
    return sorted(p for p in pods if p in keys)


def evidence_end(timeline: Timeline) -> datetime:
    """Where open spans stop: the capture time, else the end of the last timed row."""
    ends = [r.time.end for r in timeline.rows if r.time is not None]
    captured = timeline.evidence.captured_at
    if captured is not None and (not ends or captured >= max(ends)):
        return captured
    return max(ends) if ends else EPOCH


def spans(timeline: Timeline) -> list[Span]:
    end = evidence_end(timeline)
    return [
        *epoch_spans(timeline, end),
        *phase_spans(timeline, end),
        *seen_spans(timeline),
        *pod_spans(timeline, end),
    ]


def _index(timeline: Timeline) -> dict[int, int]:
    return {id(row): i for i, row in enumerate(timeline.rows)}


def epoch_spans(timeline: Timeline, end: datetime) -> list[Span]:
    index = _index(timeline)
    return [
        Span(
            f"replica:{e.replica}",
            "epoch",
            "leader" if e.end is not None else "leader (to end of evidence)",
            e.start,
            max(e.end or end, e.start),
            1,
            index.get(id(e.rows[0])) if e.rows else None,
            e.end is None,
        )
        for e in lease_epochs(timeline.rows)
    ]


def _timed(timeline: Timeline, keep: Iterable[int]) -> list[tuple[int, TimelineRow]]:
    return [(i, timeline.rows[i]) for i in keep if timeline.rows[i].time is not None]


def phase_spans(timeline: Timeline, end: datetime) -> list[Span]:
    """Each phase lasts until the next phase of its VMI, its deletion, or the evidence end."""
    out: list[Span] = []
    for key in sorted({lane_key(r) for r in timeline.rows if r.category == "phase"}):
        mine = [i for i, r in enumerate(timeline.rows) if lane_key(r) == key]
        phases = _timed(timeline, (i for i in mine if timeline.rows[i].category == "phase"))
        gone = [r for _, r in _timed(timeline, mine) if r.what.endswith("deletion requested")]
        for n, (i, row) in enumerate(phases):
            assert row.time is not None
            stop, open_end = _phase_end(phases[n + 1 :], gone, row.time.at, end)
            name = row.arg("phase") or row.what.removeprefix("phase ")
            out.append(
                Span(key, "phase", name, row.time.at, stop, row.time.resolution_us, i, open_end)
            )
    return out


def _phase_end(
    later: list[tuple[int, TimelineRow]], gone: list[TimelineRow], start: datetime, end: datetime
) -> tuple[datetime, bool]:
    if later and later[0][1].time is not None:
        return later[0][1].time.at, False
    deleted = [r.time.at for r in gone if r.time is not None and r.time.at >= start]
    return (deleted[0], False) if deleted else (max(end, start), True)


def seen_spans(timeline: Timeline) -> list[Span]:
    """An incarnation without phase timestamps (its VMI object is gone) spans the rows that
    name it, so its lane still shows when it lived as far as the evidence goes."""
    with_phases = {r.incarnation for r in timeline.rows if r.category == "phase"}
    out = []
    for uid in timeline.incarnations:
        mine = _timed(timeline, (i for i, r in enumerate(timeline.rows) if r.incarnation == uid))
        if uid in with_phases or not mine:
            continue
        (first, row), last = mine[0], mine[-1][1]
        assert row.time is not None and last.time is not None
        start, stop = row.time.at, max(r.time.end for _, r in mine if r.time)
        name = "seen in evidence (VMI object gone)"
        out.append(
            Span(f"vmi:{uid}", "seen", name, start, stop, row.time.resolution_us, first, False)
        )
    return out


def pod_spans(timeline: Timeline, end: datetime) -> list[Span]:
    """A launcher pod lives from its creation to its deletion request or compute exit."""
    out = []
    for key in sorted({lane_key(r) for r in timeline.rows if r.origin == "pod"}):
        mine = [(i, r) for i, r in enumerate(timeline.rows) if lane_key(r) == key and r.time]
        born = [(i, r.time) for i, r in mine if r.what == "launcher pod created" and r.time]
        if not born:
            continue
        i, when = born[0]
        ends = [r.time.at for _, r in mine if r.time and _ends_pod(r) and r.time.at >= when.at]
        stop = ends[0] if ends else max(end, when.at)
        name = key.removeprefix("pod:")
        out.append(Span(key, "pod", name, when.at, stop, when.resolution_us, i, not ends))
    return out


def _ends_pod(row: TimelineRow) -> bool:
    return row.what == "launcher pod deletion requested" or (
        row.what.startswith("compute container") and row.what != "compute container started"
    )


def action_effects(timeline: Timeline) -> list[tuple[int, int]]:
    """Pairs (action row, effect row): a VMI create → its first phase (else the VMI object); a
    VMI delete → its deletion request, else its launcher pod's, else a SuccessfulDelete Event."""
    pairs = []
    for i, row in enumerate(timeline.rows):
        if row.origin != "log" or row.time is None or not row.incarnation:
            continue
        if row.message_id == "vm.created":
            found = _first_effect(timeline, row, _create_effects)
        elif row.message_id == "vm.deleted":
            found = _first_effect(timeline, row, _delete_effects)
        else:
            continue
        if found is not None:
            pairs.append((i, found))
    return pairs


def _create_effects(row: TimelineRow) -> int:
    if row.category == "phase":
        return 0
    return 1 if row.what == "VMI created" else -1


def _delete_effects(row: TimelineRow) -> int:
    if row.what == "VMI deletion requested":
        return 0
    if row.what == "launcher pod deletion requested":
        return 1
    return 2 if row.origin == "event" and row.arg("reason") == "SuccessfulDelete" else -1


def _first_effect(
    timeline: Timeline, action: TimelineRow, rank: Callable[[TimelineRow], int]
) -> int | None:
    """The best-ranked row of the action's VMI whose interval ends after the action."""
    assert action.time is not None
    candidates = [
        (rank(r), i)
        for i, r in enumerate(timeline.rows)
        if r.incarnation == action.incarnation
        and r.origin != "log"
        and r.time is not None
        and r.time.end > action.time.at
        and rank(r) >= 0
    ]
    return min(candidates)[1] if candidates else None
