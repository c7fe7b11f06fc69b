"""The evacuation controller of v1.9.0
(pkg/virt-controller/watch/drain/evacuation/evacuation.go), which the leader runs with 3 workers
(application.go:1090); its queue is keyed by node name.

A node drain reaches it through the pod-eviction webhook (:func:`kvsim.virtapi.evict`), which
refuses the eviction of a LiveMigrate VMI's launcher pod and sets the VMI's
``status.evacuationNodeName``. ``execute`` (evacuation.go:295-324) waits for its creation
expectations; ``sync`` (358-410) takes the VMIs on the node that are marked and not yet moved
(``nodeName == evacuationNodeName``) and not migrating, or every VMI on a node with the
``kubevirt.io/drain:NoSchedule`` taint; of those, the non-final ones whose eviction strategy
migrates (LiveMigrate, or LiveMigrateIfPossible and migratable; ``VMIMigratableOnEviction``,
migrations.go:124-136) are candidates if LiveMigratable=True, no unfinished migration exists for
them and they have at most one active pod (438-477). Every candidate gets a migration in the
same reconcile (no throttling here at v1.9.0): ``generateName: kubevirt-evacuation-``,
annotation ``kubevirt.io/evacuationMigration: <node>``, priority ``system-critical``
(336-356), with the VMI Event ``SuccessfulCreate`` ``Created Migration <name>`` (397).

It prints ``node: <node>, migrations: <unfinished migrations>, candidates: <n>, selected: <n>``
(evacuation.go:379, info, no object) on each reconcile that has candidates or non-migratable
marked VMIs, and ``reenqueuing VirtualMachineInstance <node>`` (287) after a failed one.
"""

from __future__ import annotations

from kvsim.apiserver import ApiError, Obj
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import Process
from kvsim.migration_sync import active_pods
from kvsim.runtime import Runtime
from kvsim.vm_controller import Step
from kvsim.vmi_controller import requeue_vmi
from kvsim.vmim import (
    EVACUATION_ANNOTATION,
    POD,
    VMI,
    VMIM,
    is_final,
    is_migratable,
    is_migrating,
    new_migration,
)
from kvsim.workqueue import WorkQueue, start_workers

THREADS = 3  # application.go:1090
COMPONENT = "evacuation-controller"  # application.go:888
DRAIN_TAINT = "kubevirt.io/drain"  # configuration.go:41


def migrates_on_eviction(vmi: Obj) -> bool:
    """VMIMigratableOnEviction (migrations.go:124-136); the cluster's default strategy is
    unset in these clusters."""
    strategy = vmi["spec"].get("evictionStrategy")
    if strategy == "LiveMigrate":
        return True
    return strategy == "LiveMigrateIfPossible" and is_migratable(vmi)


def marked(vmi: Obj) -> bool:
    """IsMarkedForEviction and not yet moved (hasMigratedOnEviction, evacuation.go:412-414)."""
    status = vmi.get("status", {})
    return bool(status.get("evacuationNodeName")) and status.get(
        "evacuationNodeName"
    ) == status.get("nodeName")


class EvacuationController:
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.expectations = Expectations()  # migrationExpectations, keyed by node
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on("Node", self._node_event)
        cache.on(VMIM, self._vmim_event)
        rt.informers.on(VMI, self._vmi_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    def _execute_key(self, key: str) -> Process:
        try:
            err = yield from self._execute(key)
        except ApiError as exc:
            err = str(exc)
        requeue_vmi(self.rt, self.queue, key, err, "evacuation.go:287")

    # --- event handlers (evacuation.go:112-253) ----------------------------------------------
    def _node_event(self, old: Obj | None, new: Obj | None) -> None:
        node = new or old
        assert node is not None
        self.queue.add(node["metadata"]["name"])

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        """Enqueues the VMI's node; kvsim skips the VMIs that are not marked on a node without
        the drain taint, whose reconcile would find nothing to do (it scans every VMI)."""
        vmi = new or old
        assert vmi is not None
        node = vmi.get("status", {}).get("nodeName")
        if not node:
            return
        evacuating = any((v or {}).get("status", {}).get("evacuationNodeName") for v in (old, new))
        if evacuating or self._tainted(str(node)):
            self.queue.add(str(node))

    def _tainted(self, name: str) -> bool:
        node = self.cache.get("Node", "", name)
        taints = (node or {}).get("spec", {}).get("taints") or []
        return any(t.get("key") == DRAIN_TAINT and t.get("effect") == "NoSchedule" for t in taints)

    def _vmim_event(self, old: Obj | None, new: Obj | None) -> None:
        """addMigration (evacuation.go:194-217): a migration this controller created is a
        creation observed for the node it names; an update or delete (218-253), and an add of
        any other migration, enqueue the node of its VMI."""
        vmim = new or old
        assert vmim is not None
        node = (vmim["metadata"].get("annotations") or {}).get(EVACUATION_ANNOTATION)
        if old is None and node:
            self.expectations.creation_observed(node)
        else:
            namespace = vmim["metadata"]["namespace"]
            vmi = self.rt.informers.get(VMI, namespace, vmim["spec"]["vmiName"])
            node = (vmi or {}).get("status", {}).get("nodeName")
        if node:
            self.queue.add(str(node))

    # --- one reconcile ---------------------------------------------------------------------
    def _execute(self, key: str) -> Step:
        node = self.cache.get("Node", "", key)
        if node is None:
            self.expectations.delete(key)
            return None
        if not self.expectations.satisfied(key, self.rt.kernel.now):
            return None
        on_node = self.rt.informers.list(VMI, lambda v: v.get("status", {}).get("nodeName") == key)
        unfinished = self.cache.list(VMIM, lambda m: not is_final(m))
        return (yield from self._sync(node, on_node, unfinished))

    def _to_migrate(self, node: Obj, on_node: list[Obj]) -> list[Obj]:
        taints = node.get("spec", {}).get("taints") or []
        if any(t.get("key") == DRAIN_TAINT and t.get("effect") == "NoSchedule" for t in taints):
            return on_node
        return [v for v in on_node if marked(v) and not is_migrating(v)]

    def _candidates(self, vmis: list[Obj], unfinished: list[Obj]) -> tuple[list[Obj], int]:
        """filterRunningNonMigratingVMIs (evacuation.go:438-477)."""
        busy = {f"{m['metadata']['namespace']}/{m['spec']['vmiName']}" for m in unfinished}
        pods = self.rt.informers.list(POD)
        candidates, non_migratable = [], 0
        for vmi in vmis:
            meta = vmi["metadata"]
            if vmi.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                continue
            if meta.get("deletionTimestamp"):
                continue
            if not migrates_on_eviction(vmi) and not self._fault_applies(vmi):
                continue
            if not is_migratable(vmi):
                non_migratable += 1
                continue
            if f"{meta['namespace']}/{meta['name']}" in busy or active_pods(pods, vmi) > 1:
                continue
            candidates.append(vmi)
        return candidates, non_migratable

    def _fault_applies(self, vmi: Obj) -> bool:
        """The fault: a VMI whose eviction strategy forbids migrating is evacuated anyway."""
        faults = self.rt.faults
        owner = (vmi["metadata"].get("ownerReferences") or [{}])[0].get("name", "")
        return faults.evacuate_forbidden and faults.applies(owner or vmi["metadata"]["name"])

    def _sync(self, node: Obj, on_node: list[Obj], unfinished: list[Obj]) -> Step:
        rt, name = self.rt, node["metadata"]["name"]
        to_migrate = self._to_migrate(node, on_node)
        if not to_migrate:
            return None
        candidates, non_migratable = self._candidates(to_migrate, unfinished)
        if not candidates and not non_migratable:
            return None
        line = (
            f"node: {name}, migrations: {len(unfinished)}, candidates: {len(candidates)}, "
            f"selected: {len(candidates)}"
        )
        rt.log.kv(rt.kernel.now, "info", line, "evacuation.go:379")
        self.expectations.expect_creations(name, len(candidates), rt.kernel.now)
        err: str | None = None
        for vmi in candidates:
            err = (yield from self._create(name, vmi)) or err
        return err

    def _create(self, node: str, vmi: Obj) -> Step:
        rt, namespace = self.rt, vmi["metadata"]["namespace"]
        migration = new_migration(
            namespace,
            vmi["metadata"]["name"],
            "kubevirt-evacuation-",
            {EVACUATION_ANNOTATION: node},
        )
        migration["spec"]["priority"] = "system-critical"
        try:
            created = yield from rt.api.call(
                rt.host, VMIM, "create", lambda: rt.api.create(migration)
            )
        except ApiError as exc:
            self.expectations.creation_observed(node)
            self.recorder.event(
                vmi, "Warning", "FailedCreate", f"Error creating a Migration: {exc}"
            )
            return str(exc)
        message = f"Created Migration {created['metadata']['name']}"
        self.recorder.event(vmi, "Normal", "SuccessfulCreate", message)
        return None
