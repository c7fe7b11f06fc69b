"""The virt-controller leader-election lock: the Lease ``kubevirt/virt-controller`` (client-go's
resourcelock/leaselock.go, the lock from KubeVirt v1.3), the Endpoints object of releases before
v1.0, whose record is JSON in the ``control-plane.alpha.kubernetes.io/leader`` annotation with
whole-second times (resourcelock/endpointslock.go in older client-go), or both at once, the
``EndpointsLeases`` lock of v1.0–v1.2 (leaderelectionconfig/config.go:42 at v1.0.0)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj

NAMESPACE = "kubevirt"
NAME = "virt-controller"
LEASE_DURATION_S = 15
ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
SERVICE_ACCOUNT = "system:serviceaccount:kubevirt:kubevirt-controller"
UNKNOWN_LEADER = "leaderelection.k8s.io/unknown"  # resourcelock/multilock.go:28


@dataclass(frozen=True)
class Record:
    holder: str | None
    acquire: str | None
    renew: str | None
    transitions: int


class Lock:
    kind = "Lease"

    def __init__(self, api: ApiServer) -> None:
        self.api = api

    def object(self) -> Obj | None:
        return self.api.peek(self.kind, NAMESPACE, NAME)

    def read(self) -> Record | None:
        lease = self.object()
        if lease is None:
            return None
        spec = lease.get("spec", {})
        return Record(
            spec.get("holderIdentity"),
            spec.get("acquireTime"),
            spec.get("renewTime"),
            int(spec.get("leaseTransitions", 0)),
        )

    def stamp(self, at: int) -> str:
        return timefmt.micro(at)

    def objects(self) -> list[Obj]:
        """The objects the lock is kept in (its RecordEvent goes to each)."""
        found = self.object()
        return [] if found is None else [found]

    def write(self, holder: str, at: int, seen: Record | None) -> None:
        """Take or renew the lock for ``holder``; a changed record since ``seen`` is a conflict."""
        current = self.read()
        if seen is not None and current != seen:
            raise ApiError(409, "Conflict", f"the {self.kind.lower()} changed")
        self.store(self.following(current, holder, at))

    def following(self, current: Record | None, holder: str, at: int) -> Record:
        """tryAcquireOrRenew's record: a renewal keeps the acquire time and the transitions, a
        take-over counts one more transition."""
        now = self.stamp(at)
        if current is None:
            return Record(holder, now, now, 0)
        if current.holder != holder:
            return Record(holder, now, now, current.transitions + 1)
        return Record(holder, current.acquire, now, current.transitions)

    def store(self, record: Record) -> None:
        if self.object() is None:
            self.api.create(self.new(record))
        else:
            self.api.patch(self.kind, NAMESPACE, NAME, lambda obj: self.put(obj, record))

    def new(self, record: Record) -> Obj:
        obj: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "spec": {},
        }
        self.put(obj, record)
        return obj

    def put(self, obj: Obj, record: Record) -> None:
        obj["spec"] = {
            "acquireTime": record.acquire,
            "holderIdentity": record.holder,
            "leaseDurationSeconds": LEASE_DURATION_S,
            "leaseTransitions": record.transitions,
            "renewTime": record.renew,
        }


class EndpointsLock(Lock):
    kind = "Endpoints"

    def read(self) -> Record | None:
        endpoints = self.object()
        text = ((endpoints or {}).get("metadata", {}).get("annotations") or {}).get(ANNOTATION)
        if not text:
            return None
        found: dict[str, Any] = json.loads(text)
        return Record(
            found.get("holderIdentity"),
            found.get("acquireTime"),
            found.get("renewTime"),
            int(found.get("leaderTransitions", 0)),
        )

    def stamp(self, at: int) -> str:
        return timefmt.seconds(at)

    def new(self, record: Record) -> Obj:
        obj: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
        }
        self.put(obj, record)
        return obj

    def put(self, obj: Obj, record: Record) -> None:
        value = {
            "holderIdentity": record.holder,
            "leaseDurationSeconds": LEASE_DURATION_S,
            "acquireTime": record.acquire,
            "renewTime": record.renew,
            "leaderTransitions": record.transitions,
        }
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = json.dumps(value, separators=(",", ":"))


class EndpointsLeasesLock(Lock):
    """client-go's MultiLock (resourcelock/multilock.go as vendored at KubeVirt v1.0.0), the
    ``EndpointsLeases`` lock of KubeVirt v1.0–v1.2: the Endpoints record is the primary, the Lease
    the secondary. Get returns the Endpoints record, its holder ``UnknownLeader`` when the Lease
    names another; Update writes the Endpoints, then the Lease (created when missing), from one
    record. A renewal keeps the acquire time read back from the Endpoints annotation, whole
    seconds, so the Lease's acquireTime is a whole second once its holder has renewed."""

    kind = "Endpoints"

    def __init__(self, api: ApiServer) -> None:
        super().__init__(api)
        self.primary, self.secondary = EndpointsLock(api), Lock(api)

    def object(self) -> Obj | None:
        return self.primary.object()

    def objects(self) -> list[Obj]:
        return self.primary.objects() + self.secondary.objects()

    def read(self) -> Record | None:
        primary, secondary = self.primary.read(), self.secondary.read()
        if primary is not None and secondary is not None and primary.holder != secondary.holder:
            return replace(primary, holder=UNKNOWN_LEADER)
        return primary

    def write(self, holder: str, at: int, seen: Record | None) -> None:
        current = self.read()
        if seen is not None and current != seen:
            raise ApiError(409, "Conflict", "the endpoints changed")
        record = self.primary.following(current, holder, at)
        self.primary.store(record)
        acquired = at
        if current is not None and current.holder == holder and record.acquire:
            acquired = timefmt.from_iso(record.acquire)  # read back from the annotation
        acquire = timefmt.micro(acquired)
        self.secondary.store(replace(record, acquire=acquire, renew=timefmt.micro(at)))


def forbidden(kind: str) -> ApiError:
    """What a replica whose ClusterRole lost the lock's verbs is told."""
    resource = "leases" if kind == "Lease" else "endpoints"
    group = "coordination.k8s.io" if kind == "Lease" else ""
    qualified = f"{resource}.{group}" if group else resource
    return ApiError(
        403,
        "Forbidden",
        f'{qualified} "{NAME}" is forbidden: User "{SERVICE_ACCOUNT}" cannot get resource '
        f'"{resource}" in API group "{group}" in the namespace "{NAMESPACE}"',
    )
