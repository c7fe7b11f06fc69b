"""The VirtualMachineSnapshot controller of v1.9.0 (pkg/storage/snapshot/snapshot.go, source.go),
for VM sources, on the paths a VM's timeline shows (``Cluster(snapshots=True)``).

A snapshot's reconciles (``updateVMSnapshot``, snapshot.go:174-265): the first adds the finalizer
``snapshot.kubevirt.io/vmsnapshot-protection`` and initialises the status (phase
``InProgress``); the next **locks** the VM (source.go:145-220): ``status.snapshotInProgress``
(UpdateStatus), then ``Adding VM snapshot finalizer to %s`` (VM name, no object, source.go:202)
and the VM finalizer ``snapshot.kubevirt.io/snapshot-source-protection`` (source.go:54), and
retries in 5 s (snapshot.go:68, 211); the next creates the VirtualMachineSnapshotContent
``vmsnapshot-content-<snapshot uid>`` (Event ``SuccessfulVirtualMachineSnapshotContentCreate``
``Successfully created VirtualMachineSnapshotContent %s`` on the snapshot, snapshot.go:677).

The content's reconcile (:mod:`kvsim.snapshot_content`) freezes the guest, creates the
VolumeSnapshots and unfreezes it once they are cut. The snapshot then turns
``Succeeded`` (snapshot.go:809-815) and its next reconcile **unlocks** the VM (finalizer, then
``snapshotInProgress``; source.go:222-252).

The three loops (snapshot, content, VM) share one queue here, with 6 workers (v1.9.0: a queue
each, 6 workers each; application.go:1099). A failed reconcile is retried through the rate
limiter without a line: v1.9.0 hands the error to ``utilruntime.HandleError``, a klog line kvsim
does not write. PVCs, VolumeSnapshotClasses and the volume checks of the lock are not modelled:
every PVC volume counts as bound and snapshotable.
"""

from __future__ import annotations

from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.guest_agent import connected
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Process
from kvsim.restores import RESTORE, RestoreController
from kvsim.runtime import Runtime
from kvsim.snapshot_content import (
    CONTENT,
    RETRY_US,
    SNAPSHOT,
    SNAPSHOT_API,
    VOLUME_SNAPSHOT,
    ContentSync,
)
from kvsim.vm_controller import VM, VMI, Step
from kvsim.workqueue import WorkQueue, settle, start_workers

WORKLOAD_KINDS = (
    "VirtualMachinePool",
    "VirtualMachineInstanceReplicaSet",
    SNAPSHOT,
    CONTENT,
    RESTORE,
    VOLUME_SNAPSHOT,
)
THREADS = 6  # application.go:1099
COMPONENT = "snapshot-controller"  # application.go:904
SNAPSHOT_FINALIZER = "snapshot.kubevirt.io/vmsnapshot-protection"  # snapshot.go:50
CONTENT_FINALIZER = "snapshot.kubevirt.io/vmsnapshotcontent-protection"  # snapshot.go:52
SOURCE_FINALIZER = "snapshot.kubevirt.io/snapshot-source-protection"  # source.go:54
DEADLINE_US = 300 * SECOND  # DefaultFailureDeadline, snapshot/v1beta1/types.go:32
INDICATIONS = {  # snapshot.go:74-81
    "GuestAgent": "Guest agent was active and attempted to quiesce the filesystem for "
    "application consistency.",
    "NoGuestAgent": "Guest agent was not available. Snapshot is crash-consistent and may not be "
    "application-consistent.",
    "Online": "Snapshot taken while the VM was running. Consistency depends on guest-agent "
    "quiescing.",
}

__all__ = ["WORKLOAD_KINDS", "RestoreController", "SnapshotController"]


def content_name(snapshot: Obj) -> str:
    """GetVMSnapshotContentName (snapshot.go:159-161)."""
    return f"vmsnapshot-content-{snapshot['metadata']['uid']}"


def pvc_volumes(vm: Obj) -> list[tuple[str, str]]:
    """(volume, claim) of the VM's PVC volumes."""
    out = []
    for volume in vm["spec"]["template"]["spec"].get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            out.append((str(volume["name"]), str(claim)))
    return out


def progressing(snapshot: Obj) -> bool:
    return (snapshot.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _condition(kind: str, status: str, reason: str, now: int) -> dict[str, Any]:
    stamp = timefmt.seconds(now)
    return {"lastTransitionTime": stamp, "reason": reason, "status": status, "type": kind}


def set_condition(status: Obj, condition: dict[str, Any]) -> None:
    """updateCondition (util.go:84-101): replaced only when status or reason change."""
    conditions = status.setdefault("conditions", [])
    for index, existing in enumerate(conditions):
        if existing["type"] == condition["type"]:
            if (existing["status"], existing["reason"]) != (
                condition["status"],
                condition["reason"],
            ):
                conditions[index] = condition
            return
    conditions.append(condition)


class SnapshotController(ContentSync):
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on(SNAPSHOT, lambda old, new: self._enqueue("snapshot", new or old))
        cache.on(CONTENT, self._content_event)
        cache.on(VOLUME_SNAPSHOT, self._volume_snapshot_event)
        cache.on(VM, self._vm_event)
        cache.on(VMI, self._vm_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    # --- event handlers (snapshot_base.go) ---------------------------------------------------
    def _enqueue(self, what: str, obj: Obj | None) -> None:
        if obj is not None:
            self.queue.add(f"{what}/{obj['metadata']['namespace']}/{obj['metadata']['name']}")

    def _content_event(self, old: Obj | None, new: Obj | None) -> None:
        content = new or old
        assert content is not None
        self._enqueue("content", content)
        namespace = content["metadata"]["namespace"]
        self.queue.add(f"snapshot/{namespace}/{content['spec']['virtualMachineSnapshotName']}")

    def _volume_snapshot_event(self, old: Obj | None, new: Obj | None) -> None:
        vs = new or old
        assert vs is not None
        for ref in vs["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == CONTENT:
                self.queue.add(f"content/{vs['metadata']['namespace']}/{ref['name']}")

    def _vm_event(self, old: Obj | None, new: Obj | None) -> None:
        """handleVM / handleVMI (snapshot_base.go:460-503): every snapshot of the VM, through
        the snapshot informer's ``vm`` index."""
        obj = new or old
        assert obj is not None
        namespace, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        for snapshot in self.cache.list(SNAPSHOT):
            source = snapshot["spec"]["source"]
            if (snapshot["metadata"]["namespace"], source["name"]) == (namespace, name):
                self._enqueue("snapshot", snapshot)

    # --- the work loop (ProcessWorkItem) ----------------------------------------------------
    def _execute_key(self, key: str) -> Process:
        what, namespace, name = key.split("/", 2)
        handler = self._update_snapshot if what == "snapshot" else self._update_content
        try:
            retry = yield from handler(namespace, name)
        except ApiError:
            retry, err = 0, True
        else:
            err = False
        yield self.rt.rng.randint(15, 250)
        settle(self.queue, key, "failed" if err else None)
        if retry > 0 and not err:
            self.queue.add_after(key, retry)

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        result = yield from self.rt.api.call(self.rt.host, kind, verb, operation)
        return result

    def _say(self, level: str, msg: str, pos: str) -> None:
        self.rt.log.kv(self.rt.kernel.now, level, msg, pos)

    def _patch(self, kind: str, obj: Obj, mutate: Any) -> Step:
        meta = obj["metadata"]
        api = self.rt.api
        return (
            yield from self._call(
                kind, "patch", lambda: api.patch(kind, meta["namespace"], meta["name"], mutate)
            )
        )

    # --- updateVMSnapshot (snapshot.go:174-265) ---------------------------------------------
    def _update_snapshot(self, namespace: str, name: str) -> Step:
        snapshot = self.cache.get(SNAPSHOT, namespace, name)
        if snapshot is None:
            return 0
        vm = self.cache.get(VM, namespace, snapshot["spec"]["source"]["name"])
        content = self.cache.get(CONTENT, namespace, content_name(snapshot))
        if SNAPSHOT_FINALIZER not in (snapshot["metadata"].get("finalizers") or []):
            snapshot = yield from self._patch(
                SNAPSHOT, snapshot, _add_finalizer(SNAPSHOT_FINALIZER)
            )
        retry = 0
        if snapshot.get("status") is not None and vm is not None:
            if progressing(snapshot):
                if not _locked(vm, snapshot):
                    vm = yield from self._lock(vm, snapshot)
                    retry = RETRY_US
                elif content is None:
                    yield from self._create_content(snapshot, vm)
            elif _locked(vm, snapshot):
                vm = yield from self._unlock(vm)
        yield from self._update_status(snapshot, vm, content)
        if retry:
            return retry
        created = timefmt.from_iso(snapshot["metadata"]["creationTimestamp"])
        return created + DEADLINE_US - self.rt.kernel.now

    def _lock(self, vm: Obj, snapshot: Obj) -> Step:
        """Lock (source.go:145-220)."""
        name = snapshot["metadata"]["name"]
        holder = (vm.get("status") or {}).get("snapshotInProgress")
        if holder and holder != name:
            return vm
        if holder is None:
            vm = clone(vm)
            vm.setdefault("status", {})["snapshotInProgress"] = name
            vm = yield from self._call(VM, "update", lambda: self.rt.api.update(vm, "status"))
        if SOURCE_FINALIZER not in (vm["metadata"].get("finalizers") or []):
            self._say(
                "info", f"Adding VM snapshot finalizer to {vm['metadata']['name']}", "source.go:202"
            )
            vm = yield from self._patch(VM, vm, _add_finalizer(SOURCE_FINALIZER))
        return vm

    def _unlock(self, vm: Obj) -> Step:
        """Unlock (source.go:222-252): the finalizer, then ``snapshotInProgress``."""
        if SOURCE_FINALIZER in (vm["metadata"].get("finalizers") or []):
            vm = yield from self._patch(VM, vm, _remove_finalizer(SOURCE_FINALIZER))
        vm = clone(vm)
        vm["status"].pop("snapshotInProgress", None)
        return (yield from self._call(VM, "update", lambda: self.rt.api.update(vm, "status")))

    def _create_content(self, snapshot: Obj, vm: Obj) -> Step:
        """createContent (snapshot.go:620-686)."""
        namespace, uid = snapshot["metadata"]["namespace"], snapshot["metadata"]["uid"]
        source = {"metadata": {k: vm["metadata"][k] for k in ("name", "namespace", "uid")}}
        source["spec"] = clone(vm["spec"])
        content = {
            "apiVersion": SNAPSHOT_API,
            "kind": CONTENT,
            "metadata": {
                "name": content_name(snapshot),
                "namespace": namespace,
                "finalizers": [CONTENT_FINALIZER],
            },
            "spec": {
                "source": {"virtualMachine": source},
                "virtualMachineSnapshotName": snapshot["metadata"]["name"],
                "volumeBackups": [
                    {
                        "persistentVolumeClaim": {"metadata": {"name": claim}},
                        "volumeName": volume,
                        "volumeSnapshotName": f"vmsnapshot-{uid}-volume-{volume}",
                    }
                    for volume, claim in pvc_volumes(vm)
                ],
            },
        }
        try:
            yield from self._call(CONTENT, "create", lambda: self.rt.api.create(content))
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise
        message = f"Successfully created VirtualMachineSnapshotContent {content_name(snapshot)}"
        self.recorder.event(
            snapshot, "Normal", "SuccessfulVirtualMachineSnapshotContentCreate", message
        )

    def _update_status(self, snapshot: Obj, vm: Obj | None, content: Obj | None) -> Step:
        """updateSnapshotStatus (snapshot.go:776-854)."""
        now = self.rt.kernel.now
        status = clone(snapshot.get("status") or {"readyToUse": False})
        if vm is not None:
            status["sourceUID"] = vm["metadata"]["uid"]
        if content is not None and content.get("status") is not None:
            status["virtualMachineSnapshotContentName"] = content["metadata"]["name"]
            for field_name in ("creationTime", "readyToUse"):
                if field_name in content["status"]:
                    status[field_name] = content["status"][field_name]
        if status.get("phase") == "Succeeded" or status.get("creationTime"):
            status["phase"] = "Succeeded"
            set_condition(status, _condition("Progressing", "False", "Operation complete", now))
        else:
            status["phase"] = "InProgress"
            self._in_progress(status, snapshot, vm, now)
        ready = "True" if status.get("readyToUse") else "False"
        set_condition(
            status, _condition("Ready", ready, "Ready" if ready == "True" else "Not ready", now)
        )
        if status == snapshot.get("status"):
            return None
        changed = clone(snapshot)
        changed["status"] = status
        yield from self._call(SNAPSHOT, "update", lambda: self.rt.api.update(changed, "status"))
        return None

    def _in_progress(self, status: Obj, snapshot: Obj, vm: Obj | None, now: int) -> None:
        if vm is None:
            set_condition(status, _condition("Progressing", "False", "Source does not exist", now))
            return
        locked = _locked(vm, snapshot)
        reason = "Source locked and operation in progress" if locked else "Source not locked"
        set_condition(status, _condition("Progressing", "True" if locked else "False", reason, now))
        vmi = self.cache.get(VMI, vm["metadata"]["namespace"], vm["metadata"]["name"])
        if vmi is None:
            status.pop("indications", None)
            status.pop("sourceIndications", None)
            return
        agent = "GuestAgent" if connected(vmi) else "NoGuestAgent"
        found = sorted({*(status.get("indications") or []), "Online", agent})
        status["indications"] = found
        status["sourceIndications"] = [{"indication": i, "message": INDICATIONS[i]} for i in found]


def _locked(vm: Obj, snapshot: Obj) -> bool:
    """sourceState.locked (source.go:112-114)."""
    holder = (vm.get("status") or {}).get("snapshotInProgress")
    finalizers = vm["metadata"].get("finalizers") or []
    return holder == snapshot["metadata"]["name"] and SOURCE_FINALIZER in finalizers


def _add_finalizer(finalizer: str) -> Any:
    def add(current: Obj) -> None:
        current["metadata"]["finalizers"] = [*current["metadata"].get("finalizers", []), finalizer]

    return add


def _remove_finalizer(finalizer: str) -> Any:
    def remove(current: Obj) -> None:
        kept = [f for f in current["metadata"].get("finalizers") or [] if f != finalizer]
        current["metadata"]["finalizers"] = kept

    return remove
