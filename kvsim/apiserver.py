"""The API server the controllers talk to: objects as the API returns them, resourceVersions,
admission (the VM and VMI mutating webhooks), finalizers, garbage collection, Events and watch
streams, plus the faults a real server shows (webhook rejections, slow calls).

Objects are plain dicts in the API's JSON shape. Every write bumps the cluster-wide
resourceVersion and is delivered to each watcher after that watcher's lag, in order.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import orjson

from kvsim import timefmt
from kvsim.kernel import MS, SECOND, Host, Kernel, Process

Obj = dict[str, Any]
T = TypeVar("T")


def clone(obj: T) -> T:
    """A deep copy of JSON data (dicts, lists, strings, numbers, booleans, None), as DeepCopy
    does: through orjson, several times faster than copy.deepcopy or marshal on API objects."""
    copied: T = orjson.loads(orjson.dumps(obj))
    return copied


def freeze(obj: Obj) -> bytes:
    """An object serialised once, so that each of its copies costs one ``thaw``."""
    return orjson.dumps(obj)


def thaw(frozen: bytes) -> Obj:
    copied: Obj = orjson.loads(frozen)
    return copied


Key = tuple[str, str, str]  # kind, namespace, name

PLURAL = {
    "VirtualMachine": "virtualmachines.kubevirt.io",
    "VirtualMachineInstance": "virtualmachineinstances.kubevirt.io",
    "ControllerRevision": "controllerrevisions.apps",
    "Pod": "pods",
    "Lease": "leases.coordination.k8s.io",
    "Event": "events",
    "Endpoints": "endpoints",
    "VirtualMachineInstanceMigration": "virtualmachineinstancemigrations.kubevirt.io",
    "Node": "nodes",
    "VirtualMachinePool": "virtualmachinepools.pool.kubevirt.io",
    "VirtualMachineInstanceReplicaSet": "virtualmachineinstancereplicasets.kubevirt.io",
    "VirtualMachineSnapshot": "virtualmachinesnapshots.snapshot.kubevirt.io",
    "VirtualMachineSnapshotContent": "virtualmachinesnapshotcontents.snapshot.kubevirt.io",
    "VirtualMachineRestore": "virtualmachinerestores.snapshot.kubevirt.io",
}
# kinds whose metadata.generation the server keeps (the CRDs with a status subresource move it on
# spec changes), and those whose status only the status subresource writes
GENERATION_KINDS = (
    "VirtualMachine",
    "VirtualMachineInstance",
    "VirtualMachinePool",
    "VirtualMachineInstanceReplicaSet",
    "VirtualMachineSnapshot",
    "VirtualMachineRestore",
)
STATUS_SUBRESOURCE = (
    "VirtualMachine",
    "VirtualMachineInstanceMigration",
    "VirtualMachinePool",
    "VirtualMachineInstanceReplicaSet",
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VirtualMachineRestore",
)
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.String
VMI_FINALIZER = "kubevirt.io/foregroundDeleteVirtualMachine"
API_URL = "https://10.96.0.1:443"
CLIENT_TIMEOUT_US = 5 * SECOND  # vmi-mutator.go:128-137


class ApiError(Exception):
    """An error status; ``str()`` is the message client-go's error carries."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


def already_exists(kind: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{PLURAL[kind]} "{name}" already exists')


def conflict(kind: str, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {PLURAL[kind]} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
    )


def not_found(kind: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{PLURAL[kind]} "{name}" not found')


@dataclass
class Rejection:
    """A webhook or server refusal of matching creates, ``times`` times."""

    kind: str
    name: str
    message: str
    times: int = 1
    status: int = 500


@dataclass
class ApiFaults:
    rejections: list[Rejection] = field(default_factory=list)
    # (kind, verb) -> extra latency in µs for calls matching it
    slow: dict[tuple[str, str], int] = field(default_factory=dict)
    # (host, start, end): the host's calls cannot reach the server in that window
    outages: list[tuple[str, int, int]] = field(default_factory=list)

    def outage_end(self, host: str, now: int) -> int | None:
        for name, start, end in self.outages:
            if name == host and start <= now < end:
                return end
        return None

    def rejection(self, kind: str, name: str) -> Rejection | None:
        for rule in self.rejections:
            if rule.kind == kind and rule.name in (name, "*") and rule.times > 0:
                rule.times -= 1
                return rule
        return None


@dataclass
class Watch:
    kinds: set[str]
    host: Host
    deliver: Callable[[str, Obj], None]
    lag: Callable[[], int]
    last: int = 0
    dropped: Callable[[str, Obj], bool] = lambda kind, obj: False
    # instead of ``deliver``: the event's copy with its frozen form, for a cache that copies it
    # again on every read
    deliver_frozen: Callable[[str, Obj, bytes], None] | None = None


class ApiServer:
    """The store keeps, beside ``objects``, what makes it cheap at thousands of objects: each
    stored object serialised once (every copy of it is one ``thaw``), the objects of each kind
    with their key order, and the dependents of each owner uid. Objects handed out by
    :meth:`peek` and :meth:`items` are the stored ones: read them, never change them."""

    def __init__(self, kernel: Kernel, seed: str, first_rv: int = 184_000) -> None:
        self.kernel = kernel
        self.rng = random.Random(f"api/{seed}")
        self.rv = first_rv
        self.objects: dict[Key, Obj] = {}
        self.watches: list[Watch] = []
        self.faults = ApiFaults()
        # the webhooks on creates, by kind; the cluster adds the migration webhooks (kvsim.vmim)
        self.admission: dict[str, Callable[[ApiServer, Obj], None]] = dict(ADMISSION)
        self.writes: list[tuple[int, str, Key]] = []  # (time, verb, key): the audit trail
        # virt-api's subresources the cluster serves, by (kind, verb): handler(namespace, name)
        self.subresources: dict[tuple[str, str], Callable[[str, str], None]] = {}
        self._frozen: dict[Key, bytes] = {}
        self._by_kind: dict[str, dict[Key, Obj]] = {}
        self._sorted: dict[str, list[Key]] = {}  # dropped when a key of the kind comes or goes
        self._position: dict[Key, int] = {}  # insertion order of ``objects``
        self._owned: dict[str, dict[Key, None]] = {}  # owner uid -> dependents, as a set
        self._inserted = itertools.count()

    # --- identities ------------------------------------------------------------------------
    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _bump(self, obj: Obj) -> None:
        self.rv += self.rng.randint(1, 40)
        obj["metadata"]["resourceVersion"] = str(self.rv)

    # --- the store -------------------------------------------------------------------------
    def _put(self, key: Key, obj: Obj) -> bytes:
        """Store ``obj`` under ``key``; returns it frozen."""
        old = self.objects.get(key)
        if old is None:
            self._position[key] = next(self._inserted)
            self._sorted.pop(key[0], None)
        else:
            self._unindex_owners(key, old)
        self.objects[key] = obj
        self._by_kind.setdefault(key[0], {})[key] = obj
        for uid in _owner_uids(obj):
            self._owned.setdefault(uid, {})[key] = None
        frozen = self._frozen[key] = freeze(obj)
        return frozen

    def _take(self, key: Key) -> Obj:
        gone = self.objects.pop(key)
        del self._frozen[key], self._by_kind[key[0]][key], self._position[key]
        self._sorted.pop(key[0], None)
        self._unindex_owners(key, gone)
        return gone

    def _unindex_owners(self, key: Key, obj: Obj) -> None:
        for uid in _owner_uids(obj):
            dependents = self._owned[uid]
            dependents.pop(key, None)
            if not dependents:
                del self._owned[uid]

    # --- reads -----------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> Obj:
        found = self._frozen.get((kind, namespace, name))
        if found is None:
            raise not_found(kind, name)
        return thaw(found)

    def peek(self, kind: str, namespace: str, name: str) -> Obj | None:
        """Read without a copy, for the simulation's own bookkeeping (never for controllers)."""
        return self.objects.get((kind, namespace, name))

    def items(self, kind: str) -> Iterator[Obj]:
        """The stored objects of ``kind`` in key order, as they are when iteration starts."""
        of_kind = self._by_kind.get(kind, {})
        keys = self._sorted.get(kind)
        if keys is None:
            keys = self._sorted[kind] = sorted(of_kind)
        yield from [of_kind[key] for key in keys]

    # --- writes ----------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        meta = obj.setdefault("metadata", {})
        if "name" not in meta:  # generateName: five random characters (names.go:43-54)
            suffix = "".join(self.rng.choice(NAME_ALPHABET) for _ in range(5))
            meta["name"] = f"{meta['generateName']}{suffix}"
        key = (kind, meta.get("namespace", ""), meta["name"])
        rule = self.faults.rejection(kind, meta["name"])
        if rule is not None:
            raise ApiError(rule.status, "InternalError", rule.message)
        if key in self.objects:
            raise already_exists(kind, meta["name"])
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = timefmt.seconds(self.kernel.now)
        if kind in GENERATION_KINDS:
            meta.setdefault("generation", 1)
        self.admission.get(kind, _no_admission)(self, obj)
        self._bump(obj)
        frozen = self._put(key, obj)
        self._emit("ADDED", key, obj, frozen)
        return thaw(frozen)

    def update(self, obj: Obj, subresource: str = "") -> Obj:
        """A PUT with the object's resourceVersion as precondition. ``status``: only the status
        changes; otherwise only metadata and spec (a CRD with a status subresource, the VM) or
        everything (the VMI, which has none)."""
        kind, meta = obj["kind"], obj["metadata"]
        key = (kind, meta.get("namespace", ""), meta["name"])
        current = self.objects.get(key)
        if current is None:
            raise not_found(kind, meta["name"])
        if meta.get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise conflict(kind, meta["name"])
        updated = self._merge(key, current, clone(obj), subresource)
        return self._store(key, current, updated)

    def patch(self, kind: str, namespace: str, name: str, mutate: Callable[[Obj], None]) -> Obj:
        """A JSON patch: ``mutate`` applies it to the current object (its ``test`` operations
        raise :class:`ApiError` themselves)."""
        key = (kind, namespace, name)
        current = self.objects.get(key)
        if current is None:
            raise not_found(kind, name)
        updated = thaw(self._frozen[key])
        mutate(updated)
        return self._store(key, current, updated)

    def delete(self, kind: str, namespace: str, name: str, grace_seconds: int = 0) -> None:
        key = (kind, namespace, name)
        current = self.objects.get(key)
        if current is None:
            raise not_found(kind, name)
        meta = current["metadata"]
        if meta.get("deletionTimestamp"):
            return
        if meta.get("finalizers") or grace_seconds > 0:
            updated = thaw(self._frozen[key])
            updated["metadata"]["deletionTimestamp"] = timefmt.seconds(
                self.kernel.now + grace_seconds * SECOND
            )
            updated["metadata"]["deletionGracePeriodSeconds"] = grace_seconds
            self._store(key, current, updated)
            return
        self._remove(key)

    def subresource(self, kind: str, verb: str, namespace: str, name: str) -> None:
        """A PUT on a subresource (``freeze``, ``unfreeze``): its handler, or 404."""
        handler = self.subresources.get((kind, verb))
        if handler is None:
            raise ApiError(
                404, "NotFound", f"the server could not find the requested resource ({verb})"
            )
        handler(namespace, name)

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """The final removal of a terminating object (the kubelet's grace-0 delete of a pod)."""
        if (kind, namespace, name) in self.objects:
            self._remove((kind, namespace, name))

    def _merge(self, key: Key, current: Obj, sent: Obj, subresource: str) -> Obj:
        if subresource == "status":
            merged = thaw(self._frozen[key])
            merged["status"] = sent.get("status", {})
            return merged
        if key[0] in STATUS_SUBRESOURCE:
            sent["status"] = clone(current.get("status", {}))
        for field_name in ("uid", "creationTimestamp", "deletionTimestamp", "generation"):
            if field_name in current["metadata"]:
                sent["metadata"][field_name] = current["metadata"][field_name]
        return sent

    def _store(self, key: Key, current: Obj, updated: Obj) -> Obj:
        if updated == current:
            return thaw(self._frozen[key])
        if key[0] in GENERATION_KINDS and updated.get("spec") != current.get("spec"):
            updated["metadata"]["generation"] = int(current["metadata"].get("generation", 1)) + 1
        self._bump(updated)
        meta = updated["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and key[0] != "Pod":
            self._put(key, updated)
            return thaw(self._remove(key))
        frozen = self._put(key, updated)
        self._emit("MODIFIED", key, updated, frozen)
        return thaw(frozen)

    def _remove(self, key: Key) -> bytes:
        gone = self._take(key)
        self._bump(gone)
        frozen = freeze(gone)
        self._emit("DELETED", key, gone, frozen)
        self._collect_dependents(gone)
        return frozen

    def _collect_dependents(self, owner: Obj) -> None:
        """The garbage collector deletes what the removed object owned, a moment later."""
        dependents = self._owned.get(owner["metadata"]["uid"], {})
        for key in sorted(dependents, key=self._position.__getitem__):
            delay = self.rng.randint(200, 2_000) * MS
            self.kernel.after(delay, partial(self._gc_delete, key))

    def _gc_delete(self, key: Key) -> None:
        if key in self.objects:
            grace = 30 if key[0] == "Pod" else 0
            self.delete(*key, grace_seconds=grace)

    # --- watches ---------------------------------------------------------------------------
    def _emit(self, kind_of_event: str, key: Key, obj: Obj, frozen: bytes) -> None:
        self.writes.append((self.kernel.now, kind_of_event, key))
        for watch in self.watches:
            if key[0] not in watch.kinds or not watch.host.alive:
                continue
            if watch.dropped(kind_of_event, obj):
                continue
            when = max(self.kernel.now + watch.lag(), watch.last)
            watch.last = when
            if watch.deliver_frozen is not None:
                delivery = partial(watch.deliver_frozen, kind_of_event, thaw(frozen), frozen)
            else:
                delivery = partial(watch.deliver, kind_of_event, thaw(frozen))
            self.kernel.at(when, delivery)

    def watch(self, watch: Watch) -> None:
        self.watches.append(watch)

    def unwatch(self, host: Host) -> None:
        self.watches = [w for w in self.watches if w.host is not host]

    # --- client calls ----------------------------------------------------------------------
    def call(self, host: Host, kind: str, verb: str, operation: Callable[[], Any]) -> Process:
        """One request from ``host``: half the round trip out, the server applies it, half back.
        Raises the server's :class:`ApiError` in the caller."""
        outage = self.faults.outage_end(host.name, self.kernel.now)
        if outage is not None:  # the client times out (its request timeout, 5 s here)
            yield min(outage - self.kernel.now, CLIENT_TIMEOUT_US)
            raise ApiError(
                504, "Timeout", f'{verb} "{API_URL}/{kind.lower()}": context deadline exceeded'
            )
        latency = self.rng.randint(800, 6_000) + self.faults.slow.get((kind, verb), 0)
        yield latency // 2
        result = operation()
        yield latency - latency // 2
        return result


def _owner_uids(obj: Obj) -> list[str]:
    return [str(ref.get("uid")) for ref in obj["metadata"].get("ownerReferences") or []]


def _no_admission(api: ApiServer, obj: Obj) -> None:
    return None


def _admit_vm(api: ApiServer, obj: Obj) -> None:
    """vm-mutator.go:86-91, 127-139 at v1.9.0: on CREATE an empty firmware UUID gets a random v4
    UUID and an empty serial another one."""
    spec = obj["spec"]["template"]["spec"]
    firmware = spec.setdefault("domain", {}).setdefault("firmware", {})
    firmware.setdefault("uuid", api.new_uid())
    firmware.setdefault("serial", api.new_uid())
    obj.setdefault("status", {})


def _admit_vmi(api: ApiServer, obj: Obj) -> None:
    """vmi-mutator.go:128-137 at v1.9.0: the foreground-delete finalizer, phase Pending and its
    phase transition timestamp."""
    meta = obj["metadata"]
    meta["finalizers"] = [*meta.get("finalizers", []), VMI_FINALIZER]
    _vmi_defaults(obj["spec"])
    status = obj.setdefault("status", {})
    status["phase"] = "Pending"
    stamp = {"phase": "Pending", "phaseTransitionTimestamp": timefmt.seconds(api.kernel.now)}
    status["phaseTransitionTimestamps"] = [stamp]


def _vmi_defaults(spec: Obj) -> None:
    """What the VMI mutating webhook's defaulting adds to these VMIs (pkg/defaults at v1.9.0):
    the CPU model and socket ceiling, ACPI, the hotplug memory ceiling (guest × 4) and the
    eviction strategy."""
    domain = spec.setdefault("domain", {})
    domain.setdefault("cpu", {}).update({"maxSockets": 4, "model": "host-model"})
    domain.setdefault("features", {"acpi": {"enabled": True}})
    memory = domain.setdefault("memory", {})
    guest = str(memory.get("guest", "2Gi"))
    if guest.endswith("Gi") and "maxGuest" not in memory:
        memory["maxGuest"] = f"{int(guest[:-2]) * 4}Gi"
    spec.setdefault("evictionStrategy", "None")


ADMISSION: dict[str, Callable[[ApiServer, Obj], None]] = {
    "VirtualMachine": _admit_vm,
    "VirtualMachineInstance": _admit_vmi,
}
