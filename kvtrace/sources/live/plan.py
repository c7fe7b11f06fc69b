"""What ``kvtrace collect`` reads, where it lives in the API, and which items belong to the scope.

The kinds and their API paths are the table "What is read" in docs/collect.md. Selection rules,
each a small pure function over plain dicts:

- launcher pods carry the label ``kubevirt.io=virt-launcher`` and are owned by their VMI
  (services/template.go:722-724, 1726-1740 at v1.9.0); hotplug attachment pods
  (``hotplug-disk``) are not launchers;
- VM revisions are ControllerRevisions owned by a VirtualMachine (the start revisions
  ``revision-start-vm-<uid>-<generation>``, vm.go:1694-1700, and instancetype/preference
  snapshots);
- Events are kept when their ``involvedObject`` is a collected object, an earlier incarnation of
  a selected VM/VMI (same name, other uid), one of its launcher pods, or the virt-controller
  Lease (``LeaderElection`` Events are written on the Lease, client-go's leaselock.go:98-109);
- nodes are those the VMIs and launcher pods ran on (``status.nodeName``, the
  ``kubevirt.io/nodeName`` label, the migration source/target, ``spec.nodeName``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kvtrace.errors import UnsafeResponse
from kvtrace.evidence import (
    ENDPOINTS,
    EVENT,
    KUBEVIRT,
    LEASE,
    NODE,
    POD,
    POOL,
    RESTORE,
    REVISION,
    SNAPSHOT,
    SNAPSHOT_CONTENT,
    VM,
    VMI,
    VMIM,
    VMIRS,
)
from kvtrace.sources.live.names import refusal

LAUNCHER_SELECTOR = "kubevirt.io=virt-launcher"
CONTROLLER_SELECTOR = "kubevirt.io=virt-controller"
LOCK_NAME = "virt-controller"  # Lease (and pre-v1.3 Endpoints) name: v1.9.0 config.go:34
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
LAUNCHER_PREFIX = "virt-launcher-"

Item = dict[str, Any]


@dataclass(frozen=True)
class Resource:
    """One API resource kvtrace reads: its Kind, plural, group and version."""

    kind: str
    plural: str
    group: str = ""
    version: str = "v1"
    namespaced: bool = True
    # versions tried in turn when ``version`` is not served (404): an older KubeVirt
    older_versions: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def versions(self) -> tuple[str, ...]:
        return (self.version, *self.older_versions)

    def at(self, version: str) -> Resource:
        """The same resource at another of its versions."""
        return Resource(self.kind, self.plural, self.group, version, self.namespaced)

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """``/api/v1/namespaces/ns/pods``, ``/apis/kubevirt.io/v1/virtualmachines`` (all ns)…

        Names often come from the server's own data (a VMI's node, a pod to read logs of): one
        that is not a Kubernetes name is refused here, so it never reaches a URL.
        """
        reason = (namespace and refusal("namespace", namespace, label=True)) or (
            name and refusal(f"{self.kind}", name)
        )
        if reason:
            raise UnsafeResponse(f"{reason}; not requested")
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        scope = f"/namespaces/{namespace}" if namespace and self.namespaced else ""
        return f"{base}{scope}/{self.plural}" + (f"/{name}" if name else "")


_SNAPSHOT_API = ("snapshot.kubevirt.io", "v1beta1", True, ("v1alpha1",))
RESOURCES = {
    VM: Resource(VM, "virtualmachines", "kubevirt.io"),
    VMI: Resource(VMI, "virtualmachineinstances", "kubevirt.io"),
    VMIM: Resource(VMIM, "virtualmachineinstancemigrations", "kubevirt.io"),
    KUBEVIRT: Resource(KUBEVIRT, "kubevirts", "kubevirt.io"),
    POD: Resource(POD, "pods"),
    EVENT: Resource(EVENT, "events"),
    ENDPOINTS: Resource(ENDPOINTS, "endpoints"),
    NODE: Resource(NODE, "nodes", namespaced=False),
    REVISION: Resource(REVISION, "controllerrevisions", "apps"),
    LEASE: Resource(LEASE, "leases", "coordination.k8s.io"),
    VMIRS: Resource(VMIRS, "virtualmachineinstancereplicasets", "kubevirt.io"),
    # v1beta1 is stored from v1.7.0 (pools) and v1.3.0 (snapshots); v1alpha1 is still served
    # at v1.9.0 (components/crds.go:398-583) and is the only version before
    POOL: Resource(POOL, "virtualmachinepools", "pool.kubevirt.io", "v1beta1", True, ("v1alpha1",)),
    SNAPSHOT: Resource(SNAPSHOT, "virtualmachinesnapshots", *_SNAPSHOT_API),
    SNAPSHOT_CONTENT: Resource(SNAPSHOT_CONTENT, "virtualmachinesnapshotcontents", *_SNAPSHOT_API),
    RESTORE: Resource(RESTORE, "virtualmachinerestores", *_SNAPSHOT_API),
}
# The order of the manifest's ``collected[]`` (and of the files in objects/).
KIND_ORDER = (
    VM,
    VMI,
    VMIM,
    POD,
    REVISION,
    EVENT,
    LEASE,
    ENDPOINTS,
    KUBEVIRT,
    NODE,
    VMIRS,
    POOL,
    SNAPSHOT,
    SNAPSHOT_CONTENT,
    RESTORE,
)
# Kinds a cluster may not serve at all (an optional API, an older KubeVirt): a 404 on their list
# is an absence the manifest records, not a failure.
OPTIONAL_KINDS = frozenset({VMIRS, POOL, SNAPSHOT, SNAPSHOT_CONTENT, RESTORE})


def meta(item: Item) -> Item:
    value = item.get("metadata")
    return value if isinstance(value, dict) else {}


def section(item: Item, key: str) -> Item:
    """``item[key]`` when it is a mapping, else an empty one (every path is optional)."""
    value = item.get(key)
    return value if isinstance(value, dict) else {}


def key_of(item: Item) -> tuple[str, str]:
    return str(meta(item).get("namespace") or ""), str(meta(item).get("name") or "")


def owners(item: Item) -> list[Item]:
    refs = meta(item).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


@dataclass(frozen=True)
class VmSelection:
    """``--vm`` names as (namespace, name); empty means every VM of the scope."""

    vms: frozenset[tuple[str, str]] = frozenset()

    def vm(self, item: Item) -> bool:
        return not self.vms or key_of(item) in self.vms

    def vmi(self, item: Item) -> bool:
        return not self.vms or key_of(item) in self.vms  # a VMI is named after its VM

    def migration(self, item: Item) -> bool:
        spec = section(item, "spec")
        return not self.vms or (key_of(item)[0], str(spec.get("vmiName") or "")) in self.vms

    def launcher(self, item: Item) -> bool:
        """A virt-launcher pod (not a hotplug pod) of a selected VM, by owner VMI name."""
        if section(meta(item), "labels").get("kubevirt.io") != "virt-launcher":
            return False
        if not self.vms:
            return True
        namespace = key_of(item)[0]
        names = {str(r.get("name")) for r in owners(item) if r.get("kind") == VMI}
        domain = section(meta(item), "annotations").get("kubevirt.io/domain")
        return any((namespace, n) in self.vms for n in names | ({domain} if domain else set()))


def vm_named_by(item: Item) -> str | None:
    """The VM a snapshot is of (``spec.source``), a restore is onto (``spec.target``) or a
    snapshot content holds (``spec.source.virtualMachine``)."""
    spec, kind = section(item, "spec"), item.get("kind")
    if kind == SNAPSHOT_CONTENT:
        name = meta(section(section(spec, "source"), "virtualMachine")).get("name")
        return str(name) if name else None
    ref = section(spec, "source" if kind == SNAPSHOT else "target")
    return str(ref["name"]) if ref.get("kind") in (None, VM) and ref.get("name") else None


def of_selected_vm(items: Iterable[Item], kind: str, selection: VmSelection) -> list[Item]:
    """Snapshots, contents and restores of the selection's VMs (all of them without ``--vm``).

    List items of a custom resource carry their kind; it is set here in case a server omits it.
    """
    kept = []
    for item in items:
        item.setdefault("kind", kind)
        name = vm_named_by(item)
        if not selection.vms or (name and (key_of(item)[0], name) in selection.vms):
            kept.append(item)
    return kept


def owning(
    controllers: Iterable[Item], owned: Iterable[Item], selection: VmSelection
) -> list[Item]:
    """Pools and replica sets that own a collected VM or VMI (all of them without ``--vm``):
    each names its VMs/VMIs in their controller ownerReference (pool.go:754-767, 955,
    replicaset.go:309, 724-737 at v1.9.0)."""
    if not selection.vms:
        return list(controllers)
    uids = {str(ref.get("uid")) for item in owned for ref in owners(item) if ref.get("uid")}
    return [c for c in controllers if str(meta(c).get("uid")) in uids]


def keep_of_scope(objects: dict[str, list[Item]], selection: VmSelection) -> None:
    """What a list cannot select by itself: ownership, and the VM an object names."""
    if REVISION in objects:
        objects[REVISION] = start_revisions(objects[REVISION], selection)
    for kind in (SNAPSHOT, SNAPSHOT_CONTENT, RESTORE):
        if kind in objects:
            objects[kind] = of_selected_vm(objects[kind], kind, selection)
    for kind, owned in ((POOL, VM), (VMIRS, VMI)):
        if kind in objects:
            objects[kind] = owning(objects[kind], objects.get(owned, []), selection)


def start_revisions(revisions: Iterable[Item], selection: VmSelection) -> list[Item]:
    """ControllerRevisions owned by a VirtualMachine (of the selection, when ``--vm`` names one).

    Ownership is read from the revision itself, so it holds even when the VM list failed.
    """
    kept = []
    for revision in revisions:
        namespace = key_of(revision)[0]
        vm_owners = {str(r.get("name")) for r in owners(revision) if r.get("kind") == VM}
        if vm_owners and (
            not selection.vms or any((namespace, n) in selection.vms for n in vm_owners)
        ):
            kept.append(revision)
    return kept


def event_filter(
    objects: dict[str, list[Item]], selection: VmSelection, install_namespace: str | None
) -> Callable[[Item], bool]:
    """Keep Events about collected objects, earlier incarnations, launchers and the Lease.

    The Lease and virt-controller pods are matched by name too, so their Events (leader
    elections) survive when reading the Lease itself failed.
    """
    uids = {str(meta(i).get("uid")) for items in objects.values() for i in items}
    names = {(kind, *key_of(i)) for kind, items in objects.items() for i in items}

    def keep(event: Item) -> bool:
        involved = event.get("involvedObject")
        if not isinstance(involved, dict):
            return False
        kind, ns, name = (str(involved.get(k) or "") for k in ("kind", "namespace", "name"))
        if str(involved.get("uid") or "") in uids or (kind, ns, name) in names:
            return True
        if ns == install_namespace and _install_object(kind, name):
            return True
        if kind in (VM, VMI, VMIM):
            return not selection.vms or (ns, name) in selection.vms
        if kind == POD and name.startswith(LAUNCHER_PREFIX):
            return not selection.vms or any(
                name.startswith(f"{LAUNCHER_PREFIX}{vm}-") for n, vm in selection.vms if n == ns
            )
        return False

    return keep


def _install_object(kind: str, name: str) -> bool:
    return (kind in (LEASE, ENDPOINTS) and name == LOCK_NAME) or (
        kind == POD and name.startswith(f"{LOCK_NAME}-")
    )


def node_names(vmis: Iterable[Item], pods: Iterable[Item]) -> list[str]:
    """The nodes the VMIs (and their launcher pods) ran on, sorted."""
    found: set[str] = set()
    for vmi in vmis:
        status = section(vmi, "status")
        migration = section(status, "migrationState")
        candidates = (
            status.get("nodeName"),
            section(meta(vmi), "labels").get("kubevirt.io/nodeName"),
            migration.get("sourceNode"),
            migration.get("targetNode"),
        )
        found.update(str(n) for n in candidates if n)
    for pod in pods:
        node = section(pod, "spec").get("nodeName")
        if node:
            found.add(str(node))
    return sorted(found)


def is_leader_lock(endpoints: Item) -> bool:
    """The pre-v1.3 Endpoints lock carries the leader annotation."""
    return LEADER_ANNOTATION in section(meta(endpoints), "annotations")


def log_targets(pod: Item) -> list[tuple[str, str]]:
    """``(container, instance)`` pairs to fetch: ``current`` always, ``previous`` after a restart.

    The kubelet keeps only the last terminated instance, and asking for it when the container
    never restarted is a 400, so ``previous`` is asked for only when ``restartCount > 0`` or
    ``lastState.terminated`` is set.
    """
    statuses = section(pod, "status").get("containerStatuses") or []
    restarted = {
        str(s.get("name"))
        for s in statuses
        if isinstance(s, dict)
        and ((s.get("restartCount") or 0) > 0 or section(s, "lastState").get("terminated"))
    }
    targets = []
    for container in section(pod, "spec").get("containers") or []:
        name = str(container.get("name")) if isinstance(container, dict) else ""
        if name:
            targets.append((name, "current"))
            if name in restarted:
                targets.append((name, "previous"))
    return targets
