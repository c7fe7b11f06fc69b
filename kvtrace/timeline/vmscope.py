"""Which objects belong to one VM: its VMIs (incarnations), launcher pods, revisions and Events.

Links, strongest first: a VMI's controller ownerReference is the VM uid (vm.go:1889-1892 at
v1.9.0); a launcher pod's ``kubevirt.io/created-by`` label is the VMI uid
(services/template.go:1726-1740); a start revision is named
``revision-start-vm-<vm uid>-<generation>`` (``vm.go:1694-1700``); an Event's involvedObject uid
is one of those, or (kind, namespace, name) when the uid is unknown. A VMI uid that only Events
remember (a deleted incarnation) is still an incarnation.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kvtrace.evidence import (
    EVENT,
    KUBEVIRT,
    POD,
    RESTORE,
    REVISION,
    SNAPSHOT,
    SNAPSHOT_CONTENT,
    VM,
    VMI,
    VMIM,
    VMIRS,
    Evidence,
    KubeObject,
)

START_REVISION = re.compile(r"^revision-start-vm-(?P<uid>[0-9a-fA-F-]{36})-(?P<gen>\d+)$")
_DELETED_VMI = re.compile(r"deleting the virtual machine instance (?P<uid>\S+)$")
# Every kind a scope looks objects up in: each is read through _Index, never scanned per VM.
INDEXED_KINDS = (VM, VMI, REVISION, POD, EVENT, VMIM, SNAPSHOT, RESTORE)


@dataclass
class VMScope:
    """The VM and everything that belongs to it, found in one Evidence."""

    namespace: str
    name: str
    vm: KubeObject | None
    vmis: list[KubeObject] = field(default_factory=list)
    pods: list[KubeObject] = field(default_factory=list)
    revisions: list[KubeObject] = field(default_factory=list)
    events: list[KubeObject] = field(default_factory=list)
    migrations: list[KubeObject] = field(default_factory=list)  # VMIMs naming the VM's VMI
    kubevirt: KubeObject | None = None  # the KubeVirt CR: cluster-wide configuration
    # VirtualMachineSnapshots of the VM (spec.source) and VirtualMachineRestores onto it
    # (spec.target): their lines are logged with them, their Events name them
    snapshots: list[KubeObject] = field(default_factory=list)
    vmi_uids: list[str] = field(default_factory=list)  # every incarnation, oldest first when known

    @property
    def vm_uid(self) -> str | None:
        return self.vm.uid if self.vm else None

    @property
    def pod_names(self) -> set[str]:
        return {p.name for p in self.pods}

    @property
    def owned_names(self) -> set[str]:
        """Names of the VM's snapshot, restore and snapshot-content objects."""
        names = {s.name for s in self.snapshots}
        for snapshot in self.snapshots:
            content = (snapshot.body.get("status") or {}).get("virtualMachineSnapshotContentName")
            if isinstance(content, str) and content:
                names.add(content)
        return names


def owner_uids(body: dict[str, Any]) -> set[str]:
    refs = body.get("metadata", {}).get("ownerReferences") or []
    return {str(r.get("uid")) for r in refs if isinstance(r, dict) and r.get("uid")}


def _labels(body: dict[str, Any]) -> dict[str, Any]:
    labels = body.get("metadata", {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def find_vm(evidence: Evidence, namespace: str, name: str) -> list[KubeObject]:
    """All incarnations of the VM ``namespace/name`` (a recreated VM has several uids)."""
    candidates = _index(evidence).candidates(VM, ("name", namespace, name))
    return [o for o in candidates if o.namespace == namespace and o.name == name]


def build_scope(evidence: Evidence, namespace: str, name: str) -> VMScope:
    vms = find_vm(evidence, namespace, name)
    vm = _newest(vms)
    scope = VMScope(namespace, name, vm)
    scope.vmis = _vmis_of(evidence, scope)
    scope.revisions = _revisions_of(evidence, scope)
    scope.pods = _pods_of(evidence, scope)
    scope.migrations = _migrations_of(evidence, scope)
    scope.kubevirt = next(iter(evidence.of_kind(KUBEVIRT)), None)
    scope.snapshots = _snapshots_of(evidence, scope)
    scope.events = _events_of(evidence, scope)
    scope.vmi_uids = _incarnation_uids(scope)
    scope.events += _replica_set_events(evidence, scope)
    return scope


def vmi_only_keys(evidence: Evidence) -> set[tuple[str, str]]:
    """VMIs with no VM: owned by a VirtualMachineInstanceReplicaSet, or a user's own VMI. Each
    is a scope of its own (a VM's VMI is in its VM's scope, even with the VM object gone)."""
    vms = {(o.namespace or "default", o.name) for o in evidence.of_kind(VM)}
    keys = set()
    for vmi in evidence.of_kind(VMI):
        key = (vmi.namespace or "default", vmi.name)
        if key not in vms and VM not in {kind for kind, _, _ in controller_refs(vmi.body)}:
            keys.add(key)
    return keys


def controller_refs(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, name, uid) of the controller ownerReference (of every one when none is marked)."""
    refs = [
        r for r in mapping_at(body, "metadata").get("ownerReferences") or [] if isinstance(r, dict)
    ]
    chosen = [r for r in refs if r.get("controller")] or refs
    return [
        (str(r.get("kind") or ""), str(r.get("name") or ""), str(r.get("uid") or ""))
        for r in chosen
    ]


def _replica_set_events(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    """The owning replica set's Events about this VMI: it names the VMI it created by name and
    the one it deleted by uid (replicaset.go:290, 317, 793 at v1.9.0)."""
    owners = {
        (name, uid)
        for vmi in scope.vmis
        for kind, name, uid in controller_refs(vmi.body)
        if kind == VMIRS
    }
    if not owners:
        return []
    keys: list[tuple[str, ...]] = [("uid", uid) for _, uid in sorted(owners) if uid]
    keys += [("involved", scope.namespace, VMIRS, name) for name, _ in sorted(owners)]
    words = {scope.name, *scope.vmi_uids}
    known = {id(e) for e in scope.events}
    found = []
    for event in _index(evidence).candidates(EVENT, *keys):
        involved = mapping_at(event.body, "involvedObject")
        if involved.get("kind") != VMIRS or id(event) in known:
            continue
        said = set(re.findall(r"[\w.-]+", str(event.body.get("message") or "")))
        if said & words:
            found.append(event)
    return found


def _newest(objects: list[KubeObject]) -> KubeObject | None:
    if not objects:
        return None
    return max(objects, key=lambda o: str(o.body.get("metadata", {}).get("creationTimestamp", "")))


class _Index:
    """Candidate objects by the keys scopes look them up with, so building the scope of every
    VM of a large bundle is linear, not VMs × objects. The predicates below still decide."""

    def __init__(self, evidence: Evidence) -> None:
        self.by: dict[tuple[str, ...], list[tuple[int, KubeObject]]] = defaultdict(list)
        for kind in INDEXED_KINDS:
            for position, obj in enumerate(evidence.of_kind(kind)):
                for key in _keys(kind, obj):
                    self.by[(kind, *key)].append((position, obj))

    def candidates(self, kind: str, *keys: tuple[str, ...]) -> list[KubeObject]:
        found = {position: obj for key in keys for position, obj in self.by.get((kind, *key), [])}
        return [found[p] for p in sorted(found)]


def _keys(kind: str, obj: KubeObject) -> list[tuple[str, ...]]:
    meta = obj.body.get("metadata") or {}
    keys: list[tuple[str, ...]] = [("owner", uid) for uid in owner_uids(obj.body)]
    keys.append(("name", obj.namespace or "", obj.name))
    if kind == REVISION:
        named = START_REVISION.match(obj.name)
        keys.append(("vm", named.group("uid")) if named else ("vm", ""))
    elif kind == POD:
        keys.append(("created-by", str(_labels(obj.body).get("kubevirt.io/created-by", ""))))
        domain = (meta.get("annotations") or {}).get("kubevirt.io/domain", "")
        keys.append(("domain", obj.namespace or "", str(domain)))
    elif kind == VMIM:
        spec = obj.body.get("spec") or {}
        keys.append(("vmi-name", obj.namespace or "", str(spec.get("vmiName", ""))))
    elif kind in (SNAPSHOT, RESTORE):
        keys.append(("of-vm", obj.namespace or "", _vm_named(obj) or ""))
    elif kind == EVENT:
        involved = obj.body.get("involvedObject") or {}
        keys.append(("uid", str(involved.get("uid", ""))))
        keys.append(
            (
                "involved",
                str(involved.get("namespace", "")),
                str(involved.get("kind", "")),
                str(involved.get("name", "")),
            )
        )
    return keys


def _index(evidence: Evidence) -> _Index:
    index = evidence.cache.get("vmscope")
    if not isinstance(index, _Index):
        index = evidence.cache["vmscope"] = _Index(evidence)
    return index


def _vmis_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    found = []
    keys = [
        ("name", scope.namespace, scope.name),
        *([("owner", scope.vm_uid)] if scope.vm_uid else []),
    ]
    for vmi in _index(evidence).candidates(VMI, *keys):
        owners = owner_uids(vmi.body)
        same_key = (vmi.namespace, vmi.name) == (scope.namespace, scope.name)
        if scope.vm_uid in owners or (same_key and (not owners or not scope.vm_uid)):
            found.append(vmi)
    return found


def _revisions_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    if not scope.vm_uid:
        return []
    found = []
    for rev in _index(evidence).candidates(REVISION, ("vm", scope.vm_uid)):
        named = START_REVISION.match(rev.name)
        if named and named.group("uid") == scope.vm_uid and rev.namespace == scope.namespace:
            found.append(rev)
    return found


def _pods_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    vmi_uids = {v.uid for v in scope.vmis if v.uid}
    found = []
    keys: list[tuple[str, ...]] = [("domain", scope.namespace, scope.name)]
    keys += [(how, uid) for uid in sorted(vmi_uids) for how in ("created-by", "owner")]
    for pod in _index(evidence).candidates(POD, *keys):
        labels = _labels(pod.body)
        if labels.get("kubevirt.io") not in (None, "virt-launcher"):
            continue
        created_by = labels.get("kubevirt.io/created-by")
        domain = pod.body.get("metadata", {}).get("annotations", {}) or {}
        if (
            created_by in vmi_uids
            or owner_uids(pod.body) & vmi_uids
            or (
                pod.namespace == scope.namespace
                and domain.get("kubevirt.io/domain") == scope.name
                and labels.get("kubevirt.io") == "virt-launcher"
            )
        ):
            found.append(pod)
    return found


def eviction_strategy(scope: VMScope, vmi_uid: str | None) -> tuple[str | None, str]:
    """The VMI's evictionStrategy (the VM template's when the VMI is not in the evidence), else
    the cluster's from the KubeVirt CR (VMIEvictionStrategy, migrations.go:116-122 at v1.9.0),
    and which of them said it."""
    vmi = next((v for v in scope.vmis if v.uid == vmi_uid), None)
    spec = (
        mapping_at(vmi.body, "spec")
        if vmi
        else mapping_at(scope.vm.body if scope.vm else {}, "spec", "template", "spec")
    )
    if spec.get("evictionStrategy"):
        return str(spec["evictionStrategy"]), "the VMI's" if vmi else "the VM template's"
    config = mapping_at(scope.kubevirt.body if scope.kubevirt else {}, "spec", "configuration")
    found = config.get("evictionStrategy")
    return (str(found) if found else None), "the KubeVirt CR's"


def mapping_at(value: Any, *path: str) -> dict[str, Any]:
    """The mapping at ``path``, or {} where a stranger's object has something else there (a
    truncated file, a hand edit)."""
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _vm_named(obj: KubeObject) -> str | None:
    """The VM a snapshot is of (``spec.source``) or a restore is onto (``spec.target``)."""
    spec = obj.body.get("spec") or {}
    ref = (
        spec.get("source" if obj.kind == SNAPSHOT else "target") if isinstance(spec, dict) else None
    )
    if isinstance(ref, dict) and ref.get("kind") in (None, VM) and ref.get("name"):
        return str(ref["name"])
    return None


def _snapshots_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    index, key = _index(evidence), ("of-vm", scope.namespace, scope.name)
    found = [*index.candidates(SNAPSHOT, key), *index.candidates(RESTORE, key)]
    return [o for o in found if o.namespace == scope.namespace and _vm_named(o) == scope.name]


def _migrations_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    """VMIMs whose ``spec.vmiName`` is the VM's (the link is by name only, virtinformers.go:550)."""
    key = ("vmi-name", scope.namespace, scope.name)
    return [
        m
        for m in _index(evidence).candidates(VMIM, key)
        if m.namespace == scope.namespace
        and (m.body.get("spec") or {}).get("vmiName") == scope.name
    ]


def _events_of(evidence: Evidence, scope: VMScope) -> list[KubeObject]:
    uids = {scope.vm_uid, *(v.uid for v in scope.vmis), *(p.uid for p in scope.pods)} - {None}
    uids |= {m.uid for m in (*scope.migrations, *scope.snapshots)} - {None}
    names = {(VM, scope.name), (VMI, scope.name), *((POD, p) for p in scope.pod_names)}
    names |= {(VMIM, m.name) for m in scope.migrations}
    names |= {(s.kind, s.name) for s in scope.snapshots}
    names |= {(SNAPSHOT_CONTENT, n) for n in scope.owned_names}
    found = []
    keys: list[tuple[str, ...]] = [("uid", str(uid)) for uid in sorted(str(u) for u in uids)]
    keys += [("involved", scope.namespace, kind, name) for kind, name in sorted(names)]
    for event in _index(evidence).candidates(EVENT, *keys):
        involved = event.body.get("involvedObject") or {}
        uid = involved.get("uid")
        key = (involved.get("kind"), involved.get("name"))
        by_name = involved.get("namespace") == scope.namespace and key in names
        # a VM Event with another uid belongs to an earlier incarnation of the VM name
        if (uid and uid in uids) or (by_name and (key[0] != VM or not uid or not scope.vm_uid)):
            found.append(event)
    return found


def _incarnation_uids(scope: VMScope) -> list[str]:
    """VMI uids: from the VMI objects, from Events on VMIs and from the VM's delete Events."""
    seen: dict[str, str] = {}
    for vmi in scope.vmis:
        if vmi.uid:
            seen.setdefault(vmi.uid, str(vmi.body["metadata"].get("creationTimestamp", "")))
    for event in scope.events:
        involved = event.body.get("involvedObject") or {}
        first = str(event.body.get("firstTimestamp") or event.body.get("eventTime") or "")
        if involved.get("kind") == VMI and involved.get("uid"):
            _keep_earliest(seen, str(involved["uid"]), first)
        deleted = _DELETED_VMI.search(str(event.body.get("message", "")))
        if involved.get("kind") == VM and deleted:
            _keep_earliest(seen, deleted.group("uid"), "")
    return [uid for uid, _ in sorted(seen.items(), key=lambda kv: (kv[1] or "", kv[0]))]


def _keep_earliest(seen: dict[str, str], uid: str, when: str) -> None:
    if uid not in seen or (when and (not seen[uid] or when < seen[uid])):
        seen[uid] = when
