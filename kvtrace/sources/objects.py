"""The object index of a bundle: kinds kvtrace uses, and de-duplication."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    KubeObject,
)

# Resource plurals (file names in inspect, kvtrace and dump layouts) → Kind.
PLURAL_KINDS = {
    "virtualmachines": VM,
    "virtualmachineinstances": VMI,
    "virtualmachineinstancemigrations": VMIM,
    "pods": POD,
    "controllerrevisions": REVISION,
    "events": EVENT,
    "leases": LEASE,
    "endpoints": ENDPOINTS,
    "kubevirts": KUBEVIRT,
    "nodes": NODE,
    "virtualmachinesnapshots": SNAPSHOT,
    "virtualmachinerestores": RESTORE,
    "virtualmachinepools": POOL,
    "virtualmachinesnapshotcontents": SNAPSHOT_CONTENT,
    "virtualmachineinstancereplicasets": VMIRS,
}
USED_KINDS = frozenset(PLURAL_KINDS.values())
# The API group each used kind must come from: a VMware ``VirtualMachine`` or an
# ``events.k8s.io`` Event (another shape) is not what kvtrace reads. No apiVersion is accepted.
KIND_GROUPS = {
    VM: "kubevirt.io",
    VMI: "kubevirt.io",
    VMIM: "kubevirt.io",
    KUBEVIRT: "kubevirt.io",
    POD: "",
    EVENT: "",
    NODE: "",
    ENDPOINTS: "",
    LEASE: "coordination.k8s.io",
    REVISION: "apps",
    SNAPSHOT: "snapshot.kubevirt.io",
    RESTORE: "snapshot.kubevirt.io",
    POOL: "pool.kubevirt.io",
    SNAPSHOT_CONTENT: "snapshot.kubevirt.io",
    VMIRS: "kubevirt.io",
}
NO_UID = "no_uid"


@dataclass
class _Entry:
    obj: KubeObject
    from_list: bool


class ObjectIndex:
    """Objects by identity. Same uid: the highest resourceVersion wins; every file is recorded.

    Identity is ``(group, kind, uid)``. The same name with another uid is another incarnation
    and is kept. Objects without uid are keyed by ``(kind, namespace, name, creationTimestamp)``
    and flagged ``no_uid``.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, ...], _Entry] = {}

    def add(
        self, body: dict[str, Any], seen_in: str, from_list: bool, flags: tuple[str, ...] = ()
    ) -> str | None:
        """Index ``body``; returns a reason when it cannot be used, None otherwise.

        Objects of kinds kvtrace does not use are ignored (None, no noise).
        """
        kind = body.get("kind")
        if kind not in USED_KINDS or not _from_expected_group(str(kind), body):
            return None
        candidate = _kube_object(str(kind), body, seen_in)
        if candidate is None:
            return f"{kind} without metadata.name"
        candidate.flags.extend(flags)
        key = _identity(candidate, body)
        current = self._entries.get(key)
        if current is None:
            self._entries[key] = _Entry(candidate, from_list)
        else:
            self._merge(key, current, _Entry(candidate, from_list))
        return None

    def _merge(self, key: tuple[str, ...], current: _Entry, new: _Entry) -> None:
        seen = current.obj.seen_in + [p for p in new.obj.seen_in if p not in current.obj.seen_in]
        winner = new if _newer(new, current) else current
        winner.obj.seen_in = seen
        self._entries[key] = winner

    def by_kind(self) -> dict[str, list[KubeObject]]:
        """Objects grouped by kind, in a stable order (namespace, name, creation, uid)."""
        grouped: dict[str, list[KubeObject]] = {}
        for entry in self._entries.values():
            grouped.setdefault(entry.obj.kind, []).append(entry.obj)
        for objects in grouped.values():
            objects.sort(key=_sort_key)
        return dict(sorted(grouped.items()))


def _from_expected_group(kind: str, body: dict[str, Any]) -> bool:
    api_version = body.get("apiVersion")
    return not api_version or api_group(api_version) == KIND_GROUPS[kind]


def _kube_object(kind: str, body: dict[str, Any], seen_in: str) -> KubeObject | None:
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    uid, namespace, version = meta.get("uid"), meta.get("namespace"), meta.get("resourceVersion")
    return KubeObject(
        kind=kind,
        namespace=str(namespace) if namespace else None,
        name=name,
        uid=str(uid) if uid else None,
        resource_version=str(version) if version is not None else None,
        body=body,
        seen_in=[seen_in],
        flags=[] if uid else [NO_UID],
    )


def _identity(obj: KubeObject, body: dict[str, Any]) -> tuple[str, ...]:
    if obj.uid:
        return ("uid", api_group(body.get("apiVersion")), obj.kind, obj.uid)
    created = str(body.get("metadata", {}).get("creationTimestamp") or "")
    return ("name", obj.kind, obj.namespace or "", obj.name, created)


def api_group(api_version: Any) -> str:
    """``kubevirt.io/v1`` → ``kubevirt.io``; ``v1`` → ``""`` (the core group)."""
    text = str(api_version or "")
    return text.rsplit("/", 1)[0] if "/" in text else ""


def _newer(new: _Entry, current: _Entry) -> bool:
    """True when ``new`` should replace ``current``: the higher numeric resourceVersion, else the
    single-object file over a list item, else the later ``managedFields[].time``."""
    a, b = new.obj.resource_version or "", current.obj.resource_version or ""
    if a.isdigit() and b.isdigit() and int(a) != int(b):
        return int(a) > int(b)
    if new.from_list != current.from_list:
        return current.from_list  # a single-object file beats a list item
    return _last_managed(new.obj.body) > _last_managed(current.obj.body)


def _last_managed(body: dict[str, Any]) -> str:
    fields = body.get("metadata", {}).get("managedFields") or []
    times = [str(f.get("time") or "") for f in fields if isinstance(f, dict)]
    return max(times, default="")


def _sort_key(obj: KubeObject) -> tuple[str, str, str, str]:
    created = str(obj.body.get("metadata", {}).get("creationTimestamp") or "")
    return (obj.namespace or "", obj.name, created, obj.uid or "")
