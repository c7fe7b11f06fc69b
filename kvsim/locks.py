"""The virt-controller leader-election lock: the Lease ``kubevirt/virt-controller`` (client-go's
resourcelock/leaselock.go, the default since KubeVirt v1.3), or the Endpoints object of older
releases, whose record is JSON in the ``control-plane.alpha.kubernetes.io/leader``
annotation with whole-second times (resourcelock/endpointslock.go in older client-go)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj

NAMESPACE = "kubevirt"
NAME = "virt-controller"
LEASE_DURATION_S = 15
ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
SERVICE_ACCOUNT = "system:serviceaccount:kubevirt:kubevirt-controller"


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

    def write(self, holder: str, at: int, seen: Record | None) -> None:
        """Take or renew the lock for ``holder``; a changed record since ``seen`` is a conflict."""
        current = self.read()
        if seen is not None and current != seen:
            raise ApiError(409, "Conflict", f"the {self.kind.lower()} changed")
        now = self.stamp(at)
        taking = current is None or current.holder != holder
        transitions = (
            (current.transitions + 1)
            if current and taking
            else (current.transitions if current else 0)
        )
        record = Record(holder, now if taking or not current else current.acquire, now, transitions)
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
