"""What ended each VMI incarnation of a VM, read from its timeline: the answer an operator asks
first ("why did my VM restart?"), with the row that says it.

The causes, from the evidence each one leaves (positions at v1.9.0):

- the node controller failed the VMI of an unresponsive node (``Moving vmi %s in namespace %s on
  unresponsive node to failed state``, node.go:278);
- a VirtualMachinePool replaced an outdated VMI (``Proactive update of VM %s/%s by deleting
  outdated VMI``, pool.go:1636);
- the workload updater evicted the VMI's pod off an outdated virt-launcher (``Evicted vmi pod
  as part of workload update``, workload-updater.go:628);
- a user request: ``processing stop request …`` (vm.go:1045) or ``processing forced restart
  request …`` (vm.go:985);
- ``runStrategy: Halted`` (``Stopping VM with VMI in phase %s due to runStrategy: %s``,
  vm.go:1134);
- the guest: the VMI ended Failed or Succeeded and the VM controller deleted it (``Stopping VM
  with VMI in phase %s and VM runStrategy: %s``, vm.go:1005), told apart by virt-handler's
  ``Stopped`` Event (crashed / shut down);
- the VM's deletion;
- nothing yet: the incarnation was still there at capture (or ended and was left in place, as
  a Succeeded VMI under RerunOnFailure before v1.2.0, Manual or Once).

Where none of these is in the evidence the ending is ``unknown``, saying what would decide it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtrace.evidence import KubeObject
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.rows import TimelineRow
from kvtrace.timeline.vmscope import eviction_strategy

NODE_FAILURE, POOL_UPDATE, WORKLOAD_UPDATE = "node failure", "pool update", "workload update"
STOP_REQUEST, RESTART_REQUEST, HALTED = "stop request", "restart request", "runStrategy Halted"
CRASHED, SHUT_DOWN, GUEST_ENDED = "guest crashed", "guest shut down", "VMI ended"
VM_DELETED, PRESENT, UNKNOWN = "VM deleted", "still there at capture", "unknown"

_BY_MESSAGE = {
    "node.unresponsive": NODE_FAILURE,
    "pool.outdated-vmi": POOL_UPDATE,
    "workload.evict": WORKLOAD_UPDATE,
    "vm.restart-request": RESTART_REQUEST,
    "vm.stop-request": STOP_REQUEST,
    "vm.stop-manual": STOP_REQUEST,
    "vm.stop-halted": HALTED,
    "vm.stop": GUEST_ENDED,
}


_HINTS = {HALTED: "; virtctl stop sets it on an Always or RerunOnFailure VM"}


@dataclass(frozen=True)
class Ending:
    incarnation: str  # the VMI uid
    cause: str
    detail: str
    row: int | None = None  # index of the row that says it


def endings(timeline: Timeline) -> list[Ending]:
    """One ending per incarnation, oldest first."""
    uids = timeline.incarnations
    return [_ending(timeline, uid, uid == uids[-1]) for uid in uids]


def _ending(timeline: Timeline, uid: str, last: bool) -> Ending:
    """The earliest row that ends the incarnation: another controller's action comes before
    the VM controller's stop that follows it."""
    rows = [(i, r) for i, r in enumerate(timeline.rows) if r.incarnation == uid]
    first = next(((i, r) for i, r in rows if r.message_id in _BY_MESSAGE), None)
    if first is not None:
        found = _from_row(uid, *first, rows)
        ran = any(_shows_running(r) for _, r in rows)
        return _pod_gone(timeline, found) if ran and found.cause.startswith("VMI Failed") else found
    deleted = _by_deletion(timeline, uid, rows)
    if deleted is not None:
        return deleted
    phase = _phase_at_capture(timeline, uid)
    if phase in ("Failed", "Succeeded"):
        detail = f"the VMI is {phase} at capture and was not deleted"
        return Ending(uid, _guest_cause(rows, phase), detail)
    if last and phase is not None:
        return Ending(uid, PRESENT, f"the VMI is {phase or 'without a phase'} at capture")
    return Ending(
        uid,
        UNKNOWN,
        "no decision, request or deletion about this VMI is in the evidence: the leader's log "
        "and the VM's Events of that time would tell",
    )


def _from_row(
    uid: str, index: int, row: TimelineRow, rows: list[tuple[int, TimelineRow]]
) -> Ending:
    cause = _BY_MESSAGE[row.message_id or ""]
    if cause != GUEST_ENDED:
        hint = _HINTS.get(cause, "")
        if cause == NODE_FAILURE and row.subject_name:
            hint = (
                f"; node {row.subject_name}: its virt-handler stopped heartbeating (the node "
                "controller fails the VMIs of a node whose kubevirt.io/heartbeat is older than "
                "5 minutes, node.go:57; the Node's NodeUnresponsive Event says when)"
            )
        return Ending(uid, cause, f"{row.what} ({row.pos or row.source}){hint}", index)
    phase = row.arg("phase") or ""
    cause = _guest_cause(rows, phase)
    how = f"the VMI ended {phase}, runStrategy {row.arg('strategy')}"
    return Ending(uid, cause, f"{how}: the VM controller deleted it ({row.pos})", index)


def _pod_gone(timeline: Timeline, ending: Ending) -> Ending:
    """A VMI that ran, then failed with no Stopped Event from virt-handler and no launcher pod
    of it left in the evidence: likely the VMI controller failing a running VMI whose pod went
    away (lifecycle.go:480-485) — deleted by someone else: a drain's eviction, ``kubectl delete
    pod``, a lost node. Under evictionStrategy None (the default) a drain evicts the pod instead
    of migrating the VMI. Hedged: the evidence shows the pod gone, not who removed it."""
    scope = timeline.scope
    if any(_created_by(p) == ending.incarnation for p in scope.pods):
        return ending
    strategy, _ = eviction_strategy(scope, ending.incarnation)
    hint = (
        f"; its evictionStrategy is {strategy or 'unset (None)'}, so a drain deletes the pod "
        "rather than migrating the VMI"
        if strategy not in ("LiveMigrate", "LiveMigrateIfPossible")
        else ""
    )
    detail = (
        f"{ending.detail}; it had run, virt-handler recorded no Stopped Event and no launcher "
        "pod of it is left in the evidence: likely its pod went away while it ran (a drain's "
        f"eviction, kubectl delete pod, a lost node){hint}"
    )
    return Ending(ending.incarnation, "launcher pod gone?", detail, ending.row)


def _shows_running(row: TimelineRow) -> bool:
    """The Running phase stamp, or virt-handler's Started Event (VirtualMachineInstance
    started.), which outlives a deleted VMI object."""
    if row.category == "phase":
        return row.arg("phase") == "Running"
    return row.category == "event" and row.arg("reason") == "Started"


def _created_by(pod: KubeObject) -> str | None:
    labels = (pod.body.get("metadata") or {}).get("labels") or {}
    value = labels.get("kubevirt.io/created-by") if isinstance(labels, dict) else None
    return str(value) if value else None


def _by_deletion(
    timeline: Timeline, uid: str, rows: list[tuple[int, TimelineRow]]
) -> Ending | None:
    """A delete with no decision before it is the VM's deletion path (stopVMI from sync's
    deletionTimestamp branch, vm.go:3236-3246) — when the VM is being deleted or is gone."""
    dispatched = next(((i, r) for i, r in rows if r.message_id == "vm.deleted"), None)
    if dispatched is None or not _vm_deleted(timeline):
        return None
    index, row = dispatched
    return Ending(uid, VM_DELETED, f"{row.what} ({row.pos})", index)


def _vm_deleted(timeline: Timeline) -> bool:
    vm = timeline.scope.vm
    if vm is None:  # gone from a bundle that holds objects; unknown from logs alone
        return timeline.evidence.layout not in ("logs", "plain")
    return bool((vm.body.get("metadata") or {}).get("deletionTimestamp"))


def _guest_cause(rows: list[tuple[int, TimelineRow]], phase: str) -> str:
    """virt-handler's ``Stopped`` Event on the VMI says how the guest ended; without it (the
    launcher failed before the guest ran, or the Event expired) only the phase is known."""
    stopped = [r.what for _, r in rows if r.category == "event" and r.arg("reason") == "Stopped"]
    if any("crashed" in what for what in stopped):
        return CRASHED
    if any("shut down" in what for what in stopped):
        return SHUT_DOWN
    return f"VMI {phase or 'ended'} (no Stopped Event says how)"


def _phase_at_capture(timeline: Timeline, uid: str) -> str | None:
    """The VMI's phase in the evidence ("" without one); None when the VMI is not in it."""
    for vmi in timeline.scope.vmis:
        if vmi.uid == uid:
            return str((vmi.body.get("status") or {}).get("phase") or "")
    return None
