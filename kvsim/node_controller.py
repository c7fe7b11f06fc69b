"""The node controller of v1.9.0 (pkg/virt-controller/watch/node/node.go), which the leader runs
with 3 workers (application.go:1072); its queue is keyed by node name.

A node is unresponsive when it is missing from the cache or its ``kubevirt.io/heartbeat``
annotation (written by virt-handler about every minute) is older than 5 minutes; a node
without the annotation never is (``isNodeUnresponsive``, node.go:451-466). For an unresponsive
node (``execute``, 167-211): if labelled ``kubevirt.io/schedulable=true``, a Node Event
``NodeUnresponsive`` and a patch of that label to ``false`` (302-314); then the VMIs labelled
with the node in phase Running or Scheduled (a live List) without an alive launcher pod on it
(phase not Succeeded/Failed, not every container terminated; a terminating pod is alive,
378-418) each get a VMI Event ``virt-handler on node <node> is not responsive, marking VMI as
failed`` (277), the line ``Moving vmi <name> in namespace <ns> on unresponsive node to failed
state`` (node.go:278, info, the node as object) and a JSON patch of ``status.phase`` to Failed
with ``status.reason`` NodeUnresponsive (no phase transition timestamp). Every existing node is
re-checked a minute later (``requeueIfExists``, 294-300). The orphan check (316-354) finds a
virt-handler pod on every node here (a hung virt-handler is still a pod), so it records nothing.
"""

from __future__ import annotations

from kvsim import timefmt
from kvsim.apiserver import ApiError, Obj
from kvsim.events import Recorder
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Process
from kvsim.logs import LoggedObject
from kvsim.runtime import Runtime
from kvsim.vm_controller import Step
from kvsim.workqueue import WorkQueue, settle, start_workers

THREADS = 3  # application.go:1072
COMPONENT = "node-controller"  # application.go:755
HEARTBEAT = "kubevirt.io/heartbeat"
SCHEDULABLE = "kubevirt.io/schedulable"
HEARTBEAT_TIMEOUT_US = 300 * SECOND  # node.go:57
RECHECK_US = 60 * SECOND  # node.go:58
VMI, POD = "VirtualMachineInstance", "Pod"


def unresponsive(node: Obj | None, now: int) -> bool:
    if node is None:
        return True
    beat = (node["metadata"].get("annotations") or {}).get(HEARTBEAT)
    return beat is not None and timefmt.from_iso(beat) < now - HEARTBEAT_TIMEOUT_US


def alive(pod: Obj) -> bool:
    status = pod.get("status", {})
    containers = status.get("containerStatuses") or []
    terminated = bool(containers) and all(
        "terminated" in (c.get("state") or {}) for c in containers
    )
    return not terminated and status.get("phase") not in ("Succeeded", "Failed")


def controller_uid(pod: Obj) -> str | None:
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == VMI:
            return str(ref.get("uid"))
    return None


class NodeController:
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on("Node", self._node_event)
        rt.informers.on(VMI, self._vmi_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    def _execute_key(self, key: str) -> Process:
        """Execute (node.go:148-165)."""
        rt = self.rt
        try:
            err = yield from self._execute(key)
        except ApiError as exc:
            err = str(exc)
        if err is not None:
            rt.log.kv(rt.kernel.now, "info", f"reenqueuing node {key}", "node.go:158", None, err)
        settle(self.queue, key, err)

    def _node_event(self, old: Obj | None, new: Obj | None) -> None:
        node = new or old
        assert node is not None
        self.queue.add(node["metadata"]["name"])

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        node = new.get("status", {}).get("nodeName")
        if node:
            self.queue.add(str(node))

    def _execute(self, key: str) -> Step:
        node = self.cache.get("Node", "", key)
        if unresponsive(node, self.rt.kernel.now):
            if (
                node is not None
                and (node["metadata"].get("labels") or {}).get(SCHEDULABLE) == "true"
            ):
                yield from self._mark_unschedulable(node)
            err = yield from self._fail_orphans(key, node)
            if err is not None:
                return err
        if node is not None:
            self.queue.add_after(key, RECHECK_US)
        return None

    def _mark_unschedulable(self, node: Obj) -> Process:
        rt, name = self.rt, node["metadata"]["name"]
        message = "virt-handler is not responsive, marking node as unresponsive"
        self.recorder.event(node, "Normal", "NodeUnresponsive", message)

        def label(current: Obj) -> None:
            current["metadata"].setdefault("labels", {})[SCHEDULABLE] = "false"

        yield from rt.api.call(
            rt.host, "Node", "patch", lambda: rt.api.patch("Node", "", name, label)
        )

    def _fail_orphans(self, key: str, node: Obj | None) -> Step:
        """checkNodeForOrphanedAndErroredVMIs (node.go:226-292)."""
        rt = self.rt

        def active(vmi: Obj) -> bool:
            labels = vmi["metadata"].get("labels") or {}
            phase = vmi.get("status", {}).get("phase")
            return labels.get("kubevirt.io/nodeName") == key and phase in ("Running", "Scheduled")

        vmis = yield from rt.api.call(
            rt.host, VMI, "list", lambda: [v for v in rt.api.items(VMI) if active(v)]
        )
        if not vmis:
            return None
        pods = yield from rt.api.call(
            rt.host,
            POD,
            "list",
            lambda: [p for p in rt.api.items(POD) if p.get("spec", {}).get("nodeName") == key],
        )
        kept = {controller_uid(p) for p in pods if controller_uid(p) and alive(p)}
        errors = []
        for vmi in vmis:
            if vmi["metadata"]["uid"] not in kept:
                failed = yield from self._fail(vmi, node, key)
                errors.extend([failed] if failed else [])
        return "; ".join(errors) if errors else None

    def _fail(self, vmi: Obj, node: Obj | None, key: str) -> Step:
        rt, meta = self.rt, vmi["metadata"]
        where = vmi.get("status", {}).get("nodeName", "")
        self.recorder.event(
            vmi,
            "Normal",
            "NodeUnresponsive",
            f"virt-handler on node {where} is not responsive, marking VMI as failed",
        )
        obj = LoggedObject("", key, node["metadata"]["uid"]) if node is not None else None
        rt.log.kv(
            rt.kernel.now,
            "info",
            f"Moving vmi {meta['name']} in namespace {meta['namespace']} on unresponsive "
            "node to failed state",
            "node.go:278",
            obj,
        )

        def failed(current: Obj) -> None:
            current["status"]["phase"] = "Failed"
            current["status"]["reason"] = "NodeUnresponsive"

        try:
            yield from rt.api.call(
                rt.host,
                VMI,
                "patch",
                lambda: rt.api.patch(VMI, meta["namespace"], meta["name"], failed),
            )
        except ApiError as exc:
            rt.log.kv(
                rt.kernel.now,
                "error",
                f"Failed to move vmi {meta['name']} in namespace {meta['namespace']} to final "
                "state",
                "node.go:287",
                obj,
                str(exc),
            )
            where = f"{meta['name']} in namespace {meta['namespace']}"
            return f"failed to move vmi {where} to final state: {exc}"
        return None
