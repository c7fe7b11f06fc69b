"""The VirtualMachineInstanceReplicaSet controller of v1.9.0
(pkg/virt-controller/watch/replicaset/replicaset.go), which the leader runs with 3 workers
(application.go:1078) on the queue ``virt-controller-replicaset``.

``execute`` (replicaset.go:154-246): the first reconcile only stamps the api-version annotations
(169-176); then, with its expectations met and the set not paused, ``scale`` (248-330) compares
the active VMIs (not final, not deleting, not ``Ready=False``/``PodTerminating``, 332-338) with
``spec.replicas``: missing ones are created with ``generateName`` = the template's name, else its
``generateName``, else the set's name, used verbatim (701-711) — so a set ``web`` makes VMIs
``web`` + 5 random characters — and a controller reference to the set; Event
``SuccessfulCreate`` ``Started the virtual machine by creating the new virtual machine instance
%v`` (name, 317). Excess ones are deleted, the first ones in cache order (271-293): Event
``SuccessfulDelete`` ``Stopped the virtual machine by deleting the virtual machine instance %v``
(UID, 290). Finished VMIs are then deleted (762-805): ``Deleted finished virtual machine: %v``
(UID, 793). Nothing is printed at default verbosity on these paths; a failure prints ``Scaling
the replicaset failed.`` (237, no reason key) and ``re-enqueuing VirtualMachineInstanceReplicaSet
%v`` (145, with the reason). Events are recorded as ``virtualmachinereplicaset-controller``
(application.go:791). The creations run one after another here (goroutines in v1.9.0).
Not modelled: adoption and release of VMIs by label, pausing.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import Process
from kvsim.runtime import Runtime
from kvsim.vm_controller import (
    API_VERSION_ANNOTATIONS,
    VMI,
    Step,
    controller_ref,
    key_of,
    logged,
    owner_reference,
)
from kvsim.workqueue import WorkQueue, settle, start_workers

RS = "VirtualMachineInstanceReplicaSet"
THREADS = 3  # application.go:1078
COMPONENT = "virtualmachinereplicaset-controller"  # application.go:791
BURST = 250  # controller.go:47-51


def base_name(rs: Obj) -> str:
    """getVirtualMachineBaseName (replicaset.go:701-711)."""
    meta = rs["spec"]["template"].get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName") or rs["metadata"]["name"])


def active(vmi: Obj) -> bool:
    """filterActiveVMIs (replicaset.go:332-338)."""
    if vmi.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return not vmi["metadata"].get("deletionTimestamp") and not _terminating(vmi)


def finished(vmi: Obj) -> bool:
    """filterFinishedVMIs and filterUnkownVMIs (replicaset.go:348-360)."""
    if vmi["metadata"].get("deletionTimestamp"):
        return False
    return vmi.get("status", {}).get("phase") in ("Succeeded", "Failed") or _terminating(vmi)


def _terminating(vmi: Obj) -> bool:
    return any(
        c.get("type") == "Ready"
        and c.get("status") == "False"
        and c.get("reason") == "PodTerminating"
        for c in vmi.get("status", {}).get("conditions") or []
    )


class ReplicaSetController:
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.expectations = Expectations()
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on(RS, self._rs_event)
        cache.on(VMI, self._vmi_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    def _rs_event(self, old: Obj | None, new: Obj | None) -> None:
        rs = new or old
        assert rs is not None
        self.queue.add(key_of(rs))

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        """addVirtualMachineInstance / updateVirtualMachineInstance / deleteVirtualMachineInstance
        (replicaset.go:426-550), for VMIs the set controls."""
        vmi = new or old
        assert vmi is not None
        ref = controller_ref(vmi)
        if ref is None or ref.get("kind") != RS:
            return
        key = f"{vmi['metadata']['namespace']}/{ref['name']}"
        if new is None or new["metadata"].get("deletionTimestamp"):
            self.expectations.deletion_observed(key, key_of(vmi))
        elif old is None:
            self.expectations.creation_observed(key)
        self.queue.add(key)

    def _execute_key(self, key: str) -> Process:
        try:
            err = yield from self._execute(key)
        except ApiError as exc:
            err = str(exc)
        yield self.rt.rng.randint(15, 250)
        if err is not None:
            msg = f"re-enqueuing VirtualMachineInstanceReplicaSet {key}"
            self.rt.log.kv(self.rt.kernel.now, "info", msg, "replicaset.go:145", reason=err)
        settle(self.queue, key, err)

    def _call(self, verb: str, operation: Any, kind: str = VMI) -> Step:
        result = yield from self.rt.api.call(self.rt.host, kind, verb, operation)
        return result

    def _execute(self, key: str) -> Step:
        namespace, name = key.split("/", 1)
        rs = self.cache.get(RS, namespace, name)
        if rs is None:
            self.expectations.delete(key)
            return None
        annotations = rs["metadata"].setdefault("annotations", {})
        if annotations.get(API_VERSION_ANNOTATIONS[0]) != "v1":
            for annotation in API_VERSION_ANNOTATIONS:
                annotations[annotation] = "v1"
            yield from self._call("update", lambda: self.rt.api.update(rs), RS)
            return None
        needs_sync = self.expectations.satisfied(key, self.rt.kernel.now)
        vmis = self.cache.list(VMI, lambda v: _owned(v, rs))
        running = [v for v in vmis if active(v)]
        err = None
        if (
            needs_sync
            and not rs["spec"].get("paused")
            and not rs["metadata"].get("deletionTimestamp")
        ):
            err = yield from self._scale(rs, running)
            done = [v for v in vmis if finished(v)]
            if done and err is None:
                err = yield from self._clean_finished(rs, done)
        if err is not None:
            self.rt.log.kv(
                self.rt.kernel.now,
                "error",
                "Scaling the replicaset failed.",
                "replicaset.go:237",
                logged(rs),
            )
        try:
            yield from self._update_status(rs, running, err)
        except ApiError as exc:  # logged, not retried: execute returns the scale error only
            msg = "Updating the replicaset status failed."
            self.rt.log.kv(
                self.rt.kernel.now, "error", msg, "replicaset.go:242", logged(rs), str(exc)
            )
        return err

    def _scale(self, rs: Obj, vmis: list[Obj]) -> Step:
        diff = len(vmis) - int(rs["spec"].get("replicas", 1))
        count = min(abs(diff), BURST)
        if diff > 0:
            return (yield from self._delete(rs, vmis[:count]))
        if diff < 0:
            return (yield from self._create(rs, count))
        return None

    def _create(self, rs: Obj, count: int) -> Step:
        key, first = key_of(rs), None
        self.expectations.expect_creations(key, count, self.rt.kernel.now)
        for _ in range(count):
            vmi = _new_vmi(rs)
            try:
                created = yield from self._call("create", lambda vmi=vmi: self.rt.api.create(vmi))
            except ApiError as exc:
                self.expectations.creation_observed(key)
                msg = f"Error creating virtual machine instance: {exc}"
                self.recorder.event(rs, "Warning", "FailedCreate", msg)
                first = first or str(exc)
                continue
            made = created["metadata"]["name"]
            msg = f"Started the virtual machine by creating the new virtual machine instance {made}"
            self.recorder.event(rs, "Normal", "SuccessfulCreate", msg)
        return first

    def _delete(self, rs: Obj, chosen: list[Obj], finished_ones: bool = False) -> Step:
        key, first = key_of(rs), None
        self.expectations.expect_deletions(key, [key_of(v) for v in chosen], self.rt.kernel.now)
        for vmi in chosen:
            namespace, name = vmi["metadata"]["namespace"], vmi["metadata"]["name"]
            try:
                yield from self._call("delete", partial(self.rt.api.delete, VMI, namespace, name))
            except ApiError as exc:
                self.expectations.deletion_observed(key, key_of(vmi))
                what = "finished virtual machine" if finished_ones else "virtual machine instance"
                self.recorder.event(
                    rs, "Warning", "FailedDelete", f"Error deleting {what} {name}: {exc}"
                )
                first = first or str(exc)
                continue
            uid = vmi["metadata"]["uid"]
            msg = (
                f"Deleted finished virtual machine: {uid}"
                if finished_ones
                else f"Stopped the virtual machine by deleting the virtual machine instance {uid}"
            )
            self.recorder.event(rs, "Normal", "SuccessfulDelete", msg)
        return first

    def _clean_finished(self, rs: Obj, done: list[Obj]) -> Step:
        return (yield from self._delete(rs, done[:BURST], finished_ones=True))

    def _update_status(self, rs: Obj, vmis: list[Obj], err: str | None) -> Step:
        """updateStatus (replicaset.go:612-662): written only when something changed."""
        status = clone(rs.get("status") or {})
        labels = (rs["spec"].get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        ready = sum(1 for v in vmis if _ready(v))
        failing = any(c.get("type") == "ReplicaFailure" for c in status.get("conditions") or [])
        if (
            (len(vmis), ready) == (status.get("replicas", 0), status.get("readyReplicas", 0))
            and (err is not None) == failing
            and selector == status.get("labelSelector")
        ):
            return None
        status.update(labelSelector=selector, replicas=len(vmis), readyReplicas=ready)
        if err is not None and not failing:  # checkFailure (replicaset.go:680-700)
            short = len(vmis) < int(rs["spec"].get("replicas", 1))
            failure = {"type": "ReplicaFailure", "status": "True", "message": err}
            failure["reason"] = "FailedCreate" if short else "FailedDelete"
            status.setdefault("conditions", []).append(failure)
        elif err is None and failing:
            kept = [c for c in status["conditions"] if c.get("type") != "ReplicaFailure"]
            status["conditions"] = kept
            if not kept:
                status.pop("conditions")
        changed = clone(rs)
        changed["status"] = status
        yield from self._call("update", lambda: self.rt.api.update(changed, "status"), RS)
        return None


def _owned(vmi: Obj, rs: Obj) -> bool:
    ref = controller_ref(vmi)
    return ref is not None and ref.get("uid") == rs["metadata"]["uid"]


def _ready(vmi: Obj) -> bool:
    conditions = vmi.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _new_vmi(rs: Obj) -> Obj:
    """The VMI scale creates (replicaset.go:294-320): the template's metadata and spec."""
    template = clone(rs["spec"]["template"])
    meta = template.get("metadata") or {}
    meta.pop("name", None)
    meta.pop("creationTimestamp", None)
    meta.update(
        generateName=base_name(rs),
        namespace=rs["metadata"]["namespace"],
        ownerReferences=[owner_reference(rs, RS)],
    )
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": VMI,
        "metadata": meta,
        "spec": template["spec"],
        "status": {},
    }
