"""A simulated cluster: the API server, the nodes, the virt-controller replicas, and the actions
users and the cluster take, each scheduled at a time. ``capture`` returns what a collector
would read at a moment: the objects and every replica's current and previous log.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kvsim import timefmt, virtapi
from kvsim.apiserver import ApiError, ApiServer, Obj, Rejection, clone
from kvsim.cluster_migrations import MigrationActions
from kvsim.cluster_pools import PoolActions, guest_spec
from kvsim.cluster_snapshots import CsiSnapshotter, SnapshotActions, serve_freeze
from kvsim.events import EVENT_TTL_US
from kvsim.guest_agent import GuestAgents
from kvsim.informer import DropRule
from kvsim.kernel import MS, SECOND, Kernel
from kvsim.launcher import vmi_owner
from kvsim.logs import ContainerLog
from kvsim.nodes import Fate, Nodes
from kvsim.releases import SIMULATED, check_simulable
from kvsim.releases import lock_kind as release_lock
from kvsim.replica import NAMESPACE, Replica, controller_pod
from kvsim.runtime import CodeFaults
from kvsim.virt_handler import VirtHandlers
from kvsim.vmim import VMIM
from kvsim.vmim import admit as admit_migration

VM = "VirtualMachine"
POD_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.String
POOL_KINDS = ("VirtualMachinePool", "VirtualMachineInstanceReplicaSet")  # Cluster(pools=True)
SNAPSHOT_KINDS = (  # Cluster(snapshots=True)
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VirtualMachineRestore",
)
KINDS_CAPTURED = (
    "VirtualMachine",
    "VirtualMachineInstance",
    "Pod",
    "ControllerRevision",
    "Event",
    "Lease",
    "Endpoints",
    "KubeVirt",
    "Node",
    "VirtualMachineInstanceMigration",
    *POOL_KINDS,
    *SNAPSHOT_KINDS,
)
MIGRATION_KINDS = ("VirtualMachineInstanceMigration",)  # captured from clusters that migrate


@dataclass(frozen=True)
class Action:
    """What someone did, and what they were told: the truth a test compares verdicts with."""

    at: int
    who: str
    what: str
    target: str
    outcome: str = "ok"


@dataclass
class Capture:
    captured_at: int
    objects: dict[str, list[Obj]]
    logs: list[tuple[ContainerLog, str]]  # (log, "current" | "previous")
    actions: list[Action]
    injected: list[str]  # faults deliberately injected into this history
    kubevirt_version: str = "v1.9.0"


USER_DATA = "#cloud-config\nuser: fedora\npassword: changeme\nchpasswd: { expire: False }\n"


def _user_guest(name: str) -> dict[str, Any]:
    """The guest a user's VM runs: kvsim's guest (cluster_pools.guest_spec) on a q35 machine."""
    spec = guest_spec(f"{name}-rootdisk", user_data=USER_DATA)
    spec["domain"]["machine"] = {"type": "q35"}
    return spec


def vm_object(name: str, namespace: str, strategy: str | None, running: bool | None = None) -> Obj:
    """A VM as a user writes it: a 2Gi guest on a PVC with cloud-init (the VM webhook fills in
    the firmware UUID and serial)."""
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": name}},
            "spec": {"architecture": "amd64", **_user_guest(name)},
        }
    }
    if strategy is not None:
        spec["runStrategy"] = strategy
    if running is not None:
        spec["running"] = running
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": VM,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


@dataclass
class Cluster(MigrationActions, PoolActions, SnapshotActions):
    seed: str
    start: int
    replicas_count: int = 2
    node_names: tuple[str, ...] = ("node-a", "node-b", "node-c")
    fates: dict[tuple[str, int], Fate] = field(default_factory=dict)
    lock_kind: str | None = None  # None: the release's (releases.lock_kind)
    # the release whose call-site positions the logs print and whose code the controllers follow
    # where it differs from v1.9.0's (kvsim.releases)
    release: str = SIMULATED
    # virt-handler's heartbeats and migration side, a scheduler that reads the nodes, and the
    # migrations in the capture (off: the histories made before kvsim modelled them)
    live_migration: bool = False
    migration_fates: dict[tuple[str, int], str] = field(default_factory=dict)
    # the pool and VMIRS controllers, the snapshot and restore controllers with virt-handler's
    # freeze side, and their objects in the capture (off: the histories made before)
    pools: bool = False
    snapshots: bool = False
    # the VMI controller reports launcher images and the workload updater migrates the VMIs
    # of an outdated one (KubeVirt CR workloadUpdateMethods [LiveMigrate]); off: as before
    workload_updates: bool = False
    workload_update_methods: tuple[str, ...] = ("LiveMigrate",)

    def __post_init__(self) -> None:
        check_simulable(self.release, 2)
        self.rng = random.Random(f"cluster/{self.seed}")
        self.kernel = Kernel(self.start)
        self.api = ApiServer(self.kernel, self.seed)
        self.api.admission[VMIM] = admit_migration
        self.nodes = Nodes(self.kernel, self.api, self.node_names, self.seed, self._fate)
        self.actions: list[Action] = []
        self.injected: list[str] = []
        self._cluster_objects()
        self.handlers: VirtHandlers | None = None
        if self.live_migration:
            self.nodes.node_aware = True
            self.handlers = VirtHandlers(
                self.kernel, self.api, self.nodes, self.seed, self.migration_outcome
            )
        if self.snapshots:
            serve_freeze(self.api, GuestAgents(self.kernel, self.api, self.seed))
            CsiSnapshotter(self.kernel, self.api, self.seed)
        self._rs_hash = "".join(self.rng.choice(POD_ALPHABET) for _ in range(10))
        self.replicas = [self._replica(i) for i in range(self.replicas_count)]
        for index, replica in enumerate(self.replicas):
            self.kernel.at(self.start + index * self.rng.randint(300, 4_000) * MS, replica.start)

    def _fate(self, name: str, index: int) -> Fate | None:
        return self.fates.get((name, index))

    def _replica(self, index: int) -> Replica:
        """``virt-controller-<pod-template-hash>-<5>``, as the ReplicaSet names its pods."""
        suffix = "".join(self.rng.choice(POD_ALPHABET) for _ in range(5))
        name = f"virt-controller-{self._rs_hash}-{suffix}"
        node = self.node_names[index % len(self.node_names)]
        self.api.create(controller_pod(name, node, self._rs_hash, f"10.244.{index}.{11 + index}"))
        return Replica(
            self.kernel,
            self.api,
            name,
            node,
            self.seed,
            lock_kind=self.lock_kind or release_lock(self.release),
            release=self.release,
            pools=self.pools,
            snapshots=self.snapshots,
            workload_updates=self.workload_updates,
        )

    def _cluster_objects(self) -> None:
        self.api.create(
            {
                "apiVersion": "kubevirt.io/v1",
                "kind": "KubeVirt",
                "metadata": {"name": "kubevirt", "namespace": NAMESPACE},
                "spec": {
                    "configuration": {"developerConfiguration": {}},
                    **(
                        {
                            "workloadUpdateStrategy": {
                                "workloadUpdateMethods": list(self.workload_update_methods)
                            }
                        }
                        if self.workload_updates
                        else {}
                    ),
                },
                "status": {
                    "observedKubeVirtVersion": self.release,
                    "phase": "Deployed",
                    "targetKubeVirtVersion": self.release,
                },
            }
        )
        for name in self.node_names:
            self.api.create(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name},
                    "status": {"nodeInfo": {"kubeletVersion": "v1.31.2"}},
                }
            )

    # --- actions ---------------------------------------------------------------------------
    def upgrade_launcher(self, when: int, image: str) -> None:
        """A KubeVirt update: virt-controller now renders launchers with ``image`` (the rollout
        of its pods is not modelled: the replicas keep their names and leadership)."""

        def deployed(kubevirt: Obj) -> None:  # virt-operator, once the rollout is done
            deployment = "".join(self.rng.choice("0123456789abcdef") for _ in range(40))
            status = kubevirt.setdefault("status", {})
            status.update(observedDeploymentID=deployment, targetDeploymentID=deployment)

        def upgrade() -> None:
            for replica in self.replicas:
                replica.upgrade_launcher(image)
            self.api.patch("KubeVirt", NAMESPACE, "kubevirt", deployed)
            self._record("admin", "update KubeVirt", image)

        self.at(when, upgrade)

    def at(self, when: int, what: Callable[[], None]) -> None:
        self.kernel.at(when, what)

    def _record(self, who: str, what: str, target: str, outcome: str = "ok") -> None:
        self.actions.append(Action(self.kernel.now, who, what, target, outcome))

    def create_vm(
        self,
        when: int,
        name: str,
        namespace: str = "default",
        strategy: str | None = "Always",
        running: bool | None = None,
        eviction: str | None = None,
    ) -> None:
        """``eviction``: the template's ``spec.evictionStrategy``."""

        def create() -> None:
            vm = vm_object(name, namespace, strategy, running)
            if eviction is not None:
                vm["spec"]["template"]["spec"]["evictionStrategy"] = eviction
            try:
                self.api.create(vm)
            except ApiError as exc:
                self._record("user", "create", f"{namespace}/{name}", f"refused: {exc}")
                return
            self._record("user", "create", f"{namespace}/{name}", strategy or f"running={running}")

        self.at(when, create)

    def delete_vm(self, when: int, name: str, namespace: str = "default") -> None:
        def delete() -> None:
            if self.api.peek(VM, namespace, name) is not None:
                self.api.delete(VM, namespace, name)
                self._record("user", "delete", f"{namespace}/{name}")

        self.at(when, delete)

    def virtctl(self, when: int, verb: str, name: str, namespace: str = "default") -> None:
        handler = {"start": virtapi.start, "stop": virtapi.stop, "restart": virtapi.restart}[verb]

        def act() -> None:
            outcome = handler(self.api, namespace, name)
            self._record(
                "user",
                f"virtctl {verb}",
                f"{namespace}/{name}",
                "ok" if outcome.accepted else f"refused: {outcome.detail}",
            )

        self.at(when, act)

    def edit_vm(
        self,
        when: int,
        name: str,
        mutate: Callable[[Obj], None],
        what: str,
        namespace: str = "default",
    ) -> None:
        def edit() -> None:
            if self.api.peek(VM, namespace, name) is not None:
                self.api.patch(VM, namespace, name, mutate)
                self._record("user", what, f"{namespace}/{name}")

        self.at(when, edit)

    def force_delete_pods(self, when: int, name: str, namespace: str = "default") -> None:
        """``kubectl delete pod --force --grace-period=0`` of the VM's launcher pods: the API
        server removes them at once, without waiting for the kubelet."""

        def remove() -> None:
            for pod in list(self.api.items("Pod")):
                meta = pod["metadata"]
                labels = meta.get("labels") or {}
                if meta.get("namespace") == namespace and labels.get("vm.kubevirt.io/name") == name:
                    self.api.remove("Pod", namespace, meta["name"])
                    self._record(
                        "user", "kubectl delete pod --force", f"{namespace}/{meta['name']}"
                    )

        self.at(when, remove)

    def set_strategy(self, when: int, name: str, strategy: str, namespace: str = "default") -> None:
        def change(vm: Obj) -> None:
            vm["spec"].pop("running", None)
            vm["spec"]["runStrategy"] = strategy

        self.edit_vm(when, name, change, f"runStrategy={strategy}", namespace)

    # --- cluster faults and events ---------------------------------------------------------
    def reject_vmi_creates(self, when: int, name: str, message: str, times: int = 1) -> None:
        def reject() -> None:
            self.api.faults.rejections.append(
                Rejection("VirtualMachineInstance", name, message, times)
            )
            self._record("cluster", "webhook rejects VMI creates", name, message)

        self.at(when, reject)

    def leftover_pdb(self, when: int, vmi: str, namespace: str = "default") -> None:
        """A PodDisruptionBudget with the VMI as controller, as KubeVirt up to v1.5 created for
        each VMI (createPDB, disruptionbudget.go:492-514 at v1.5.0): left by an upgrade, or
        re-applied by a tool. v1.9.0's disruption budget controller deletes it."""

        def create() -> None:
            owner = self.api.peek("VirtualMachineInstance", namespace, vmi)
            if owner is None:
                return
            suffix = "".join(self.rng.choice(POD_ALPHABET) for _ in range(5))
            self.api.create(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {
                        "name": f"kubevirt-disruption-budget-{suffix}",
                        "namespace": namespace,
                        "ownerReferences": [vmi_owner(vmi, owner["metadata"]["uid"])],
                    },
                    "spec": {
                        "minAvailable": 1,
                        "selector": {
                            "matchLabels": {"kubevirt.io/created-by": owner["metadata"]["uid"]}
                        },
                    },
                }
            )
            self._record("cluster", "a v1.5 PodDisruptionBudget for the VMI", f"{namespace}/{vmi}")

        self.at(when, create)

    def slow(self, kind: str, verb: str, extra: int) -> None:
        self.api.faults.slow[(kind, verb)] = extra

    def freeze(self, when: int, replica: int, duration: int) -> None:
        def freeze() -> None:
            self.replicas[replica].freeze(duration)
            self._record(
                "cluster", "replica stalls", self.replicas[replica].pod, f"{duration // SECOND}s"
            )

        self.at(when, freeze)

    def crash(self, when: int, replica: int, restart_after: int | None = None) -> None:
        def crash() -> None:
            delay = restart_after or self.rng.randint(1, 10) * SECOND
            self.replicas[replica].exit(restart_after=delay)
            self._record("cluster", "replica crashes", self.replicas[replica].pod)

        self.at(when, crash)

    def outage(self, when: int, replica: int, duration: int) -> None:
        """The replica's node loses its connection to the API server for ``duration``."""

        def cut() -> None:
            host = self.replicas[replica].pod
            self.api.faults.outages.append((host, self.kernel.now, self.kernel.now + duration))
            self._record("cluster", "node loses the API", host, f"{duration // SECOND}s")

        self.at(when, cut)

    def rollout(self, when: int, lock_forbidden: bool = False) -> None:
        """virt-operator replaces every virt-controller pod (a new ReplicaSet); the old pods and
        their logs are gone. ``lock_forbidden``: the new pods' role cannot read the lock."""

        def roll() -> None:
            for old in self.replicas:
                old.stop()
                self.api.remove("Pod", NAMESPACE, old.pod)
            self._rs_hash = "".join(self.rng.choice(POD_ALPHABET) for _ in range(10))
            count = len(self.replicas)
            self.replicas = [self._replica(i) for i in range(count)]
            for index, replica in enumerate(self.replicas):
                replica.lock_forbidden = lock_forbidden
                self.kernel.after(index * self.rng.randint(300, 2_000) * MS, replica.start)
            self._record("cluster", "rollout of virt-controller", self._rs_hash)

        self.at(when, roll)

    def drop_event(
        self, when: int, replica: int, kind: str, name: str, event: str, times: int = 1
    ) -> None:
        """The next ``times`` ``event``s for ``kind``/``name`` never reach ``replica``'s
        informer (a watch that silently lost them)."""

        def drop() -> None:
            controller = self.replicas[replica].vm_controller
            if controller is not None:
                controller.rt.informers.drops.append(DropRule(kind, name, event, times))

        self.at(when, drop)

    def inject(self, description: str) -> None:
        self.injected.append(description)

    def code_faults(self, replica: int) -> CodeFaults:
        return self.replicas[replica].faults

    # --- running and capturing -------------------------------------------------------------
    def run(self, until: int) -> None:
        self.kernel.run(until)

    def _captures(self, kind: str) -> bool:
        if kind in MIGRATION_KINDS:
            return self.live_migration
        if kind in POOL_KINDS:
            return self.pools
        return self.snapshots if kind in SNAPSHOT_KINDS else True

    def capture(self, at: int | None = None) -> Capture:
        if at is not None:
            self.run(at)
        now = self.kernel.now
        kinds = [k for k in KINDS_CAPTURED if self._captures(k)]
        objects: dict[str, list[Obj]] = {kind: [] for kind in kinds}
        hosting = {
            str(v.get("status", {}).get("nodeName"))
            for v in self.api.items("VirtualMachineInstance")
        }
        for kind in kinds:
            for obj in self.api.items(kind):
                if kind == "Event" and now - timefmt.from_iso(obj["lastTimestamp"]) > EVENT_TTL_US:
                    continue
                if kind == "Node" and obj["metadata"]["name"] not in hosting:
                    continue  # a collector reads the VMIs' nodes only (docs/collect.md)
                objects[kind].append(clone(obj))
        logs: list[tuple[ContainerLog, str]] = []
        for replica in self.replicas:
            logs.append((replica.current, "current"))
            if replica.previous is not None:
                logs.append((replica.previous, "previous"))
        return Capture(now, objects, logs, list(self.actions), list(self.injected), self.release)
