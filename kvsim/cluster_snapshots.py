"""What users do with snapshots and restores, as :class:`kvsim.cluster.Cluster` actions
(``Cluster(snapshots=True)``), and the parts of the cluster they need: virt-handler's guest
agents and freeze subresources (:mod:`kvsim.guest_agent`) and a CSI snapshotter that gives each
VolumeSnapshot a ``creationTime`` and then ``readyToUse`` (the external-snapshotter's job)."""

from __future__ import annotations

import random
from collections.abc import Callable

from kvsim import timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj
from kvsim.guest_agent import VMI, GuestAgents
from kvsim.kernel import MS, Kernel
from kvsim.restores import RESTORE
from kvsim.snapshot_content import SNAPSHOT, SNAPSHOT_API, VOLUME_SNAPSHOT


def snapshot_object(name: str, vm: str, namespace: str) -> Obj:
    return {
        "apiVersion": SNAPSHOT_API,
        "kind": SNAPSHOT,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": vm}},
    }


def restore_object(name: str, vm: str, snapshot: str, namespace: str, policy: str | None) -> Obj:
    restore: Obj = {
        "apiVersion": SNAPSHOT_API,
        "kind": RESTORE,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "target": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": vm},
            "virtualMachineSnapshotName": snapshot,
        },
    }
    if policy is not None:
        restore["spec"]["targetReadinessPolicy"] = policy
    return restore


class CsiSnapshotter:
    """Cuts every VolumeSnapshot a moment after its creation, then makes it ready to use."""

    def __init__(self, kernel: Kernel, api: ApiServer, seed: str) -> None:
        self.kernel, self.api = kernel, api
        self.rng = random.Random(f"csi-snapshotter/{seed}")
        api.admission[VOLUME_SNAPSHOT] = self._admit

    def _admit(self, api: ApiServer, obj: Obj) -> None:
        meta = obj["metadata"]
        key = (meta["namespace"], meta["name"])
        cut = self.rng.randint(400, 3_000) * MS
        self.kernel.after(cut, lambda: self._write(key, {"readyToUse": False}, cut=True))
        ready = cut + self.rng.randint(1_000, 6_000) * MS
        self.kernel.after(ready, lambda: self._write(key, {"readyToUse": True}))

    def _write(self, key: tuple[str, str], fields: Obj, cut: bool = False) -> None:
        if self.api.peek(VOLUME_SNAPSHOT, *key) is None:
            return
        now = timefmt.seconds(self.kernel.now)

        def write(current: Obj) -> None:
            status = current.setdefault("status", {})
            if cut:
                status["creationTime"] = now
            status.update(fields)

        self.api.patch(VOLUME_SNAPSHOT, key[0], key[1], write)


def serve_freeze(api: ApiServer, agents: GuestAgents) -> None:
    api.subresources[(VMI, "freeze")] = lambda ns, name: agents.freeze(ns, name, True)
    api.subresources[(VMI, "unfreeze")] = lambda ns, name: agents.freeze(ns, name, False)


class SnapshotActions:
    api: ApiServer

    def at(self, when: int, what: Callable[[], None]) -> None:
        raise NotImplementedError

    def _record(self, who: str, what: str, target: str, outcome: str = "ok") -> None:
        raise NotImplementedError

    def _submit(self, when: int, obj: Obj, what: str) -> None:
        meta = obj["metadata"]

        def create() -> None:
            target = f"{meta['namespace']}/{meta['name']}"
            try:
                self.api.create(obj)
            except ApiError as exc:
                self._record("user", what, target, f"refused: {exc}")
                return
            self._record("user", what, target)

        self.at(when, create)

    def snapshot_vm(self, when: int, name: str, vm: str, namespace: str = "default") -> None:
        """``virtctl snapshot`` / ``kubectl create`` of a VirtualMachineSnapshot."""
        self._submit(when, snapshot_object(name, vm, namespace), "create vmsnapshot")

    def restore_vm(
        self,
        when: int,
        name: str,
        vm: str,
        snapshot: str,
        namespace: str = "default",
        policy: str | None = None,
    ) -> None:
        """A VirtualMachineRestore of ``vm`` from ``snapshot``; ``policy``: its
        ``targetReadinessPolicy`` (unset: WaitGracePeriod)."""
        restore = restore_object(name, vm, snapshot, namespace, policy)
        self._submit(when, restore, "create vmrestore")
