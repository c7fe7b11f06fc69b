"""What users and the cluster do around live migration, as :class:`kvsim.cluster.Cluster`
actions: VMs that may migrate, ``virtctl migrate``, a node drain (``kubectl drain``: cordon,
then an Eviction of each pod every 5 s until none is left), a virt-handler that hangs, and a
guest that dies while no virt-handler watches it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvsim.apiserver import ApiError, ApiServer, Obj
from kvsim.kernel import SECOND, Kernel
from kvsim.nodes import Nodes
from kvsim.virt_handler import VirtHandlers
from kvsim.virtapi import evict
from kvsim.vmim import VMIM, new_migration

DRAIN_RETRY_US = 5 * SECOND  # kubectl drain retries a refused eviction every 5 s
DRAIN_TIMEOUT_US = 15 * 60 * SECOND


class MigrationActions:
    api: ApiServer
    kernel: Kernel
    nodes: Nodes
    handlers: VirtHandlers | None
    migration_fates: dict[tuple[str, int], str]

    def at(self, when: int, what: Callable[[], None]) -> None:
        raise NotImplementedError

    def _record(self, who: str, what: str, target: str, outcome: str = "ok") -> None:
        raise NotImplementedError

    def migration_outcome(self, name: str, attempt: int) -> str:
        return self.migration_fates.get((name, attempt), "succeed")

    def migrate(self, when: int, name: str, namespace: str = "default") -> None:
        """``virtctl migrate``: virt-api creates the migration (api-lifecycle.go:523-573)."""

        def create() -> None:
            vmim = new_migration(namespace, name, "kubevirt-migrate-vm-")
            try:
                created = self.api.create(vmim)
            except ApiError as exc:
                self._record("user", "virtctl migrate", f"{namespace}/{name}", f"refused: {exc}")
                return
            self._record(
                "user", "virtctl migrate", f"{namespace}/{name}", created["metadata"]["name"]
            )

        self.at(when, create)

    def cancel_migration(self, when: int, name: str, namespace: str = "default") -> None:
        """``kubectl delete vmim`` of the VMI's unfinished migration (its finalizer keeps it
        until the controller has failed it, migration.go:575-588)."""

        def cancel() -> None:
            for vmim in list(self.api.items(VMIM)):
                meta = vmim["metadata"]
                unfinished = vmim.get("status", {}).get("phase") not in ("Succeeded", "Failed")
                if (
                    meta["namespace"] == namespace
                    and vmim["spec"]["vmiName"] == name
                    and unfinished
                ):
                    self.api.delete(VMIM, namespace, meta["name"])
                    self._record("user", "kubectl delete vmim", f"{namespace}/{meta['name']}")

        self.at(when, cancel)

    def drain(self, when: int, node: str) -> None:
        """``kubectl drain <node>``: cordon, then evict every pod on it until none is left."""

        def cordon() -> None:
            self.api.patch("Node", "", node, _cordon)
            self._record("admin", "kubectl drain", node, "cordoned")
            self._evict_all(node, self.kernel.now + DRAIN_TIMEOUT_US)

        self.at(when, cordon)

    def _evict_all(self, node: str, deadline: int) -> None:
        left = [  # the launcher pods: kubevirt's own pods are left to their controllers here
            p
            for p in self.api.items("Pod")
            if p["spec"].get("nodeName") == node
            and not p["metadata"].get("deletionTimestamp")
            and (p["metadata"].get("labels") or {}).get("kubevirt.io") == "virt-launcher"
        ]
        for pod in left:
            outcome = evict(self.api, pod["metadata"]["namespace"], pod["metadata"]["name"])
            if outcome.accepted:
                self._record("admin", "evict pod", pod["metadata"]["name"], "evicted")
            elif "Evacuation in progress" not in outcome.detail:
                self._record(
                    "admin", "evict pod", pod["metadata"]["name"], f"refused: {outcome.detail}"
                )
        running = [
            p for p in left if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        ]
        if running and self.kernel.now < deadline:
            self.kernel.after(DRAIN_RETRY_US, lambda: self._evict_all(node, deadline))

    def cordon(self, when: int, node: str, unschedulable: bool = True) -> None:
        """``kubectl cordon`` (or ``uncordon``, ``unschedulable=False``)."""

        def change(current: Obj) -> None:
            current.setdefault("spec", {})["unschedulable"] = unschedulable
            if not unschedulable:
                current["spec"].pop("unschedulable")
                current["spec"].pop("taints", None)

        def act() -> None:
            self.api.patch("Node", "", node, _cordon if unschedulable else change)
            self._record("admin", "kubectl cordon" if unschedulable else "kubectl uncordon", node)

        self.at(when, act)

    def node_of(self, name: str, namespace: str = "default") -> str | None:
        vmi = self.api.peek("VirtualMachineInstance", namespace, name)
        node = (vmi or {}).get("status", {}).get("nodeName")
        return str(node) if node else None

    def handler_hangs(self, when: int, node: str) -> None:
        def hang() -> None:
            if self.handlers is not None:
                self.handlers.hang(node)
                self._record("cluster", "virt-handler hangs", node)

        self.at(when, hang)

    def guest_dies(self, when: int, name: str, namespace: str = "default") -> None:
        """The guest's QEMU dies: the launcher exits and its pod fails. A hung virt-handler does
        not report it, so the VMI stays Running."""

        def die() -> None:
            for pod in list(self.api.items("Pod")):
                labels = pod["metadata"].get("labels") or {}
                if (
                    pod["metadata"].get("namespace") == namespace
                    and labels.get("vm.kubevirt.io/name") == name
                    and pod.get("status", {}).get("phase") == "Running"
                ):
                    self.nodes.terminate(pod, "Failed")
                    self._record("cluster", "guest dies", f"{namespace}/{name}")

        self.at(when, die)

    def migrations(self) -> list[Obj]:
        return list(self.api.items(VMIM))


def _cordon(node: Any) -> None:
    node.setdefault("spec", {})["unschedulable"] = True
    taint = {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable"}
    taints = node["spec"].setdefault("taints", [])
    if taint not in taints:
        taints.append(taint)
