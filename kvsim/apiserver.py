"""The API server the controllers talk to: objects as the API returns them, resourceVersions,
admission (the VM and VMI mutating webhooks), finalizers, garbage collection, Events and watch
streams, plus the faults a real server shows (webhook rejections, slow calls).

Objects are plain dicts in the API's JSON shape. Every write bumps the cluster-wide
resourceVersion and is delivered to each watcher after that watcher's lag, in order.
"""

from __future__ import annotations

import marshal
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from kvsim import timefmt
from kvsim.kernel import MS, SECOND, Host, Kernel, Process

Obj = dict[str, Any]
T = TypeVar("T")


def clone(obj: T) -> T:
    """A deep copy of JSON-like data (dicts, lists, strings, numbers), as DeepCopy does: through
    marshal, an order of magnitude faster than copy.deepcopy on API objects."""
    data: Any = obj
    copied: T = marshal.loads(marshal.dumps(data))
    return copied


def freeze(obj: Obj) -> bytes:
    """An object serialised once, so that each of its copies costs one ``thaw``."""
    return marshal.dumps(obj)


def thaw(frozen: bytes) -> Obj:
    copied: Obj = marshal.loads(frozen)
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
}
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


class ApiServer:
    def __init__(self, kernel: Kernel, seed: str, first_rv: int = 184_000) -> None:
        self.kernel = kernel
        self.rng = random.Random(f"api/{seed}")
        self.rv = first_rv
        self.objects: dict[Key, Obj] = {}
        self.watches: list[Watch] = []
        self.faults = ApiFaults()
        self.writes: list[tuple[int, str, Key]] = []  # (time, verb, key): the audit trail

    # --- identities ------------------------------------------------------------------------
    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _bump(self, obj: Obj) -> None:
        self.rv += self.rng.randint(1, 40)
        obj["metadata"]["resourceVersion"] = str(self.rv)

    # --- reads -----------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> Obj:
        found = self.objects.get((kind, namespace, name))
        if found is None:
            raise not_found(kind, name)
        return clone(found)

    def peek(self, kind: str, namespace: str, name: str) -> Obj | None:
        """Read without a copy, for the simulation's own bookkeeping (never for controllers)."""
        return self.objects.get((kind, namespace, name))

    def items(self, kind: str) -> Iterator[Obj]:
        for (k, _, _), obj in sorted(self.objects.items()):
            if k == kind:
                yield obj

    # --- writes ----------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        meta = obj.setdefault("metadata", {})
        key = (kind, meta.get("namespace", ""), meta["name"])
        rule = self.faults.rejection(kind, meta["name"])
        if rule is not None:
            raise ApiError(rule.status, "InternalError", rule.message)
        if key in self.objects:
            raise already_exists(kind, meta["name"])
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = timefmt.seconds(self.kernel.now)
        if kind in ("VirtualMachine", "VirtualMachineInstance"):
            meta.setdefault("generation", 1)
        ADMISSION.get(kind, _no_admission)(self, obj)
        self._bump(obj)
        self.objects[key] = obj
        self._emit("ADDED", key, obj)
        return clone(obj)

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
        updated = self._merge(kind, current, clone(obj), subresource)
        return self._store(key, current, updated)

    def patch(self, kind: str, namespace: str, name: str, mutate: Callable[[Obj], None]) -> Obj:
        """A JSON patch: ``mutate`` applies it to the current object (its ``test`` operations
        raise :class:`ApiError` themselves)."""
        key = (kind, namespace, name)
        current = self.objects.get(key)
        if current is None:
            raise not_found(kind, name)
        updated = clone(current)
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
            updated = clone(current)
            updated["metadata"]["deletionTimestamp"] = timefmt.seconds(
                self.kernel.now + grace_seconds * SECOND
            )
            updated["metadata"]["deletionGracePeriodSeconds"] = grace_seconds
            self._store(key, current, updated)
            return
        self._remove(key)

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """The final removal of a terminating object (the kubelet's grace-0 delete of a pod)."""
        if (kind, namespace, name) in self.objects:
            self._remove((kind, namespace, name))

    def _merge(self, kind: str, current: Obj, sent: Obj, subresource: str) -> Obj:
        if subresource == "status":
            merged = clone(current)
            merged["status"] = sent.get("status", {})
            return merged
        if kind == "VirtualMachine":
            sent["status"] = clone(current.get("status", {}))
        for field_name in ("uid", "creationTimestamp", "deletionTimestamp", "generation"):
            if field_name in current["metadata"]:
                sent["metadata"][field_name] = current["metadata"][field_name]
        return sent

    def _store(self, key: Key, current: Obj, updated: Obj) -> Obj:
        if updated == current:
            return clone(current)
        if key[0] in ("VirtualMachine", "VirtualMachineInstance") and updated.get(
            "spec"
        ) != current.get("spec"):
            updated["metadata"]["generation"] = int(current["metadata"].get("generation", 1)) + 1
        self._bump(updated)
        meta = updated["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and key[0] != "Pod":
            self.objects[key] = updated
            self._remove(key)
            return clone(updated)
        self.objects[key] = updated
        self._emit("MODIFIED", key, updated)
        return clone(updated)

    def _remove(self, key: Key) -> None:
        gone = self.objects.pop(key)
        self._bump(gone)
        self._emit("DELETED", key, gone)
        self._collect_dependents(gone)

    def _collect_dependents(self, owner: Obj) -> None:
        """The garbage collector deletes what the removed object owned, a moment later."""
        uid = owner["metadata"]["uid"]
        for key, obj in list(self.objects.items()):
            refs = obj["metadata"].get("ownerReferences") or []
            if any(ref.get("uid") == uid for ref in refs):
                delay = self.rng.randint(200, 2_000) * MS
                self.kernel.after(delay, partial(self._gc_delete, key))

    def _gc_delete(self, key: Key) -> None:
        if key in self.objects:
            grace = 30 if key[0] == "Pod" else 0
            self.delete(*key, grace_seconds=grace)

    # --- watches ---------------------------------------------------------------------------
    def _emit(self, kind_of_event: str, key: Key, obj: Obj) -> None:
        self.writes.append((self.kernel.now, kind_of_event, key))
        for watch in self.watches:
            if key[0] not in watch.kinds or not watch.host.alive:
                continue
            if watch.dropped(kind_of_event, obj):
                continue
            when = max(self.kernel.now + watch.lag(), watch.last)
            watch.last = when
            snapshot = clone(obj)
            self.kernel.at(when, partial(watch.deliver, kind_of_event, snapshot))

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
