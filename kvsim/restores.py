"""The VirtualMachineRestore controller of v1.9.0 (pkg/storage/snapshot/restore.go), restoring a
VM from a snapshot of itself, on the paths a VM's timeline shows.

Every reconcile (``updateVMRestore``, restore.go:200-322) starts with ``Updating
VirtualMachineRestore`` (a V(1) line, so printed at the default verbosity, obj restore,
restore.go:202). The first initialises the status (``Progressing`` / ``Ready`` "Initializing
VirtualMachineRestore"); the next adds the ownerReference to the target VM and the finalizer
``snapshot.kubevirt.io/vmrestore-protection`` (restore.go:61, 232-244). The target is ready when
no VMI of the VM's name is in the cache (restore.go:659-674); if it is not, by
``spec.targetReadinessPolicy`` (restore.go:398-449):

* ``WaitGracePeriod`` (the default): Warning Event ``RestoreTargetNotReady`` ``Restore target VMI
  still exists, please stop the restore target to proceed with restore``, conditions ``Waiting
  for target VM to be powered off. Please stop the restore target to proceed with restore, or the
  operation will fail after 5m0s``; 5 min after the restore's creation it fails: Warning Event
  ``Operation failed`` ``VirtualMachineRestore failed Restore target failed to be ready within
  5m0s. Please power off the target VM before attempting restore`` and a ``Failure`` condition.
* ``StopTarget``: Warning Event ``RestoreTargetNotReady`` ``Automatically stopping restore target
  for restore operation``, ``Stopping VM before restore [%s/%s]`` (info, no object,
  restore.go:655) and the VM ``stop`` subresource — on every reconcile that finds the VMI still
  there.

Then ``status.restoreInProgress`` on the VM (restore.go:625-648); the volume restores recorded
(conditions "Creating new PVCs" / "Waiting for new PVCs"); the VM's spec replaced with the
snapshot's, its PVC volumes renamed ``restore-<restore uid>-<volume>`` (restore.go:166) and the
annotation ``restore.kubevirt.io/lastRestoreUID: <restore>-<uid>`` (1627-1640), keeping the VM's
run strategy (conditions "Updating target spec" / "Waiting for target update"); finally
``restoreInProgress`` cleared, Event ``VirtualMachineRestoreComplete`` ``Successfully completed
VirtualMachineRestore %s`` and ``status.complete`` (restore.go:296-321, 604-623). Events are
recorded as ``restore-controller`` (application.go:927); 3 workers (application.go:1102).

Not modelled: the restore PVCs themselves (kvsim has no PVCs; the names are written, no PVC is
created), DataVolumes, restores onto another VM, the restore's deletion. A failed step is
retried silently (a klog ``Unhandled Error`` line in v1.9.0, as for snapshots).
"""

from __future__ import annotations

from typing import Any

from kvsim import timefmt, virtapi
from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Process
from kvsim.logs import LoggedObject
from kvsim.runtime import Runtime
from kvsim.vm_controller import VM, VMI, Step, key_of, owner_reference
from kvsim.workqueue import WorkQueue, settle, start_workers

RESTORE = "VirtualMachineRestore"
CONTENT = "VirtualMachineSnapshotContent"
SNAPSHOT = "VirtualMachineSnapshot"
THREADS = 3  # application.go:1102
COMPONENT = "restore-controller"  # application.go:927
FINALIZER = "snapshot.kubevirt.io/vmrestore-protection"  # restore.go:61
LAST_RESTORE = "restore.kubevirt.io/lastRestoreUID"  # restore.go:67
GRACE_US = 300 * SECOND  # DefaultGracePeriod, snapshot/v1beta1/types.go:33
NOT_READY_EVENT = (
    "Restore target VMI still exists, please stop the restore target to proceed with restore"
)
STOP_TARGET = "Automatically stopping restore target for restore operation"
WAIT_GRACE = (
    "Waiting for target VM to be powered off. Please stop the restore target to proceed with "
    "restore, or the operation will fail after 5m0s"
)
GRACE_EXCEEDED = (
    "Restore target failed to be ready within 5m0s. Please power off the target VM before "
    "attempting restore"
)


def _condition(kind: str, status: str, reason: str, now: int) -> dict[str, Any]:
    stamp = timefmt.seconds(now)
    return {"lastTransitionTime": stamp, "reason": reason, "status": status, "type": kind}


def _conditions(
    status: Obj, progressing: str, ready: str, reason: str, now: int, ready_reason: str = ""
) -> None:
    """updateRestoreCondition of Progressing and Ready (util.go:84-101)."""
    pairs = (("Progressing", progressing, reason), ("Ready", ready, ready_reason or reason))
    for kind, value, why in pairs:
        conditions = status.setdefault("conditions", [])
        fresh = _condition(kind, value, why, now)
        for index, existing in enumerate(conditions):
            if existing["type"] == kind:
                if (existing["status"], existing["reason"]) != (value, why):
                    conditions[index] = fresh
                break
        else:
            conditions.append(fresh)


def restore_mark(restore: Obj) -> str:
    """getRestoreAnnotationValue (restore.go:1627-1629)."""
    return f"{restore['metadata']['name']}-{restore['metadata']['uid']}"


class RestoreController:
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on(RESTORE, lambda old, new: self.queue.add(key_of(new or old or {})))
        cache.on(VM, self._vm_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    def _vm_event(self, old: Obj | None, new: Obj | None) -> None:
        """handleVM (restore_base.go:222-239): every restore targeting the VM, finished or not,
        through the restore informer's ``vm`` index; no VMI handler."""
        if new is None:
            return
        namespace, name = new["metadata"]["namespace"], new["metadata"]["name"]
        for restore in self.cache.list(RESTORE):
            target = restore["spec"]["target"]
            if (restore["metadata"]["namespace"], target["name"]) == (namespace, name):
                self.queue.add(key_of(restore))

    def _execute_key(self, key: str) -> Process:
        try:
            retry = yield from self._update(key)
        except ApiError:
            retry, failed = 0, True
        else:
            failed = False
        yield self.rt.rng.randint(15, 250)
        settle(self.queue, key, "failed" if failed else None)
        if retry > 0:
            self.queue.add_after(key, retry)

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        result = yield from self.rt.api.call(self.rt.host, kind, verb, operation)
        return result

    def _write_status(self, restore: Obj, status: Obj) -> Step:
        if status == restore.get("status"):
            return None
        changed = clone(restore)
        changed["status"] = status
        yield from self._call(RESTORE, "update", lambda: self.rt.api.update(changed, "status"))
        return None

    # --- updateVMRestore (restore.go:200-322) -----------------------------------------------
    def _update(self, key: str) -> Step:
        rt = self.rt
        namespace, name = key.split("/", 1)
        restore = self.cache.get(RESTORE, namespace, name)
        if restore is None:
            return 0
        meta = restore["metadata"]
        rt.log.kv(
            rt.kernel.now,
            "info",
            "Updating VirtualMachineRestore",
            "restore.go:202",
            LoggedObject(namespace, name, meta["uid"]),
        )
        if restore.get("status") is None:
            status: Obj = {"complete": False}
            _conditions(
                status, "True", "False", "Initializing VirtualMachineRestore", rt.kernel.now
            )
            yield from self._write_status(restore, status)
            return 0
        if restore["status"].get("complete") or _failed(restore):
            return 0
        vm = self.cache.get(VM, namespace, restore["spec"]["target"]["name"])
        if vm is None:
            return 0
        restore = yield from self._own(restore, vm)
        if self.cache.get(VMI, namespace, vm["metadata"]["name"]) is not None:
            return (yield from self._not_ready(restore, vm))
        return (yield from self._restore(restore, vm))

    def _own(self, restore: Obj, vm: Obj) -> Step:
        changed = clone(restore)
        meta = changed["metadata"]
        if not meta.get("ownerReferences"):
            meta["ownerReferences"] = [owner_reference(vm)]
        if FINALIZER not in (meta.get("finalizers") or []):
            meta["finalizers"] = [*meta.get("finalizers", []), FINALIZER]
        if meta == restore["metadata"]:
            return restore
        return (yield from self._call(RESTORE, "update", lambda: self.rt.api.update(changed)))

    def _not_ready(self, restore: Obj, vm: Obj) -> Step:
        """handleVMRestoreTargetNotReady (restore.go:398-449)."""
        rt, now = self.rt, self.rt.kernel.now
        status = clone(restore["status"])
        policy = restore["spec"].get("targetReadinessPolicy", "WaitGracePeriod")
        if policy == "StopTarget":
            self.recorder.event(restore, "Warning", "RestoreTargetNotReady", STOP_TARGET)
            _conditions(status, "False", "False", STOP_TARGET, now)
            vm_name = f"{vm['metadata']['namespace']}/{vm['metadata']['name']}"
            rt.log.kv(now, "info", f"Stopping VM before restore [{vm_name}]", "restore.go:655")
            outcome = yield from self._call(
                VM,
                "stop",
                lambda: virtapi.stop(rt.api, vm["metadata"]["namespace"], vm["metadata"]["name"]),
            )
            if not outcome.accepted:
                return (yield from self._error(restore, outcome.detail))
            yield from self._write_status(restore, status)
            return 0
        created = timefmt.from_iso(restore["metadata"]["creationTimestamp"])
        if now > created + GRACE_US:
            self.recorder.event(
                restore,
                "Warning",
                "Operation failed",
                f"VirtualMachineRestore failed {GRACE_EXCEEDED}",
            )
            _conditions(status, "False", "False", GRACE_EXCEEDED, now)
            status["conditions"].append(_condition("Failure", "True", GRACE_EXCEEDED, now))
            yield from self._write_status(restore, status)
            return 0
        self.recorder.event(restore, "Warning", "RestoreTargetNotReady", NOT_READY_EVENT)
        _conditions(status, "False", "False", WAIT_GRACE, now)
        yield from self._write_status(restore, status)
        return 0  # no requeue: the next VM or restore event finds the grace period over

    def _error(self, restore: Obj, message: str) -> Step:
        """doUpdateError (restore.go:324-343)."""
        status = clone(restore["status"])
        _conditions(status, "False", "False", message, self.rt.kernel.now)
        event = f"VirtualMachineRestore encountered error {message}"
        self.recorder.event(restore, "Warning", "VirtualMachineRestoreError", event)
        yield from self._write_status(restore, status)
        raise ApiError(500, "InternalError", message)

    def _restore(self, restore: Obj, vm: Obj) -> Step:
        now = self.rt.kernel.now
        status = clone(restore["status"])
        marked = (vm["metadata"].get("annotations") or {}).get(LAST_RESTORE) == restore_mark(
            restore
        )
        if not marked and (vm.get("status") or {}).get("restoreInProgress") is None:
            vm = yield from self._set_in_progress(vm, restore["metadata"]["name"])
        content = self._content(restore)
        if content is None:
            return (yield from self._error(restore, "snapshot content not found"))
        if "restores" not in status:
            status["restores"] = _volume_restores(restore, content)
            _conditions(status, "True", "False", "Creating new PVCs", now, "Waiting for new PVCs")
            yield from self._write_status(restore, status)
            return 0
        if not marked:
            yield from self._update_target(restore, vm, content, status["restores"])
            _conditions(
                status, "True", "False", "Updating target spec", now, "Waiting for target update"
            )
            yield from self._write_status(restore, status)
            return 0
        vm = yield from self._set_in_progress(vm, None)
        message = f"Successfully completed VirtualMachineRestore {restore['metadata']['name']}"
        self.recorder.event(restore, "Normal", "VirtualMachineRestoreComplete", message)
        status.update(complete=True, restoreTime=timefmt.seconds(now))
        _conditions(status, "False", "True", "Operation complete", now)
        yield from self._write_status(restore, status)
        return 0

    def _content(self, restore: Obj) -> Obj | None:
        namespace = restore["metadata"]["namespace"]
        snapshot = self.cache.get(
            SNAPSHOT, namespace, restore["spec"]["virtualMachineSnapshotName"]
        )
        name = ((snapshot or {}).get("status") or {}).get("virtualMachineSnapshotContentName")
        return self.cache.get(CONTENT, namespace, name) if name else None

    def _set_in_progress(self, vm: Obj, name: str | None) -> Step:
        """UpdateRestoreInProgress / UpdateDoneRestore (restore.go:604-648)."""
        changed = clone(vm)
        changed.setdefault("status", {})
        if name is None:
            changed["status"].pop("restoreInProgress", None)
            changed["status"].pop("memoryDumpRequest", None)
        else:
            changed["status"]["restoreInProgress"] = name
        if changed["status"] == vm.get("status"):
            return vm
        return (yield from self._call(VM, "update", lambda: self.rt.api.update(changed, "status")))

    def _update_target(self, restore: Obj, vm: Obj, content: Obj, restores: list[Obj]) -> Step:
        """generateRestoredVMSpec / reconcileSpec (restore.go:894-1031): the snapshot's spec,
        the PVC volumes on their restored claims, the VM's own run strategy kept."""
        source = content["spec"]["source"]["virtualMachine"]
        spec = clone(source["spec"])
        claims = {r["volumeName"]: r["persistentVolumeClaim"] for r in restores}
        for volume in spec["template"]["spec"].get("volumes") or []:
            if volume["name"] in claims and "persistentVolumeClaim" in volume:
                volume["persistentVolumeClaim"]["claimName"] = claims[volume["name"]]
        for field_name in ("runStrategy", "running"):
            spec.pop(field_name, None)
            if field_name in vm["spec"]:
                spec[field_name] = vm["spec"][field_name]
        changed = clone(vm)
        changed["spec"] = spec
        changed["metadata"].setdefault("annotations", {})[LAST_RESTORE] = restore_mark(restore)
        return (yield from self._call(VM, "update", lambda: self.rt.api.update(changed)))


def _failed(restore: Obj) -> bool:
    conditions = (restore.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Failure" and c.get("status") == "True" for c in conditions)


def _volume_restores(restore: Obj, content: Obj) -> list[Obj]:
    """updateVMRestoreRestores (restore.go): one restore per volume backup, its claim
    ``restore-<restore uid>-<volume>`` (restore.go:166)."""
    uid = restore["metadata"]["uid"]
    return [
        {
            "persistentVolumeClaim": f"restore-{uid}-{backup['volumeName']}",
            "volumeName": backup["volumeName"],
            "volumeSnapshotName": backup["volumeSnapshotName"],
        }
        for backup in content["spec"].get("volumeBackups") or []
    ]
