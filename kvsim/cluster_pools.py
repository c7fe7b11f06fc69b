"""What users do with VirtualMachinePools and VirtualMachineInstanceReplicaSets, as
:class:`kvsim.cluster.Cluster` actions (``Cluster(pools=True)``): create one, scale it, edit the
pool's VM template (``kubectl edit vmpool``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvsim.apiserver import ApiError, ApiServer, Obj
from kvsim.pool_vms import POOL, POOL_API
from kvsim.replicaset import RS

POOL_LABEL = "kubevirt.io/vmpool"  # the label the pool examples select on


def guest_spec(
    claim: str, memory: str = "2Gi", user_data: str = "#cloud-config\nuser: fedora\n"
) -> dict[str, Any]:
    """A VMI spec booting from the PVC ``claim``, with cloud-init (the volumes kvsim's launcher
    renders)."""
    return {
        "domain": {
            "cpu": {"cores": 1, "sockets": 1, "threads": 1},
            "devices": {
                "disks": [
                    {"disk": {"bus": "virtio"}, "name": "rootdisk"},
                    {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"},
                ],
                "interfaces": [{"masquerade": {}, "name": "default"}],
            },
            "memory": {"guest": memory},
            "resources": {"requests": {"memory": memory}},
        },
        "networks": [{"name": "default", "pod": {}}],
        "terminationGracePeriodSeconds": 30,
        "volumes": [
            {"name": "rootdisk", "persistentVolumeClaim": {"claimName": claim}},
            {
                "cloudInitNoCloud": {"userData": user_data},
                "name": "cloudinitdisk",
            },
        ],
    }


def root_disk_template(name: str) -> dict[str, Any]:
    """A DataVolumeTemplate importing the guest image (CDI is not simulated: kvsim only names
    it, and the pool controller renames it per VM)."""
    return {
        "metadata": {"name": name},
        "spec": {
            "source": {"registry": {"url": "docker://quay.io/containerdisks/fedora:41"}},
            "storage": {"resources": {"requests": {"storage": "10Gi"}}},
        },
    }


def pool_object(name: str, namespace: str, replicas: int) -> Obj:
    labels = {POOL_LABEL: name}
    return {
        "apiVersion": POOL_API,
        "kind": POOL,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "virtualMachineTemplate": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "dataVolumeTemplates": [root_disk_template(f"{name}-rootdisk")],
                    "runStrategy": "Always",
                    "template": {
                        "metadata": {"labels": dict(labels)},
                        "spec": guest_spec(f"{name}-rootdisk"),
                    },
                },
            },
        },
    }


def replicaset_object(name: str, namespace: str, replicas: int) -> Obj:
    labels = {"kubevirt.io/vmReplicaSet": name}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": RS,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                # a read-only golden image every VMI of the set boots from
                "spec": guest_spec(f"{name}-golden"),
            },
        },
    }


class PoolActions:
    api: ApiServer

    def at(self, when: int, what: Callable[[], None]) -> None:
        raise NotImplementedError

    def _record(self, who: str, what: str, target: str, outcome: str = "ok") -> None:
        raise NotImplementedError

    def _create(self, when: int, obj: Obj, what: str) -> None:
        meta = obj["metadata"]

        def create() -> None:
            try:
                self.api.create(obj)
            except ApiError as exc:
                self._record("user", what, f"{meta['namespace']}/{meta['name']}", f"refused: {exc}")
                return
            self._record("user", what, f"{meta['namespace']}/{meta['name']}")

        self.at(when, create)

    def create_pool(self, when: int, name: str, replicas: int, namespace: str = "default") -> None:
        self._create(when, pool_object(name, namespace, replicas), "create vmpool")

    def create_replicaset(
        self, when: int, name: str, replicas: int, namespace: str = "default"
    ) -> None:
        self._create(when, replicaset_object(name, namespace, replicas), "create vmirs")

    def _patch(
        self,
        when: int,
        kind: str,
        name: str,
        mutate: Callable[[Obj], None],
        what: str,
        namespace: str,
    ) -> None:
        def act() -> None:
            if self.api.peek(kind, namespace, name) is not None:
                self.api.patch(kind, namespace, name, mutate)
                self._record("user", what, f"{namespace}/{name}")

        self.at(when, act)

    def scale(
        self, when: int, kind: str, name: str, replicas: int, namespace: str = "default"
    ) -> None:
        """``kubectl scale vmpool|vmirs <name> --replicas``."""

        def change(obj: Obj) -> None:
            obj["spec"]["replicas"] = replicas

        self._patch(when, kind, name, change, f"kubectl scale --replicas={replicas}", namespace)

    def edit_pool_memory(
        self, when: int, name: str, memory: str, namespace: str = "default"
    ) -> None:
        """``kubectl edit vmpool``: the guest memory of the pool's VM template."""

        def change(pool: Obj) -> None:
            domain = pool["spec"]["virtualMachineTemplate"]["spec"]["template"]["spec"]["domain"]
            domain["memory"]["guest"] = memory
            domain["resources"]["requests"]["memory"] = memory

        self._patch(when, POOL, name, change, f"edit vmpool template memory={memory}", namespace)
