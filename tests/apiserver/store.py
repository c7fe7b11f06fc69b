"""The objects and container logs the test API server serves, loaded from a kvtrace bundle."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parsers.manifests import load_manifests

# plural → (group, version, kind, namespaced)
RESOURCES: dict[str, tuple[str, str, str, bool]] = {
    "pods": ("", "v1", "Pod", True),
    "events": ("", "v1", "Event", True),
    "endpoints": ("", "v1", "Endpoints", True),
    "nodes": ("", "v1", "Node", False),
    "secrets": ("", "v1", "Secret", True),
    "controllerrevisions": ("apps", "v1", "ControllerRevision", True),
    "leases": ("coordination.k8s.io", "v1", "Lease", True),
    "virtualmachines": ("kubevirt.io", "v1", "VirtualMachine", True),
    "virtualmachineinstances": ("kubevirt.io", "v1", "VirtualMachineInstance", True),
    "virtualmachineinstancemigrations": (
        "kubevirt.io",
        "v1",
        "VirtualMachineInstanceMigration",
        True,
    ),
    "kubevirts": ("kubevirt.io", "v1", "KubeVirt", True),
    "virtualmachineinstancereplicasets": (
        "kubevirt.io",
        "v1",
        "VirtualMachineInstanceReplicaSet",
        True,
    ),
    "virtualmachinepools": ("pool.kubevirt.io", "v1beta1", "VirtualMachinePool", True),
    "virtualmachinesnapshots": ("snapshot.kubevirt.io", "v1beta1", "VirtualMachineSnapshot", True),
    "virtualmachinesnapshotcontents": (
        "snapshot.kubevirt.io",
        "v1beta1",
        "VirtualMachineSnapshotContent",
        True,
    ),
    "virtualmachinerestores": ("snapshot.kubevirt.io", "v1beta1", "VirtualMachineRestore", True),
}
KIND_PLURAL = {kind: plural for plural, (_, _, kind, _) in RESOURCES.items()}
# Versions a group serves besides the stored one, as KubeVirt v1.9.0's CRDs declare them
# (components/crds.go:398-583): an older client still reads v1alpha1.
ALSO_SERVED = {"pool.kubevirt.io": ("v1alpha1",), "snapshot.kubevirt.io": ("v1alpha1",)}


def served_versions(group: str) -> tuple[str, ...]:
    stored = {version for g, version, _, _ in RESOURCES.values() if g == group}
    return (*sorted(stored), *ALSO_SERVED.get(group, ()))


@dataclass
class Store:
    """Objects by plural; logs by (namespace, pod, container, instance) → file on disk."""

    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[tuple[str, str, str, str], Path] = field(default_factory=dict)
    resource_version: str = "4242000"

    def items(self, plural: str, namespace: str | None) -> list[dict[str, Any]]:
        found = self.objects.get(plural, [])
        if namespace is not None:
            found = [i for i in found if i.get("metadata", {}).get("namespace") == namespace]
        return sorted(
            found, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"])
        )

    def get(self, plural: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return next(
            (i for i in self.items(plural, namespace) if i["metadata"]["name"] == name), None
        )

    def add(self, item: dict[str, Any]) -> None:
        self.objects.setdefault(KIND_PLURAL[item["kind"]], []).append(item)


def load_bundle(root: Path) -> Store:
    """Every object list under ``objects/`` and every ``logs/<ns>/<pod>/<c>/<instance>.log``."""
    store = Store()
    for path in sorted((root / "objects").iterdir()):
        for item in load_manifests(path.read_bytes(), str(path)).objects:
            if item.get("kind") in KIND_PLURAL:
                store.add(copy.deepcopy(item))
    for path in sorted((root / "logs").glob("*/*/*/*.log")):
        namespace, pod, container = path.parts[-4:-1]
        store.logs[(namespace, pod, container, path.stem)] = path
    return store
