"""Facts the rules reason over, derived once from a Timeline.

Run strategy (``types.go:1957-1970``: ``running`` true → Always, false or unset → Halted),
VMI incarnations with their phase timestamps, reconciles rebuilt from log lines (at default
verbosity no reconcile-start line exists: ``Started processing vm`` is V(4), vm.go:372 at v1.9.0;
a decision line opens a reconcile, ``re-enqueuing`` closes one), and leader epochs.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from kvtrace.evidence import KubeObject
from kvtrace.model.leader_epochs import Epoch, lease_epochs, replica_of
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.rows import TimelineRow
from parsers.records import Timestamp

ACTION_CATEGORIES = {"decision", "api", "failure", "requeue", "backoff"}
FINAL = {"Succeeded", "Failed"}
# Lines a reconcile prints before its stop decision (vm.go:985 → 1005, vm.go:1045 → 1052).
PRELUDES = {"vm.restart-request", "vm.stop-request"}
SAME_RECONCILE_SECONDS = 1.0
# Between a VMI delete call and a reconcile that finds the VMI gone, the VMI controller and the
# VM controller must each remove a finalizer and the informer must deliver the deletion
# (lifecycle.go:459-478, vm.go:2503-2511 at v1.9.0): at least three API round trips. A start
# decision sooner than this after a delete, with nothing in between, cannot be a separate
# reconcile.
SAME_PASS_SECONDS = 0.02


@dataclass
class Incarnation:
    """One VMI uid: its object (if collected), creation and phase timestamps."""

    uid: str
    vmi: KubeObject | None = None
    created: Timestamp | None = None
    phases: dict[str, list[int]] = field(default_factory=dict)  # phase → row indices

    @property
    def status(self) -> dict[str, Any]:
        status = self.vmi.body.get("status") if self.vmi else None
        return status if isinstance(status, dict) else {}


@dataclass
class Reconcile:
    """Consecutive action lines of one replica for this VM, as one reconcile."""

    replica: str
    rows: list[int] = field(default_factory=list)


@dataclass
class Facts:
    timeline: Timeline
    strategy: str | None
    incarnations: list[Incarnation]
    reconciles: list[Reconcile]
    epochs: list[Epoch]

    @property
    def rows(self) -> list[TimelineRow]:
        return self.timeline.rows

    @property
    def vm(self) -> KubeObject | None:
        return self.timeline.scope.vm

    def __post_init__(self) -> None:
        self._by_id: dict[str, list[int]] = {}
        self._merged: dict[tuple[str, ...], list[int]] = {}
        self._actions: list[int] = []
        for i, row in enumerate(self.rows):
            if row.origin == "log" and row.message_id:
                self._by_id.setdefault(row.message_id, []).append(i)
            if is_action(row):
                self._actions.append(i)
        self._reconcile_at = {i: rc for rc in self.reconciles for i in rc.rows}
        self._incarnation = {inc.uid: inc for inc in self.incarnations if inc.uid}

    def actions(self) -> list[int]:
        return self._actions

    def by_message(self, *ids: str) -> list[int]:
        """Log rows carrying any of these catalog ids, in timeline order (do not modify)."""
        if len(ids) == 1:
            return self._by_id.get(ids[0], [])
        if ids not in self._merged:
            self._merged[ids] = sorted(i for m in ids for i in self._by_id.get(m, []))
        return self._merged[ids]

    # Position queries by bisection: rules ask "the last stop before this start" for every start,
    # and a VM crash-looping for weeks has thousands of them (bench/long_vm.py).

    def between(self, low: int, high: int, *ids: str) -> list[int]:
        """Rows with these ids strictly between rows ``low`` and ``high``."""
        rows = self.by_message(*ids)
        return rows[bisect_right(rows, low) : bisect_left(rows, high)]

    def last_before(self, index: int, *ids: str) -> int | None:
        rows = self.by_message(*ids)
        at = bisect_left(rows, index)
        return rows[at - 1] if at else None

    def first_after(self, index: int, *ids: str) -> int | None:
        rows = self.by_message(*ids)
        at = bisect_right(rows, index)
        return rows[at] if at < len(rows) else None

    def count_before(self, index: int, *ids: str) -> int:
        return bisect_left(self.by_message(*ids), index)

    def incarnation(self, uid: str | None) -> Incarnation | None:
        return self._incarnation.get(uid or "")

    def reconcile_of(self, index: int) -> Reconcile | None:
        return self._reconcile_at.get(index)

    def next_in_reconcile(self, index: int, message_id: str) -> int | None:
        """The first later row of ``index``'s reconcile carrying ``message_id``."""
        reconcile = self.reconcile_of(index)
        rows = reconcile.rows if reconcile else []
        return next((j for j in rows if j > index and self.rows[j].message_id == message_id), None)

    def seconds(self, a: int, b: int) -> float:
        """From row ``a`` to row ``b`` (0 when either has no time)."""
        return _gap(self.rows[a], self.rows[b])


def is_action(row: TimelineRow) -> bool:
    return row.origin == "log" and row.category in ACTION_CATEGORIES


def run_strategy(vm: KubeObject | None) -> str | None:
    if vm is None:
        return None
    spec = vm.body.get("spec") or {}
    if spec.get("runStrategy"):
        return str(spec["runStrategy"])
    return "Always" if spec.get("running") is True else "Halted"


def derive(timeline: Timeline) -> Facts:
    return Facts(
        timeline=timeline,
        strategy=run_strategy(timeline.scope.vm),
        incarnations=_incarnations(timeline),
        reconciles=rebuild_reconciles(timeline.rows),
        epochs=lease_epochs(timeline.rows),
    )


def _incarnations(timeline: Timeline) -> list[Incarnation]:
    by_uid = {uid: Incarnation(uid) for uid in timeline.incarnations}
    for vmi in timeline.scope.vmis:
        if vmi.uid in by_uid:
            by_uid[vmi.uid].vmi = vmi
    for index, row in enumerate(timeline.rows):
        inc = by_uid.get(row.incarnation or "")
        if inc is None:
            continue
        if row.category == "phase":
            inc.phases.setdefault(row.arg("phase") or "", []).append(index)
        elif row.category == "object" and row.what == "VMI created":
            inc.created = row.time
    return list(by_uid.values())


def rebuild_reconciles(rows: list[TimelineRow]) -> list[Reconcile]:
    reconciles: list[Reconcile] = []
    current: dict[str, Reconcile] = {}
    for index, row in enumerate(rows):
        if not is_action(row):
            continue
        replica = replica_of(row.source)
        open_one = current.get(replica)
        if open_one is None or _starts_new(rows, open_one, row):
            open_one = Reconcile(replica)
            reconciles.append(open_one)
            current[replica] = open_one
        open_one.rows.append(index)
        if row.category == "requeue":
            del current[replica]
    return reconciles


def _starts_new(rows: list[TimelineRow], reconcile: Reconcile, row: TimelineRow) -> bool:
    last = rows[reconcile.rows[-1]]
    if _gap(last, row) > SAME_RECONCILE_SECONDS:
        return True
    if row.category in ("decision", "backoff"):
        if last.message_id == "vm.deleted" and _gap(last, row) < SAME_PASS_SECONDS:
            return False
        return not (last.message_id in PRELUDES and row.message_id == "vm.stop")
    return False


def _gap(a: TimelineRow, b: TimelineRow) -> float:
    if a.time is None or b.time is None:
        return 0.0
    return (b.time.at - a.time.at).total_seconds()
