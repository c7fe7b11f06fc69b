"""The VirtualMachineInstance controller of v1.9.0 (pkg/virt-controller/watch/vmi/), for what
these VMIs need: the launcher pod, the phases it decides, the finalizer it holds.

It prints nothing at default verbosity on the paths modelled here except ``reenqueuing
VirtualMachineInstance`` (vmi.go:288) on a failed reconcile: the VMI's history is told by its
``phaseTransitionTimestamps`` and Events.

Phases (lifecycle.go:256-613, the switch is on the phase at reconcile start): Pending with a
launcher pod → Scheduling; Scheduling with the pod Ready → Scheduled (node name set); Scheduling
with the pod down or gone → Failed; Running or Scheduled with no pod → Failed by patch (no
timestamp); final with every pod gone → the foreground-delete finalizer is removed. A deleted
VMI has its pods deleted first (lifecycle.go:70-76). Transitions written by Update append a
phase transition timestamp; the patch path (phase Running or Scheduled at reconcile start)
does not.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from kvsim import launcher, timefmt
from kvsim.apiserver import VMI_FINALIZER, ApiError, Obj, clone
from kvsim.expectations import Expectations
from kvsim.kernel import Process
from kvsim.runtime import Runtime
from kvsim.vm_controller import API_VERSION_ANNOTATIONS, VM, VM_FINALIZER, Step, controller_ref
from kvsim.workqueue import WorkQueue, serve, settle

VMI, POD = "VirtualMachineInstance", "Pod"
THREADS = 10  # application.go:1075
INVALID_PATCH = "the server rejected our request due to an error in our request"


def requeue_vmi(rt: Runtime, queue: WorkQueue, key: str, err: str | None, pos: str) -> None:
    """After a reconcile of a VMI key: a failure is logged (``log.Log.Reason(err).Infof``, level
    info, no object) and retried; the disruption budget controller prints the same text."""
    if err is not None:
        msg = f"reenqueuing VirtualMachineInstance {key}"
        rt.log.kv(rt.kernel.now, "info", msg, pos, reason=err)
    settle(queue, key, err)


def launcher_pods(rt: Runtime, vmi: Obj) -> list[Obj]:
    uid = vmi["metadata"]["uid"]
    return rt.informers.list(
        POD, lambda pod: (pod["metadata"].get("labels") or {}).get("kubevirt.io/created-by") == uid
    )


def pod_down(pod: Obj) -> bool:
    """IsPodDownOrGoingDown: terminating, or its phase is final."""
    return bool(pod["metadata"].get("deletionTimestamp")) or pod.get("status", {}).get("phase") in (
        "Succeeded",
        "Failed",
    )


def pod_ready(pod: Obj) -> bool:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


class VMIController:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.queue = WorkQueue(rt.kernel)
        # podExpectations (vmi.go:94): a created pod not yet seen holds back the next sync. Its
        # V4 lines (expectations.go) are not printed: kvsim prints the VM controller's only.
        self.pod_expectations = Expectations()
        rt.informers.on(VMI, self._vmi_event)
        rt.informers.on(POD, self._pod_event)

    def run(self) -> Process:
        rt = self.rt
        yield rt.informers.synced
        for _ in range(THREADS):
            rt.kernel.spawn(rt.host, serve(self.queue, self._execute_key))

    def _execute_key(self, key: str) -> Process:
        """Execute (vmi.go:275-293)."""
        err = yield from self._execute(key)
        requeue_vmi(self.rt, self.queue, key, err, "vmi.go:288")

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}")

    def _pod_event(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        labels = pod["metadata"].get("labels") or {}
        if labels.get("kubevirt.io") != "virt-launcher":
            return
        key = f"{pod['metadata']['namespace']}/{labels.get('vm.kubevirt.io/name', '')}"
        if old is None:
            self.pod_expectations.creation_observed(key)  # addPod (vmi.go:390)
        self.queue.add(key)

    # --- one reconcile ---------------------------------------------------------------------
    def _execute(self, key: str) -> Step:
        rt = self.rt
        namespace, name = key.split("/", 1)
        vmi = rt.informers.get(VMI, namespace, name)
        if vmi is None:
            self.pod_expectations.delete(key)  # vmi.go:308
            return None
        annotations = vmi["metadata"].setdefault("annotations", {})
        if annotations.get(API_VERSION_ANNOTATIONS[0]) != "v1":  # vmi.go:320-331
            for annotation in API_VERSION_ANNOTATIONS:
                annotations[annotation] = "v1"
            return (yield from self._write(vmi, vmi, "update"))
        if not self.pod_expectations.satisfied(key, rt.kernel.now):
            return None  # needsSync (vmi.go:334-338): neither sync nor status update
        pods = launcher_pods(rt, vmi)
        node = vmi.get("status", {}).get("nodeName")  # CurrentVMIPod: a pod on the VMI's node
        here = [p for p in pods if not node or p["spec"].get("nodeName") == node]
        pod = next((p for p in here if not p["metadata"].get("deletionTimestamp")), None)
        pod = pod or (here[0] if here else None)
        try:
            sync_err = yield from self._sync(vmi, pod, pods)
        except ApiError as exc:
            return str(exc)
        err = yield from self._update_status(vmi, pod, pods)
        return err or sync_err

    def _sync(self, vmi: Obj, pod: Obj | None, pods: list[Obj]) -> Step:
        rt = self.rt
        if vmi["metadata"].get("deletionTimestamp"):
            for each in pods:
                if each["metadata"].get("deletionTimestamp"):
                    continue
                pod_name = each["metadata"]["name"]
                yield from rt.api.call(
                    rt.host,
                    POD,
                    "delete",
                    partial(rt.api.delete, POD, vmi["metadata"]["namespace"], pod_name, 30),
                )
                rt.recorder.event(
                    vmi, "Normal", "SuccessfulDelete", f"Deleted virtual machine pod {pod_name}"
                )
            return None
        if pod is not None and phase_of(vmi) == "Running":
            yield from self._sync_node_label(vmi, pod)
        second = self._fault_applies("second_launcher_pod", vmi) and len(pods) == 1
        if phase_of(vmi) in ("Succeeded", "Failed") or (pod is not None and not second):
            return None
        if phase_of(vmi) not in ("", "Pending", *(("Scheduling",) if second else ())):
            return None
        manifest = launcher.render(vmi, rt.rng, image=rt.launcher_image)
        key = f"{vmi['metadata']['namespace']}/{vmi['metadata']['name']}"
        self.pod_expectations.expect_creations(key, 1, rt.kernel.now)  # lifecycle.go:1077
        try:
            created = yield from rt.api.call(
                rt.host, POD, "create", lambda: rt.api.create(manifest)
            )
        except ApiError as exc:
            self.pod_expectations.creation_observed(key)
            rt.recorder.event(vmi, "Warning", "FailedCreate", f"Error creating pod: {exc}")
            return f"failed to create virtual machine pod: {exc}"
        rt.recorder.event(
            vmi,
            "Normal",
            "SuccessfulCreate",
            f"Created virtual machine pod {created['metadata']['name']}",
        )
        return None

    def _sync_node_label(self, vmi: Obj, pod: Obj) -> Process:
        """The dynamic label ``kubevirt.io/nodeName`` synced from the VMI to its pod
        (lifecycle.go:800-816), for a pod that carries another node's: a migration target,
        rendered with the source's labels. (A pod rendered without the label keeps none here.)"""
        rt, label = self.rt, "kubevirt.io/nodeName"
        wanted = (vmi["metadata"].get("labels") or {}).get(label)
        have = (pod["metadata"].get("labels") or {}).get(label)
        if have is None or wanted is None or have == wanted:
            return
        meta = pod["metadata"]

        def relabel(current: Obj) -> None:
            if (current["metadata"].get("labels") or {}).get(label) != have:
                raise ApiError(422, "Invalid", INVALID_PATCH)
            current["metadata"]["labels"][label] = wanted

        yield from rt.api.call(
            rt.host,
            POD,
            "patch",
            lambda: rt.api.patch(POD, meta["namespace"], meta["name"], relabel),
        )

    def _update_status(self, vmi: Obj, pod: Obj | None, pods: list[Obj]) -> Step:
        rt = self.rt
        updated = clone(vmi)
        status = updated.setdefault("status", {})
        current = phase_of(vmi)
        exists = pod is not None  # controller.PodExists: a terminating pod still exists
        if current in ("", "Pending"):
            if pod is not None:
                status["phase"] = "Scheduling"
            elif vmi["metadata"].get("deletionTimestamp"):
                status["phase"] = "Failed"
        elif current == "Scheduling":
            if pod is None:
                status["phase"] = "Failed"
            elif (
                pod_ready(pod)
                and not vmi["metadata"].get("deletionTimestamp")
                and not pod_down(pod)
            ):
                node = pod["spec"].get("nodeName", "")
                status["phase"] = "Scheduled"
                status["nodeName"] = node
                updated["metadata"].setdefault("labels", {})["kubevirt.io/nodeName"] = node
            elif pod_down(pod):
                status["phase"] = "Failed"
        elif current in ("Succeeded", "Failed"):
            if not pods:
                finalizers = updated["metadata"].get("finalizers") or []
                updated["metadata"]["finalizers"] = [f for f in finalizers if f != VMI_FINALIZER]
            if not self._owner_exists(vmi):
                finalizers = updated["metadata"].get("finalizers") or []
                updated["metadata"]["finalizers"] = [f for f in finalizers if f != VM_FINALIZER]
        elif current in ("Running", "Scheduled") and not exists:
            status["phase"] = "Failed"
        elif (
            current == "Running"
            and self._fault_applies("phase_regression", vmi)
            and pod is not None
            and pod_ready(pod)
        ):
            status["phase"] = "Scheduled"  # the fault: a Running VMI taken back to Scheduled
        _eviction_requested(updated, rt.kernel.now)
        _ready_from_pod(updated, pod)
        if pod is not None:
            _memory_overhead_from_pod(updated, pod)
        if rt.workload_updates:
            _launcher_info(updated, pod, pods, rt.launcher_image)
        if current in ("Running", "Scheduled"):
            if updated != vmi:
                return (yield from self._write(vmi, updated, "patch"))
            return None
        _stamp_transition(vmi, updated, rt.kernel.now)
        if updated != vmi:
            return (yield from self._write(vmi, updated, "update"))
        return None

    def _owner_exists(self, vmi: Obj) -> bool:
        ref = controller_ref(vmi)
        if ref is None:
            return False
        vm = self.rt.informers.get(VM, vmi["metadata"]["namespace"], ref["name"])
        return vm is not None and vm["metadata"]["uid"] == ref.get("uid")

    def _write(self, vmi: Obj, updated: Obj, verb: str) -> Step:
        rt = self.rt
        meta = updated["metadata"]
        ops = _patch_ops(vmi, updated)

        def apply(current: Obj) -> None:
            for (section, key), old, new in ops:
                if current.get(section, {}).get(key) != old:
                    raise ApiError(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request",
                    )
                current.setdefault(section, {})[key] = new

        try:
            if verb == "update":
                yield from rt.api.call(rt.host, VMI, verb, lambda: rt.api.update(updated))
            else:
                yield from rt.api.call(
                    rt.host,
                    VMI,
                    verb,
                    lambda: rt.api.patch(VMI, meta["namespace"], meta["name"], apply),
                )
        except ApiError as exc:
            if verb == "patch":  # lifecycle.go:582
                return f"patching of vmi conditions and activePods failed: {exc}"
            return str(exc)
        return None

    def _fault_applies(self, fault: str, vmi: Obj) -> bool:
        owner = controller_ref(vmi)
        name = owner["name"] if owner else vmi["metadata"]["name"]
        return bool(getattr(self.rt.faults, fault)) and self.rt.faults.applies(name)


PATCHED = (  # prepareVMIPatch (lifecycle.go:626-720): the fields the Running/Scheduled patch sends
    ("status", "conditions"),
    ("status", "activePods"),
    ("status", "phase"),
    ("metadata", "labels"),
    ("metadata", "finalizers"),
    ("status", "launcherContainerImageVersion"),  # lifecycle.go:670-677
)


def _patch_ops(old: Obj, new: Obj) -> list[tuple[tuple[str, str], Any, Any]]:
    """Each changed field as a JSON-patch test of the value the controller read, then a replace
    (a failed test is a 422, retried like any error: lifecycle.go:577-584)."""
    ops: list[tuple[tuple[str, str], Any, Any]] = []
    for section, key in PATCHED:
        before, after = old.get(section, {}).get(key), new.get(section, {}).get(key)
        if before != after:
            ops.append(((section, key), before, after))
    return ops


def phase_of(vmi: Obj) -> str:
    return str(vmi.get("status", {}).get("phase", ""))


def _stamp_transition(old: Obj, new: Obj, now: int) -> None:
    """SetVMIPhaseTransitionTimestamp (controller.go:389-404): once per phase."""
    before, after = phase_of(old), phase_of(new)
    if before == after:
        return
    stamps = new["status"].setdefault("phaseTransitionTimestamps", [])
    if any(s.get("phase") == after for s in stamps):
        return
    stamps.append({"phase": after, "phaseTransitionTimestamp": timefmt.seconds(now)})


def _memory_overhead_from_pod(vmi: Obj, pod: Obj) -> None:
    """updateMemoryOverheadStatusFromPod (lifecycle.go:1165-1182, gate VmiMemoryOverheadReport
    on by default): the pod's overhead annotation as a binary quantity."""
    annotations = pod["metadata"].get("annotations") or {}
    overhead = annotations.get("kubevirt.io/memory-overhead-bytes")
    if overhead is not None and overhead.isdigit():
        value = int(overhead)
        mi = 1024 * 1024
        text = f"{value // mi}Mi" if value % mi == 0 else str(value)
        vmi["status"].setdefault("memory", {})["memoryOverhead"] = text


def _ready_from_pod(vmi: Obj, pod: Obj | None) -> None:
    """syncReadyConditionFromPod: the VMI is Ready while its running launcher pod is."""
    conditions = [c for c in vmi["status"].get("conditions") or [] if c.get("type") != "Ready"]
    if pod is not None and phase_of(vmi) == "Running":
        ready = next(
            (c for c in pod.get("status", {}).get("conditions") or [] if c.get("type") == "Ready"),
            None,
        )
        if ready is not None:
            conditions.insert(0, {"lastProbeTime": None, **ready})
    if conditions:
        vmi["status"]["conditions"] = conditions
    else:
        vmi["status"].pop("conditions", None)


def _eviction_requested(vmi: Obj, now: int) -> None:
    """lifecycle.go:554-568: a VMI marked for eviction (``status.evacuationNodeName``, set by
    the pod-eviction webhook) has the condition EvictionRequested; an unmarked one loses it."""
    status = vmi["status"]
    conditions = status.get("conditions") or []
    if not status.get("evacuationNodeName"):
        if any(c.get("type") == "EvictionRequested" for c in conditions):
            status["conditions"] = [c for c in conditions if c.get("type") != "EvictionRequested"]
        return
    if any(c.get("type") == "EvictionRequested" and c.get("status") == "True" for c in conditions):
        return
    stamp = timefmt.seconds(now)
    condition = {
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "message": "VMI is marked for eviction",
        "reason": "EvictionRequested",
        "status": "True",
        "type": "EvictionRequested",
    }
    status["conditions"] = [c for c in conditions if c.get("type") != "EvictionRequested"]
    status["conditions"].append(condition)


OUTDATED_LABEL = "kubevirt.io/outdatedLauncherImage"  # types.go OutdatedLauncherImageLabel


def _launcher_info(vmi: Obj, pod: Obj | None, pods: list[Obj], image: str) -> None:
    """setLauncherContainerInfo (lifecycle.go:846-858, called at 287-295): the compute
    container's image of the VMI's pod, and the ``kubevirt.io/outdatedLauncherImage`` label
    when it is not this controller's launcher image; a final VMI whose pods are gone loses
    both (lifecycle.go:465-472)."""
    labels, status = vmi["metadata"].get("labels") or {}, vmi.setdefault("status", {})
    if pod is None:
        if phase_of(vmi) in ("Succeeded", "Failed") and not pods:
            labels.pop(OUTDATED_LABEL, None)
            status.pop("launcherContainerImageVersion", None)
        return
    found = launcher.compute_image(pod)
    if found != image:
        vmi["metadata"]["labels"] = {**labels, OUTDATED_LABEL: ""}
    else:
        labels.pop(OUTDATED_LABEL, None)
    status["launcherContainerImageVersion"] = found
