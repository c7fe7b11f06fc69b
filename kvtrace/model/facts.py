"""Facts the rules reason over, derived once from a Timeline.

Run strategy (``types.go:1957-1970``: ``running`` true → Always, false or unset → Halted),
VMI incarnations with their phase timestamps, reconciles rebuilt from log lines by what one pass
of the controller can print (:mod:`kvtrace.model.reconciles`), and leader epochs.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from kvtrace.evidence import KubeObject
from kvtrace.model.leader_epochs import Epoch, lease_epochs
from kvtrace.model.reconciles import Reconcile, is_vm_line, rebuild
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.incarnations import event_instant
from kvtrace.timeline.rows import TimelineRow
from parsers.records import Timestamp

ACTION_CATEGORIES = {
    "decision",
    "api",
    "failure",
    "requeue",
    "backoff",
    "migration",
    "node",
    "pool",
}
DELETED_VMI = re.compile(r"deleting the virtual machine instance (?P<uid>\S+)$")
FINAL = {"Succeeded", "Failed"}


@dataclass
class Incarnation:
    """One VMI uid: its object (if collected), creation and phase timestamps."""

    uid: str
    vmi: KubeObject | None = None
    created: Timestamp | None = None
    phases: dict[str, list[int]] = field(default_factory=dict)  # phase → row indices
    started: list[int] = field(default_factory=list)  # virt-handler's Started Events (Running)

    @property
    def status(self) -> dict[str, Any]:
        status = self.vmi.body.get("status") if self.vmi else None
        return status if isinstance(status, dict) else {}


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
        self._by_source: dict[str, list[int]] = {}
        self._verbose: dict[str, bool] = {}
        for i, row in enumerate(self.rows):
            if is_vm_line(row):
                self._by_source.setdefault(row.source, []).append(i)

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

    # One replica's VM-controller lines, in order: what the reconcile grammar reads.

    def next_of_source(self, index: int, ids: frozenset[str] | None) -> int | None:
        """The next VM-controller line of the same replica after ``index`` (with these ids)."""
        rows = self._by_source.get(self.rows[index].source, [])
        for at in range(bisect_right(rows, index), len(rows)):
            if ids is None or self.rows[rows[at]].message_id in ids:
                return rows[at]
        return None

    def source_rows_between(self, low: int, high: int, ids: frozenset[str]) -> list[int]:
        rows = self._by_source.get(self.rows[low].source, [])
        inside = rows[bisect_right(rows, low) : bisect_left(rows, high)]
        return [j for j in inside if self.rows[j].message_id in ids]

    def verbose(self, source: str) -> bool:
        """The replica printed verbosity-4 reconcile boundaries (``Started processing vm``)."""
        if source not in self._verbose:
            self._verbose[source] = any(
                self.rows[j].message_id == "vm.processing" for j in self._by_source.get(source, [])
            )
        return self._verbose[source]

    def decision_before(self, index: int, ids: frozenset[str]) -> int | None:
        """The decision line of ``index``'s reconcile, if it is one of ``ids``."""
        reconcile = self.reconcile_of(index)
        before = [j for j in (reconcile.rows if reconcile else []) if j < index]
        return next((j for j in reversed(before) if self.rows[j].message_id in ids), None)

    # The VM a line is about.

    def vm_deleted_at(self, index: int) -> bool:
        """The VM the line is logged with was being deleted, or is gone: its uid is not the VM's
        at capture, the VM has a deletionTimestamp, or a bundle holds no VM of this name."""
        subject = self.rows[index].subject
        vm = self.vm
        if vm is None:
            return self.timeline.evidence.layout != "logs"
        if subject and vm.uid and subject != vm.uid:
            return True
        return bool((vm.body.get("metadata") or {}).get("deletionTimestamp"))

    def created_by(self, subject: str | None, before: int) -> int | None:
        """The last successful create of the VM with uid ``subject`` before row ``before``."""
        if not subject:
            return None
        for j in reversed(self.by_message("vm.created")):
            if j < before and self.rows[j].subject == subject:
                return j
        return None

    def older_vm_before(self, index: int) -> bool:
        """Another VM of this name (another uid) shows in the evidence before row ``index``."""
        subject, row = self.rows[index].subject, self.rows[index]
        if not subject:
            return False
        if any(self.rows[j].subject not in (None, subject) for j in self._vm_lines() if j < index):
            return True
        at = row.time.at if row.time else None
        for event in self.timeline.scope.events:
            involved = event.body.get("involvedObject") or {}
            when = event_instant(event)
            other = involved.get("uid") not in (None, subject)
            earlier = at is None or (when is not None and when <= at)
            if involved.get("kind") == "VirtualMachine" and other and earlier:
                return True
        return False

    def _vm_lines(self) -> list[int]:
        return [j for rows in self._by_source.values() for j in rows]

    def deleted_twice(self) -> dict[str, int]:
        """VMI uids the VM's SuccessfulDelete Events say were deleted more than once."""
        counts: dict[str, int] = {}
        for event in self.timeline.scope.events:
            body = event.body
            involved = body.get("involvedObject") or {}
            found = DELETED_VMI.search(str(body.get("message", "")))
            if (
                involved.get("kind") == "VirtualMachine"
                and body.get("reason") == "SuccessfulDelete"
                and found
            ):
                uid = found.group("uid")
                counts[uid] = counts.get(uid, 0) + int(body.get("count") or 1)
        return {uid: n for uid, n in counts.items() if n > 1}


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
        reconciles=rebuild(timeline.rows),
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
        elif row.category == "event" and row.arg("reason") == "Started":
            inc.started.append(index)  # pkg/virt-handler/vm.go:1188: the domain is Running
    return list(by_uid.values())


def _gap(a: TimelineRow, b: TimelineRow) -> float:
    if a.time is None or b.time is None:
        return 0.0
    return (b.time.at - a.time.at).total_seconds()
