"""The actions of v1.9.0's migration controller (``sync``, migration.go:1758-1939): create the
target pod, watch it for the pending timeouts, hand the migration off to virt-handler, and mark
a migration failed on the VMI.

* Target pod (``handleTargetPodCreation`` 1346-1402, ``createTargetPod`` 938-1045): not while
  any migration still expects a pod creation (retried after 1 s), nor while the VMI has more
  than one active pod (Info 1355), nor at the cluster limit of 5 running migrations (Info 1370)
  or 2 outbound ones on the source node (Info 1383; retried after 1/3/5 s by priority); the VMI's
  launcher pod (:func:`kvsim.launcher.render`) with the label ``kubevirt.io/migrationJobUID``,
  the annotation ``kubevirt.io/migrationJobName``, a required pod anti-affinity on
  ``kubernetes.io/hostname`` against the VMI's pods (889-911), the host-model CPU and vendor
  node selectors from the source pod or node (965-1005), and the SELinux level of the
  VMI's ``status.selinuxContext`` (1007-1013, 858-887; without a context the reconcile
  fails). Event ``SuccessfulCreate`` ``Created migration target pod <pod>`` on the migration
  (1043).
* Pending timeouts (``handlePendingPodTimeout`` 1717-1756): a target pod Pending with
  ``PodScheduled=False/Unschedulable`` gets Event ``migrationTargetPodUnschedulable`` and the
  Warning 1740 on every reconcile and is deleted 300 s after its creation (``unschedulablePod
  TimeoutSeconds``, migration.go:86), each time after the host-model check (Info 2505 when
  another node has the CPU labels, else Warning 2514); any Pending target pod is deleted after
  900 s (99). The deletion prints Info 1544 with the reason ``unschedulable pod <ns>/<pod>
  timeout period exceeded`` (or ``pending pod …``) and records Event ``SuccessfulDelete``.
* Hand-off (``handleTargetPodHandoff`` 1199-1293): the VMI's ``status.migrationState`` becomes
  a new object (migrationUid, targetNode, sourceNode, targetPod, sourcePod, the resolved
  migrationConfiguration) and the VMI gets the label ``kubevirt.io/migrationTargetNodeName``;
  Info ``Handed off migration <ns>/<vmim> to target virt-handler.`` (1290, the VMI as object),
  Event ``SuccessfulHandOver`` (1291).
* ``handleMarkMigrationFailedOnVMI`` (1114-1154): a JSON patch that tests
  ``migrationState.migrationUid`` and adds failed/completed/endTimestamp/startTimestamp/
  failureReason ``Target pod is down``; Info 1150 and a VMI Event, or on a failed test the
  Error 1146 (and the reconcile fails). It runs for a migration that ended before its target
  started, and for any Failed migration whose VMI carries an un-failed migrationState, also
  another (earlier) migration's, whose test then fails on every reconcile.
* Cancel before hand-off (``handlePreHandoffMigrationCancel`` 1156-1173): the target pod is
  deleted (Info 1170, Event ``SuccessfulDelete``).
* Backoff of evacuation migrations (``handleMigrationBackoff`` 1049-1112): the newest one waits
  20 s doubled per older failed one, from the previous one's Failed timestamp (Error 1107 on
  the VMI, VMI Event ``MigrationBackoff``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from kvsim import launcher, timefmt
from kvsim.apiserver import ApiError, Obj
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import SECOND
from kvsim.runtime import Runtime
from kvsim.vm_controller import Step, logged
from kvsim.vmim import (
    EVACUATION_ANNOTATION,
    JOB_LABEL,
    JOB_NAME_ANNOTATION,
    POD,
    PRIORITY_RUNNING,
    TARGET_NODE_LABEL,
    VMI,
    VMIM,
    is_final,
    is_running,
    key_of,
    migration_state,
    owns_state,
    phase_of,
    priority,
)
from kvsim.workqueue import PriorityWorkQueue

UNSCHEDULABLE_TIMEOUT_S = 300  # migration.go:86
PENDING_TIMEOUT_S = 900  # migration.go:99
PARALLEL_PER_CLUSTER, PARALLEL_OUTBOUND = 5, 2  # virt-config.go:44-45
INELIGIBLE = "vmi is ineligible for migration because another migration job is running"
MIGRATION_CONFIGURATION = {  # ToVMIMConfigurationOptions of the default configuration
    "allowAutoConverge": False,
    "allowPostCopy": False,
    "allowWorkloadDisruption": False,
    "bandwidthPerMigration": "0Mi",
    "completionTimeoutPerGiB": 150,
    "disableTLS": False,
    "matchSELinuxLevelOnMigration": False,
    "nodeDrainTaintKey": "kubevirt.io/drain",
    "parallelMigrationsPerCluster": 5,
    "parallelOutboundMigrationsPerNode": 2,
    "progressTimeout": 150,
    "unsafeMigrationOverride": False,
    "utilityVolumesTimeout": 150,
}
INVALID = "the server rejected our request due to an error in our request"
HOST_MODEL_CPU = "host-model-cpu.node.kubevirt.io/"  # types.go:1269-1286
REQUIRED_FEATURES = "host-model-required-features.node.kubevirt.io/"
MIGRATION_CPU = "cpu-model-migration.node.kubevirt.io/"
CPU_FEATURE = "cpu-feature.node.kubevirt.io/"
CPU_VENDOR = "cpu-vendor.node.kubevirt.io/"


def target_pods(pods: list[Obj], vmim: Obj, vmi: Obj) -> list[Obj]:
    """listMatchingTargetPods (migration.go:1970-1986)."""

    def matches(pod: Obj) -> bool:
        labels = pod["metadata"].get("labels") or {}
        return (
            labels.get("kubevirt.io") == "virt-launcher"
            and labels.get("kubevirt.io/created-by") == vmi["metadata"]["uid"]
            and labels.get(JOB_LABEL) == vmim["metadata"]["uid"]
        )

    return [pod for pod in pods if matches(pod)]


def pod_is_ready(pod: Obj) -> bool:
    """IsPodReady (controller.go:490-519): not going down, compute running, every other
    container ready, phase Running."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    status = pod.get("status", {})
    for container in status.get("containerStatuses") or []:
        if container["name"] == "compute":
            if "running" not in (container.get("state") or {}):
                return False
        elif not container.get("ready"):
            return False
    return bool(status.get("phase") == "Running")


def current_pod(pods: list[Obj], vmi: Obj) -> Obj | None:
    """CurrentVMIPod (controller.go:323-359): the newest pod of the VMI on its node."""
    node = vmi.get("status", {}).get("nodeName")
    found: Obj | None = None
    for pod in pods:
        labels = pod["metadata"].get("labels") or {}
        if labels.get("kubevirt.io/created-by") != vmi["metadata"]["uid"]:
            continue
        if node and pod["spec"].get("nodeName") != node:
            continue
        if found is None or _created(found) < _created(pod):
            found = pod
    return found


def _created(obj: Obj) -> int:
    return timefmt.from_iso(obj["metadata"]["creationTimestamp"])


def active_pods(pods: list[Obj], vmi: Obj) -> int:
    """VMIActivePodsCount (controller.go:361-383)."""
    uid = vmi["metadata"]["uid"]
    return sum(
        1
        for pod in pods
        if pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        and (pod["metadata"].get("labels") or {}).get("kubevirt.io/created-by") == uid
    )


def anti_affinity(pod: Obj, vmi: Obj) -> None:
    """createMigrationPodAntiAffinityRule (migration.go:889-911)."""
    term = {
        "labelSelector": {"matchLabels": {"kubevirt.io/created-by": vmi["metadata"]["uid"]}},
        "topologyKey": "kubernetes.io/hostname",
    }
    affinity = pod["spec"].setdefault("affinity", {})
    rule = affinity.setdefault("podAntiAffinity", {})
    rule.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)


def unschedulable(pod: Obj) -> bool:
    """isPodPendingUnschedulable (migration.go:1500-1516)."""
    if pod.get("status", {}).get("phase") != "Pending" or pod["metadata"].get("deletionTimestamp"):
        return False
    return any(
        c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in pod.get("status", {}).get("conditions") or []
    )


class MigrationSync:
    def __init__(
        self, rt: Runtime, cache: Informers, queue: PriorityWorkQueue, rng: random.Random
    ) -> None:
        self.rt, self.cache, self.queue, self.rng = rt, cache, queue, rng
        self.expectations = Expectations()  # podExpectations
        self.handed_off: set[str] = set()
        self.vmi_recorder = Recorder(rt.api, "virtualmachine-controller")

    # --- lookups -------------------------------------------------------------------------------
    def migration_of(self, pod: Obj) -> Obj | None:
        """resolveControllerRef (migration.go:2016-2050): by the pod's job name and uid."""
        meta = pod["metadata"]
        name = (meta.get("annotations") or {}).get(JOB_NAME_ANNOTATION)
        uid = (meta.get("labels") or {}).get(JOB_LABEL)
        if not name or not uid:
            return None
        vmim = self.cache.get(VMIM, meta.get("namespace", ""), name)
        return vmim if vmim is not None and vmim["metadata"]["uid"] == uid else None

    def handed_off_to(self, vmim: Obj, vmi: Obj) -> bool:
        """isMigrationHandedOff (migration.go:2647-2659)."""
        return owns_state(vmi, vmim) or key_of(vmim) in self.handed_off

    def can_migrate(self, vmim: Obj, vmi: Obj) -> bool:
        """canMigrateVMI (migration.go:476-508)."""
        state = migration_state(vmi)
        if state is None or not state.get("migrationUid") or owns_state(vmi, vmim):
            return True
        namespace = vmim["metadata"]["namespace"]
        for other in self.cache.list(VMIM, lambda m: m["metadata"]["namespace"] == namespace):
            if other["metadata"]["uid"] == state["migrationUid"]:
                return is_final(other)
        return True

    # --- sync ----------------------------------------------------------------------------------
    def sync(self, key: str, vmim: Obj, vmi: Obj, pods: list[Obj]) -> Step:
        pod = pods[0] if pods else None
        state = migration_state(vmi) or {}
        if vmi["metadata"].get("deletionTimestamp"):
            return None
        if owns_state(vmi, vmim) and state.get("completed"):
            return None
        if not self.can_migrate(vmim, vmi):
            return INELIGIBLE
        phase, deleting = phase_of(vmim), bool(vmim["metadata"].get("deletionTimestamp"))
        if phase in ("Pending", "Scheduling") and deleting:
            return (yield from self._cancel(vmim, vmi, pod))
        if phase == "Pending":
            return (yield from self._pending(key, vmim, vmi, pod))
        if phase == "Scheduling" and pod is not None:
            return (yield from self._pending_timeout(vmim, vmi, pod))
        if phase == "Scheduled":
            return (yield from self._scheduled(vmim, vmi, pod))
        if phase in ("PreparingTarget", "TargetReady"):
            down = pod is None or pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
            if (
                down
                and state
                and not state.get("startTimestamp")
                and not state.get("failed")
                and not state.get("completed")
            ):
                return (yield from self._mark_failed(vmim, vmi))
        if phase == "Failed" and state and not state.get("failed"):
            return (yield from self._mark_failed(vmim, vmi))
        return None

    def _pending(self, key: str, vmim: Obj, vmi: Obj, pod: Obj | None) -> Step:
        if self._in_backoff(key, vmim, vmi):
            return None
        if pod is None:
            source = current_pod(self.rt.informers.list(POD), vmi)
            if source is None:
                return None
            return (yield from self._create_target(key, vmim, vmi, source))
        if pod_is_ready(pod):
            return None
        return (yield from self._pending_timeout(vmim, vmi, pod))

    def _scheduled(self, vmim: Obj, vmi: Obj, pod: Obj | None) -> Step:
        if vmim["metadata"].get("deletionTimestamp") and not self.handed_off_to(vmim, vmi):
            return (yield from self._cancel(vmim, vmi, pod))
        if pod is not None and pod_is_ready(pod):
            return (yield from self._hand_off(vmim, vmi, pod))
        return None

    # --- target pod creation -------------------------------------------------------------------
    def _create_target(self, key: str, vmim: Obj, vmi: Obj, source: Obj) -> Step:
        """handleTargetPodCreation (migration.go:1346-1402)."""
        rt, obj = self.rt, logged(vmim)
        vmi_name = f"{vmi['metadata']['namespace']}/{vmi['metadata']['name']}"
        if any(r.add > 0 for r in self.expectations.records.values()):
            self.queue.add_priority(key, priority(vmim), SECOND)
            return None
        if active_pods(rt.informers.list(POD), vmi) > 1:
            rt.log.kv(
                rt.kernel.now,
                "info",
                "Waiting to schedule target pod for migration because there are already "
                f"multiple pods running for vmi {vmi_name}",
                "migration.go:1355",
                obj,
            )
            self.queue.add_priority(key, priority(vmim), SECOND)
            return None
        running = self._running_migrations()
        delay = {100: 1, 50: 3}.get(min(100, priority(vmim)), 5) * SECOND
        if len(running) >= PARALLEL_PER_CLUSTER:
            rt.log.kv(
                rt.kernel.now,
                "info",
                f"Waiting to schedule target pod for vmi [{vmi_name}] migration because total "
                f"running parallel migration count [{len(running)}] is currently at the "
                "global cluster limit.",
                "migration.go:1370",
                obj,
            )
            self.queue.add_priority(key, priority(vmim), delay)
            return None
        outbound = self._outbound(vmi.get("status", {}).get("nodeName", ""), running)
        if outbound >= PARALLEL_OUTBOUND:
            rt.log.kv(
                rt.kernel.now,
                "info",
                f"Waiting to schedule target pod for vmi [{vmi_name}] migration because total "
                f"running parallel outbound migrations on target node [{outbound}] has hit "
                "outbound migrations per node limit.",
                "migration.go:1383",
                obj,
            )
            self.queue.add_priority(key, priority(vmim), delay)
            return None
        if vmi.get("status", {}).get("phase") != "Running":
            return None
        return (yield from self._create_pod(key, vmim, vmi, source))

    def _running_migrations(self) -> list[Obj]:
        """findRunningMigrations (migration.go:2437-2467)."""
        pods = self.rt.informers.list(POD)
        found = []
        for vmim in self.cache.list(VMIM, lambda m: not is_final(m)):
            if is_running(vmim):
                found.append(vmim)
                continue
            namespace = vmim["metadata"]["namespace"]
            vmi = self.rt.informers.get(VMI, namespace, vmim["spec"]["vmiName"])
            if vmi is not None and target_pods(pods, vmim, vmi):
                found.append(vmim)
        return found

    def _outbound(self, node: str, running: list[Obj]) -> int:
        """outboundMigrationsOnNode (migration.go:2423-2435)."""
        count = 0
        for vmim in running:
            vmi = self.rt.informers.get(VMI, vmim["metadata"]["namespace"], vmim["spec"]["vmiName"])
            if vmi is None:
                continue
            state = migration_state(vmi) or {}
            if vmi.get("status", {}).get("nodeName") == node or state.get("sourceNode") == node:
                count += 1
        return count

    def _create_pod(self, key: str, vmim: Obj, vmi: Obj, source: Obj) -> Step:
        """createTargetPod (migration.go:938-1045)."""
        rt = self.rt
        pod = self._render(vmim, vmi)
        failed = self._cpu_selectors(pod, vmi, source)
        if failed is not None:
            return failed
        context = str(vmi.get("status", {}).get("selinuxContext", ""))
        if not context:  # setTargetPodSELinuxLevel (migration.go:858-887)
            return "SELinux context not set on VMI status"
        level = context.split(":", 3)[3] if context.count(":") >= 3 else ""
        if context != "none" and level:
            pod["spec"].setdefault("securityContext", {})["seLinuxOptions"] = {"level": level}
        self.expectations.expect_creations(key, 1, rt.kernel.now)
        try:
            created = yield from rt.api.call(rt.host, POD, "create", lambda: rt.api.create(pod))
        except ApiError as exc:
            self.vmi_recorder.event(vmi, "Warning", "FailedCreate", f"Error creating pod: {exc}")
            self.expectations.creation_observed(key)
            return f"failed to create vmi migration target pod: {exc}"
        message = f"Created migration target pod {created['metadata']['name']}"
        rt.recorder.event(vmim, "Normal", "SuccessfulCreate", message)
        if self._fault_applies("second_target_pod", vmi):
            second = self._render(vmim, vmi)  # the fault: the attempt gets a second pod
            yield from rt.api.call(rt.host, POD, "create", lambda: rt.api.create(second))
        return None

    def _cpu_selectors(self, pod: Obj, vmi: Obj, source: Obj) -> str | None:
        """createTargetPod's CPU node selectors (migration.go:965-1005): for a host-model VMI the
        source pod's migration selectors, or on a first migration the source node's host-model
        CPU and required features (prepareNodeSelectorForHostCpuModel, 2528-2552); then the
        source node's CPU vendor. None, or the error that fails the reconcile."""
        selector = pod["spec"].setdefault("nodeSelector", {})
        node_name = vmi.get("status", {}).get("nodeName", "")
        node = self.cache.get("Node", "", node_name)
        if node is None:
            return (
                f'node "{node_name}" associated with vmi "{vmi["metadata"]["name"]}" does not exist'
            )
        labels = node["metadata"].get("labels") or {}
        if (vmi["spec"].get("domain", {}).get("cpu") or {}).get("model") == "host-model":
            wanted = host_model_selectors(source["spec"].get("nodeSelector") or {}, labels)
            if wanted is None:
                return (
                    "unable to locate host cpu model, does not contain label "
                    f'"{HOST_MODEL_CPU}" with information'
                )
            selector.update(wanted)
        if not any(k.startswith(CPU_VENDOR) for k in selector):
            vendor = next((k for k in labels if k.startswith(CPU_VENDOR)), None)
            if vendor is not None:
                selector[vendor] = "true"
        pod["spec"]["nodeSelector"] = dict(sorted(selector.items()))
        return None

    def _alert_host_model(self, vmi: Obj, pod: Obj) -> None:
        """alertIfHostModelIsUnschedulable (migration.go:2482-2516)."""
        rt = self.rt
        if (vmi["spec"].get("domain", {}).get("cpu") or {}).get("model") != "host-model":
            return
        required = {
            k: v
            for k, v in (pod["spec"].get("nodeSelector") or {}).items()
            if k.startswith((MIGRATION_CPU, CPU_FEATURE))
        }
        here = vmi.get("status", {}).get("nodeName")
        for node in self.cache.list("Node"):
            labels = node["metadata"].get("labels") or {}
            if node["metadata"]["name"] == here:
                continue
            if all(labels.get(k) == v for k, v in required.items()):
                rt.log.kv(
                    rt.kernel.now,
                    "info",
                    f"Node {node['metadata']['name']} is suitable to run vmi "
                    f"{vmi['metadata']['name']} host model cpu mode (more nodes may fit as "
                    "well)",
                    "migration.go:2505",
                    logged(vmi),
                )
                return
        message = (
            "Migration cannot proceed since no node is suitable to run the required CPU model / "
            f"required features: {go_map(required)}"
        )
        self.vmi_recorder.event(vmi, "Warning", "NoSuitableNodesForHostModelMigration", message)
        rt.log.kv(rt.kernel.now, "warning", message, "migration.go:2514", logged(vmi))

    def _render(self, vmim: Obj, vmi: Obj) -> Obj:
        """RenderMigrationManifest (template.go:324-353) plus the migration's label and
        annotation and the anti-affinity."""
        pod = launcher.render(vmi, self.rng, image=self.rt.launcher_image)
        pod["metadata"]["labels"][JOB_LABEL] = vmim["metadata"]["uid"]
        annotations = pod["metadata"]["annotations"]
        annotations[JOB_NAME_ANNOTATION] = vmim["metadata"]["name"]
        pod["metadata"]["annotations"] = dict(sorted(annotations.items()))
        anti_affinity(pod, vmi)
        return pod

    def _fault_applies(self, fault: str, vmi: Obj) -> bool:
        faults = self.rt.faults
        owner = (vmi["metadata"].get("ownerReferences") or [{}])[0].get("name", "")
        return bool(getattr(faults, fault)) and faults.applies(owner or vmi["metadata"]["name"])

    # --- pending timeouts ------------------------------------------------------------------------
    def _pending_timeout(self, vmim: Obj, vmi: Obj, pod: Obj) -> Step:
        """handlePendingPodTimeout (migration.go:1717-1756)."""
        rt = self.rt
        if pod.get("status", {}).get("phase") != "Pending" or pod["metadata"].get(
            "deletionTimestamp"
        ):
            return None
        key, namespace = key_of(vmim), pod["metadata"]["namespace"]
        spent = max(0, (rt.kernel.now - _created(pod)) // SECOND)
        pod_name = f"{namespace}/{pod['metadata']['name']}"
        if unschedulable(pod):
            self._alert_host_model(vmi, pod)
            vmi_name = f"{vmi['metadata']['namespace']}/{vmi['metadata']['name']}"
            message = f"Migration target pod for VMI [{vmi_name}] is currently unschedulable."
            rt.recorder.event(vmim, "Warning", "migrationTargetPodUnschedulable", message)
            rt.log.kv(rt.kernel.now, "warning", message, "migration.go:1740", logged(vmim))
            if spent >= UNSCHEDULABLE_TIMEOUT_S:
                if self._leaves_target(key, vmi):
                    return None
                reason = f"unschedulable pod {pod_name} timeout period exceeded"
                return (yield from self._delete_target(vmim, vmi, pod, reason, "migration.go:1544"))
            self.queue.add_priority(
                key, PRIORITY_RUNNING, (UNSCHEDULABLE_TIMEOUT_S - spent) * SECOND
            )
        if spent >= PENDING_TIMEOUT_S:
            if self._leaves_target(key, vmi):
                return None
            reason = f"pending pod {pod_name} timeout period exceeded"
            return (yield from self._delete_target(vmim, vmi, pod, reason, "migration.go:1544"))
        self.queue.add_priority(key, PRIORITY_RUNNING, (PENDING_TIMEOUT_S - spent) * SECOND)
        return None

    def _leaves_target(self, key: str, vmi: Obj) -> bool:
        """The injected fault ``target_pod_left``: the timed-out pod is not deleted and the
        migration is looked at again a minute later (the warning repeats)."""
        if not self._fault_applies("target_pod_left", vmi):
            return False
        self.queue.add_priority(key, PRIORITY_RUNNING, 60 * SECOND)
        return True

    def _delete_target(self, vmim: Obj, vmi: Obj, pod: Obj, reason: str, pos: str) -> Step:
        rt, key, meta = self.rt, key_of(vmim), pod["metadata"]
        self.expectations.expect_deletions(key, [key_of(pod)], rt.kernel.now)
        try:
            yield from rt.api.call(
                rt.host, POD, "delete", lambda: rt.api.delete(POD, meta["namespace"], meta["name"])
            )
        except ApiError as exc:
            self.expectations.deletion_observed(key, key_of(pod))
            if pos == "migration.go:1170":
                rt.recorder.event(
                    vmim,
                    "Warning",
                    "FailedDelete",
                    f"Error deleting canceled migration target pod: {exc}",
                )
                return (
                    f"cannot delete pending target pod {meta['name']}/{meta['namespace']} for "
                    "migration although migration is aborted"
                )
            rt.recorder.event(
                vmim, "Warning", "FailedDelete", f"Error deleted migration target pod: {exc}"
            )
            return (
                "failed to delete vmi migration target pod that reached pending pod timeout "
                f"period.: {exc}"
            )
        rt.log.kv(
            rt.kernel.now,
            "info",
            f"Deleted pending migration target pod with uuid {meta['uid']} for migration "
            f"{vmim['metadata']['name']} with uuid {vmim['metadata']['uid']} with reason "
            f"[{reason}]",
            pos,
            logged(vmi),
        )
        rt.recorder.event(vmim, "Normal", "SuccessfulDelete", reason)
        return None

    def _cancel(self, vmim: Obj, vmi: Obj, pod: Obj | None) -> Step:
        if pod is None:
            return None
        namespace = pod["metadata"]["namespace"]
        reason = f"migration canceled and pod {namespace}/{pod['metadata']['name']} is deleted"
        return (yield from self._delete_target(vmim, vmi, pod, reason, "migration.go:1170"))

    # --- backoff ---------------------------------------------------------------------------------
    def _in_backoff(self, key: str, vmim: Obj, vmi: Obj) -> bool:
        """handleMigrationBackoff (migration.go:1049-1112), evacuation migrations."""
        rt = self.rt
        if EVACUATION_ANNOTATION not in (vmim["metadata"].get("annotations") or {}):
            return False
        meta = vmi["metadata"]
        eligible = self.cache.list(
            VMIM,
            lambda m: (
                m["metadata"]["namespace"] == meta["namespace"]
                and m["spec"]["vmiName"] == meta["name"]
                and EVACUATION_ANNOTATION in (m["metadata"].get("annotations") or {})
            ),
        )
        eligible.sort(key=lambda m: _created(m), reverse=True)
        if len(eligible) < 2 or eligible[0]["metadata"]["uid"] != vmim["metadata"]["uid"]:
            return False
        backoff = _backoff_seconds(eligible[1:])
        if backoff == 0:
            return False
        failed_at = _failed_at(eligible[1])
        remaining = failed_at + backoff * SECOND - rt.kernel.now
        if remaining <= 0:
            return False
        rt.log.kv(
            rt.kernel.now,
            "error",
            f"vmi in migration backoff, re-enqueueing after {_go_duration(remaining)}",
            "migration.go:1107",
            logged(vmi),
        )
        self.queue.add_priority(key, PRIORITY_RUNNING, remaining)
        message = f"backoff migrating vmi {meta['namespace']}/{meta['name']}"
        self.vmi_recorder.event(vmi, "Warning", "MigrationBackoff", message)
        return True

    # --- hand-off --------------------------------------------------------------------------------
    def _hand_off(self, vmim: Obj, vmi: Obj, pod: Obj) -> Step:
        """handleTargetPodHandoff (migration.go:1199-1293)."""
        rt = self.rt
        if owns_state(vmi, vmim):
            return None
        previous = migration_state(vmi)
        state = self._new_state(vmim, vmi, pod)
        moves = self._fault_applies("node_change_without_migration", vmi)
        yield from rt.api.call(rt.host, "Namespace", "get", lambda: None)  # resolveMigrationConfig
        meta = vmi["metadata"]

        def patch(current: Obj) -> None:
            if current.get("status", {}).get("migrationState") != previous:
                raise ApiError(422, "Invalid", INVALID)
            current["status"]["migrationState"] = state
            labels = current["metadata"].setdefault("labels", {})
            labels[TARGET_NODE_LABEL] = pod["spec"]["nodeName"]
            if moves:  # the fault: the VMI is put on the target before anything migrated
                current["status"]["nodeName"] = labels["kubevirt.io/nodeName"] = pod["spec"][
                    "nodeName"
                ]

        try:
            yield from rt.api.call(
                rt.host,
                VMI,
                "patch",
                lambda: rt.api.patch(VMI, meta["namespace"], meta["name"], patch),
            )
        except ApiError as exc:
            rt.recorder.event(
                vmim,
                "Warning",
                "FailedHandOver",
                f"Failed to set MigrationStat in VMI status. :{exc}",
            )
            raise
        self.handed_off.add(key_of(vmim))
        rt.log.kv(
            rt.kernel.now,
            "info",
            f"Handed off migration {key_of(vmim)} to target virt-handler.",
            "migration.go:1290",
            logged(vmi),
        )
        rt.recorder.event(
            vmim,
            "Normal",
            "SuccessfulHandOver",
            "Migration target pod is ready for preparation by virt-handler.",
        )
        return None

    @staticmethod
    def _new_state(vmim: Obj, vmi: Obj, pod: Obj) -> dict[str, Any]:
        state: dict[str, Any] = {
            "migrationConfiguration": dict(MIGRATION_CONFIGURATION),
            "migrationUid": vmim["metadata"]["uid"],
            "sourceNode": vmi.get("status", {}).get("nodeName", ""),
            "targetNode": pod["spec"]["nodeName"],
            "targetPod": pod["metadata"]["name"],
        }
        overhead = (pod["metadata"].get("annotations") or {}).get(
            "kubevirt.io/memory-overhead-bytes"
        )
        if overhead and overhead.isdigit():
            mi = 1024 * 1024
            value = int(overhead)
            state["targetMemoryOverhead"] = f"{value // mi}Mi" if value % mi == 0 else str(value)
        source = (vmim.get("status", {}).get("migrationState") or {}).get("sourcePod")
        if source:
            state["sourcePod"] = source
        return state

    # --- failure on the VMI ----------------------------------------------------------------------
    def _mark_failed(self, vmim: Obj, vmi: Obj) -> Step:
        """handleMarkMigrationFailedOnVMI (migration.go:1114-1154)."""
        rt, meta = self.rt, vmi["metadata"]
        now = timefmt.seconds(rt.kernel.now)
        uid = vmim["metadata"]["uid"]
        try:
            yield from rt.api.call(
                rt.host,
                VMI,
                "patch",
                lambda: rt.api.patch(VMI, meta["namespace"], meta["name"], _failed_patch(uid, now)),
            )
        except ApiError as exc:
            rt.log.kv(
                rt.kernel.now,
                "error",
                f"Failed to patch VMI status to indicate migration {key_of(vmim)} failed.",
                "migration.go:1146",
                logged(vmi),
                str(exc),
            )
            return str(exc)
        rt.log.kv(
            rt.kernel.now,
            "info",
            f"Marked Migration {key_of(vmim)} failed on vmi due to target pod disappearing "
            "before migration kicked off.",
            "migration.go:1150",
            logged(vmi),
        )
        self.vmi_recorder.event(
            vmi,
            "Warning",
            "FailedMigration",
            f"VirtualMachineInstance migration uid {uid} failed. reason: Target pod is down",
        )
        return None


def host_model_selectors(source: dict[str, str], node: dict[str, str]) -> dict[str, str] | None:
    """prepareNodeSelectorForHostCpuModel and getHostCpuModelFromMap (migration.go:2528-2578)."""
    kept = {k: v for k, v in source.items() if CPU_FEATURE in k or MIGRATION_CPU in k}
    if kept:
        return kept
    model = next((k for k in node if k.startswith(HOST_MODEL_CPU)), None)
    if model is None:
        return None
    wanted = {MIGRATION_CPU + model[len(HOST_MODEL_CPU) :]: node[model]}
    for key, value in node.items():
        if key.startswith(REQUIRED_FEATURES):
            wanted[CPU_FEATURE + key[len(REQUIRED_FEATURES) :]] = value
    return wanted


def go_map(values: dict[str, str]) -> str:
    """``%v`` of a Go map: keys sorted."""
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(values.items())) + "]"


def _failed_patch(uid: str, now: str) -> Callable[[Obj], None]:
    def patch(current: Obj) -> None:
        state = current.get("status", {}).get("migrationState")
        if not isinstance(state, dict) or state.get("migrationUid") != uid:
            raise ApiError(422, "Invalid", INVALID)
        state.update(failed=True, completed=True)
        state.setdefault("endTimestamp", now)
        state.setdefault("startTimestamp", now)
        if not state.get("failureReason"):
            state["failureReason"] = "Target pod is down"

    return patch


def _backoff_seconds(older: list[Obj]) -> int:
    backoff = 0
    for vmim in older:
        if phase_of(vmim) == "Succeeded":
            break
        if vmim["metadata"].get("deletionTimestamp"):
            continue
        if phase_of(vmim) == "Failed":
            backoff = 20 if backoff == 0 else backoff * 2
    return backoff


def _failed_at(vmim: Obj) -> int:
    for stamp in vmim.get("status", {}).get("phaseTransitionTimestamps") or []:
        if stamp.get("phase") == "Failed":
            return timefmt.from_iso(stamp["phaseTransitionTimestamp"])
    return 0


def _go_duration(us: int) -> str:
    """Go's Duration.String() for a positive duration under an hour."""
    seconds, micros = divmod(us, SECOND)
    minutes, seconds = divmod(seconds, 60)
    fraction = f"{micros:06d}".rstrip("0")
    text = f"{seconds}.{fraction}s" if fraction else f"{seconds}s"
    return f"{minutes}m{text}" if minutes else text
