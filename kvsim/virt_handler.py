"""virt-handler's part of a live migration and its node heartbeat, as v1.9.0 writes them
(pkg/virt-handler/). Like :mod:`kvsim.nodes` these print nothing to virt-controller's log; they
write the Node and the VMI's ``status.migrationState`` the controllers react to, and record
Events (component ``virt-handler``, the node as host).

* Node labels: the node-labeller's host-model CPU labels, once; the heartbeat
  (heartbeat.go:82-170): every 1–2.2 min the node's annotation
  ``kubevirt.io/heartbeat`` (RFC 3339, seconds, the node's clock) and the label
  ``kubevirt.io/schedulable: "true"``; a hung virt-handler writes neither.
* LiveMigratable: a Running VMI gets the conditions LiveMigratable and StorageLiveMigratable
  True (its disk is a shared PVC), and ``status.selinuxContext`` (vm.go:1032-1048).
* Target (migration-target.go): on the VMI labelled ``kubevirt.io/migrationTargetNodeName`` with
  its node, Events ``PreparingTarget`` ``VirtualMachineInstance Migration Target Prepared.``
  (994) and ``Migration Target is listening at <ip>, on ports: <ports>`` (417) with
  ``targetNodeAddress`` and ``targetDirectMigrationNodePorts``; after the domain arrives
  ``targetNodeDomainDetected`` and ``targetNodeDomainReadyTimestamp`` (337-367); on completion
  ``ackMigrationCompletion`` (289-317: ``endTimestamp``, ``status.nodeName`` and the label
  ``kubevirt.io/nodeName`` to this node, ``evacuationNodeName`` cleared, Event ``Migrated``
  ``The VirtualMachineInstance migrated to node <node>.``), then ``completed`` (1253) and the
  label ``kubevirt.io/migrationTargetNodeName`` removed (578); the source launcher then exits.
  After a failure the target pod is told to clean up and ends (559).
* Source (migration-source.go): once the target listens, Event ``Migrating``
  ``VirtualMachineInstance is migrating.`` (613) and ``startTimestamp``/``mode: PreCopy`` from
  the launcher's metadata (199-217); a failed migration writes ``failed``, ``completed``,
  ``endTimestamp``, ``failureReason`` and a Warning Event ``Migrated`` ``VirtualMachineInstance
  migration uid <uid> failed. reason:<libvirt error>`` (207-214).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj, Watch
from kvsim.events import Recorder
from kvsim.kernel import MS, SECOND, Host, Kernel
from kvsim.nodes import Nodes
from kvsim.vmim import TARGET_NODE_LABEL, migration_state

VMI, POD, NODE = "VirtualMachineInstance", "Pod", "Node"
HEARTBEAT = "kubevirt.io/heartbeat"
SCHEDULABLE = "kubevirt.io/schedulable"
HOST_MODEL = "Skylake-Client-IBRS"
REQUIRED_FEATURES = ("hypervisor", "ss")
LIBVIRT_FAILURE = (  # a libvirt error as virt-launcher reports it (live-migration-source.go:1410)
    "virError(Code=9, Domain=10, Message='operation failed: migration out job: unexpectedly "
    "failed')"
)


def node_ip(names: tuple[str, ...], node: str) -> str:
    return f"192.168.122.{11 + names.index(node)}"


@dataclass
class VirtHandlers:
    """One virt-handler per node. ``outcome(vmi name, attempt)`` says how the n-th migration of
    a VMI ends on the nodes: ``succeed`` (the default) or ``fail``."""

    kernel: Kernel
    api: ApiServer
    nodes: Nodes
    seed: str
    outcome: Callable[[str, int], str] = lambda name, attempt: "succeed"
    hung: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"virt-handler/{self.seed}")
        self.host = Host("virt-handlers")
        self.attempts: dict[str, int] = {}
        self.acted: set[tuple[str, str]] = set()  # (migration uid, step) done once
        for node in self.nodes.names:
            self.api.patch(NODE, "", node, _labelled)
            self._beat(node)
        self.api.watch(Watch({VMI}, self.host, self._event, lambda: self.rng.randint(200, 2_500)))

    # --- heartbeat -----------------------------------------------------------------------------
    def _beat(self, node: str) -> None:
        if node not in self.hung:
            stamp = timefmt.seconds(self.kernel.now + self.nodes.skew_us.get(node, 0))

            def write(current: Obj) -> None:
                current["metadata"].setdefault("annotations", {})[HEARTBEAT] = stamp
                current["metadata"].setdefault("labels", {})[SCHEDULABLE] = "true"

            self.api.patch(NODE, "", node, write)
        delay = int(60 * SECOND * (1 + self.rng.random() * 1.2))
        self.kernel.after(delay, lambda: self._beat(node))

    def hang(self, node: str) -> None:
        """virt-handler on ``node`` stops: no heartbeat, no VMI writes (kvsim.nodes too)."""
        self.hung.add(node)
        self.nodes.hung.add(node)

    # --- VMI events ----------------------------------------------------------------------------
    def _event(self, event: str, vmi: Obj) -> None:
        if event == "DELETED":
            return
        status = vmi.get("status", {})
        node = status.get("nodeName", "")
        if status.get("phase") == "Running" and node not in self.hung:
            self._migratable(vmi)
        state = migration_state(vmi)
        if state is None or not state.get("migrationUid") or state.get("completed"):
            return
        target = (vmi["metadata"].get("labels") or {}).get(TARGET_NODE_LABEL)
        if target and target == state.get("targetNode") and not state.get("targetNodeAddress"):
            self._once(state, "prepare", self._prepare, vmi, target)
        elif state.get("targetNodeAddress") and not state.get("startTimestamp"):
            self._once(state, "start", self._start, vmi, node)

    def _once(
        self, state: dict[str, Any], step: str, act: Callable[[Obj, str], None], vmi: Obj, node: str
    ) -> None:
        token = (str(state["migrationUid"]), step)
        if token in self.acted or node in self.hung:
            return
        self.acted.add(token)
        self.kernel.after(self.rng.randint(300, 1_800) * MS, lambda: act(vmi, node))

    def _migratable(self, vmi: Obj) -> None:
        """The conditions, and ``status.selinuxContext``: the launcher's SELinux context
        (updateSELinuxContext, pkg/virt-handler/vm.go:1032-1048, SELinux nodes)."""
        conditions = vmi.get("status", {}).get("conditions") or []
        if any(c.get("type") == "LiveMigratable" for c in conditions):
            return
        first, second = sorted(self.rng.sample(range(1024), 2))
        context = f"system_u:system_r:container_t:s0:c{first},c{second}"

        def write(current: Obj) -> None:
            current["status"].setdefault("selinuxContext", context)
            kept = [
                c
                for c in current["status"].get("conditions") or []
                if c.get("type") not in ("LiveMigratable", "StorageLiveMigratable")
            ]
            added = [
                {"lastProbeTime": None, "lastTransitionTime": None, "status": "True", "type": t}
                for t in ("LiveMigratable", "StorageLiveMigratable")
            ]
            current["status"]["conditions"] = kept + added

        self._patch(vmi, write)

    def _patch(self, vmi: Obj, mutate: Callable[[Obj], None]) -> bool:
        meta = vmi["metadata"]
        live = self.api.peek(VMI, meta["namespace"], meta["name"])
        if live is None or live["metadata"]["uid"] != meta["uid"]:
            return False
        try:
            self.api.patch(VMI, meta["namespace"], meta["name"], mutate)
        except ApiError:
            return False
        return True

    def _apply(self, vmi: Obj, mutate: Callable[[Obj], None]) -> None:
        self._patch(vmi, mutate)

    def _record(self, vmi: Obj, node: str, type_: str, reason: str, message: str) -> None:
        Recorder(self.api, "virt-handler", node).event(vmi, type_, reason, message)

    # --- target: prepare -------------------------------------------------------------------------
    def _prepare(self, vmi: Obj, node: str) -> None:
        self._record(
            vmi,
            node,
            "Normal",
            "PreparingTarget",
            "VirtualMachineInstance Migration Target Prepared.",
        )
        ports = sorted(str(self.rng.randint(32_768, 60_999)) for _ in range(3))
        address = node_ip(self.nodes.names, node)
        uid = migration_state(vmi) or {}
        migration_uid = uid.get("migrationUid")

        def write(current: Obj) -> None:
            state = current["status"].get("migrationState") or {}
            if state.get("migrationUid") != migration_uid:
                raise ApiError(409, "Conflict", "the migration changed")
            state["targetNodeAddress"] = address
            state["targetDirectMigrationNodePorts"] = {
                ports[0]: 0,
                ports[1]: 49152,
                ports[2]: 49153,
            }

        def listen() -> None:
            message = f"Migration Target is listening at {address}, on ports: {','.join(ports)}"
            self._record(vmi, node, "Normal", "PreparingTarget", message)
            self._patch(vmi, write)

        self.kernel.after(self.rng.randint(200, 900) * MS, listen)

    # --- source: start, then the outcome ---------------------------------------------------------
    def _start(self, vmi: Obj, node: str) -> None:
        state = migration_state(vmi) or {}
        migration_uid = str(state["migrationUid"])
        name = vmi["metadata"]["name"]
        attempt = self.attempts.get(name, 0)
        self.attempts[name] = attempt + 1
        self._record(vmi, node, "Normal", "Migrating", "VirtualMachineInstance is migrating.")
        started = timefmt.seconds(self.kernel.now + self.nodes.skew_us.get(node, 0))

        def write(current: Obj) -> None:
            live = _owned(current, migration_uid)
            live.update(startTimestamp=started, mode="PreCopy")

        self.kernel.after(self.rng.randint(100, 600) * MS, lambda: self._apply(vmi, write))
        took = self.rng.randint(4, 40) * SECOND
        if self.outcome(name, attempt) == "fail":
            self.kernel.after(took, lambda: self._failed(vmi, node, migration_uid))
        else:
            self.kernel.after(took // 2, lambda: self._domain_on_target(vmi, migration_uid))
            self.kernel.after(took, lambda: self._completed(vmi, migration_uid))

    def _failed(self, vmi: Obj, node: str, migration_uid: str) -> None:
        if node in self.hung:
            return
        ended = timefmt.seconds(self.kernel.now)

        def write(current: Obj) -> None:
            live = _owned(current, migration_uid)
            live.update(
                failed=True, completed=True, endTimestamp=ended, failureReason=LIBVIRT_FAILURE
            )

        if not self._patch(vmi, write):
            return
        message = (
            f"VirtualMachineInstance migration uid {migration_uid} failed. reason:{LIBVIRT_FAILURE}"
        )
        self._record(vmi, node, "Warning", "Migrated", message)
        self.kernel.after(
            self.rng.randint(500, 2_500) * MS, lambda: self._target_cleanup(vmi, migration_uid)
        )

    def _target_cleanup(self, vmi: Obj, migration_uid: str) -> None:
        """finalCleanup of a failed migration (migration-target.go:525-584): the target pod
        ends, the target label goes."""

        def write(current: Obj) -> None:
            _owned(current, migration_uid)
            current["metadata"].get("labels", {}).pop(TARGET_NODE_LABEL, None)

        state = migration_state(vmi) or {}
        self._patch(vmi, write)
        self._end_pod(vmi, str(state.get("targetPod", "")))

    def _domain_on_target(self, vmi: Obj, migration_uid: str) -> None:
        now = timefmt.seconds(self.kernel.now)

        def write(current: Obj) -> None:
            live = _owned(current, migration_uid)
            live.update(targetNodeDomainDetected=True, targetNodeDomainReadyTimestamp=now)

        self._patch(vmi, write)

    def _completed(self, vmi: Obj, migration_uid: str) -> None:
        state = (
            migration_state(
                self.api.peek(VMI, vmi["metadata"]["namespace"], vmi["metadata"]["name"]) or vmi
            )
            or {}
        )
        target = str(state.get("targetNode", ""))
        if target in self.hung or state.get("migrationUid") != migration_uid:
            return
        ended = timefmt.seconds(self.kernel.now)
        if not self._patch(vmi, _acknowledge(migration_uid, target, ended)):
            return
        self._record(
            vmi,
            target,
            "Normal",
            "Migrated",
            f"The VirtualMachineInstance migrated to node {target}.",
        )

        def finalize(current: Obj) -> None:
            _owned(current, migration_uid)["completed"] = True
            current["metadata"].get("labels", {}).pop(TARGET_NODE_LABEL, None)

        self.kernel.after(self.rng.randint(200, 1_200) * MS, lambda: self._apply(vmi, finalize))
        source = str(state.get("sourcePod", ""))
        self.kernel.after(self.rng.randint(1_500, 4_000) * MS, lambda: self._end_pod(vmi, source))

    def _end_pod(self, vmi: Obj, name: str) -> None:
        pod = self.api.peek(POD, vmi["metadata"]["namespace"], name) if name else None
        if pod is not None and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            self.nodes.terminate(pod, "Succeeded")


def _labelled(node: Obj) -> None:
    """The node-labeller's CPU labels (pkg/virt-handler/node-labeller/), the same on every node
    here: the host-model CPU with its required features, what it can take by migration, the
    vendor."""
    labels = node["metadata"].setdefault("labels", {})
    labels.update(
        {
            f"host-model-cpu.node.kubevirt.io/{HOST_MODEL}": "true",
            f"cpu-model-migration.node.kubevirt.io/{HOST_MODEL}": "true",
            "cpu-vendor.node.kubevirt.io/Intel": "true",
        }
    )
    for feature in REQUIRED_FEATURES:
        labels[f"host-model-required-features.node.kubevirt.io/{feature}"] = "true"
        labels[f"cpu-feature.node.kubevirt.io/{feature}"] = "true"


def _owned(vmi: Obj, migration_uid: str) -> dict[str, Any]:
    state = vmi.get("status", {}).get("migrationState")
    if not isinstance(state, dict) or state.get("migrationUid") != migration_uid:
        raise ApiError(409, "Conflict", "the migration changed")
    return state


def _acknowledge(migration_uid: str, target: str, ended: str) -> Callable[[Obj], None]:
    """ackMigrationCompletion (migration-target.go:289-317)."""

    def write(current: Obj) -> None:
        state = _owned(current, migration_uid)
        state["endTimestamp"] = ended
        status, labels = current["status"], current["metadata"].setdefault("labels", {})
        labels["kubevirt.io/nodeName"] = target
        labels.pop("kubevirt.io/outdatedLauncherImage", None)
        status["nodeName"] = target
        status.pop("evacuationNodeName", None)
        status.pop("launcherContainerImageVersion", None)
        status["migrationTransport"] = "Unix"
        if state.get("targetMemoryOverhead"):
            status.setdefault("memory", {})["memoryOverhead"] = state["targetMemoryOverhead"]

    return write
