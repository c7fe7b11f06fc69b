"""The virt-controller lock object: the Lease ``<ns>/virt-controller``
(leaderelectionconfig/config.go:34, application.go:1148-1150 at v1.9.0; client-go writes its
fields in leaselock.go:149-166), or the Endpoints lock of v0.x (both in v1.0–v1.2, config.go:42
at v1.0.0), whose record is JSON in the ``control-plane.alpha.kubernetes.io/leader`` annotation
(whole seconds, ``leaderTransitions``).

Lease health is judged from ``renewTime`` against the reference time (capture time of a bundle,
else now): the holder renews about every 2 s and gives up when a round fails for the renew
deadline (leaderelection.go:278-299); any standby takes over once the record is older than
``leaseDurationSeconds`` in its view (leaderelection.go:461-470).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from kvtrace.evidence import ENDPOINTS, KUBEVIRT, LEASE, POD, Evidence, KubeObject
from kvtrace.model.leader_epochs import (
    LEASE_SECONDS,
    LOCK_NAME,
    RENEW_DEADLINE_SECONDS,
)
from parsers.records import Timestamp
from parsers.timestamps import parse_time

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
CONTROLLER_LABEL = ("kubevirt.io", "virt-controller")

HEALTHY, LATE, EXPIRED, ABSENT = "healthy", "renewal late", "expired", "absent"
UNDECIDED = "undecided (read during the collection)"


@dataclass(frozen=True)
class LockRecord:
    """The election record as one lock object holds it."""

    kind: str  # Lease | Endpoints
    namespace: str
    holder: str | None
    acquire: Timestamp | None
    renew: Timestamp | None
    duration: int
    transitions: int | None

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{LOCK_NAME}"


def kubevirt_namespace(evidence: Evidence, given: str | None) -> str:
    """``--kubevirt-namespace``, else the bundle manifest, the KubeVirt CR, the virt-controller
    pods, the lock objects; else ``kubevirt`` (the fallback of application.go:330-333)."""
    if given:
        return given
    manifest_ns = (evidence.manifest or {}).get("kubevirtNamespace")
    if isinstance(manifest_ns, str) and manifest_ns:
        return manifest_ns
    found = [o.namespace for o in evidence.of_kind(KUBEVIRT)]
    found += [o.namespace for o in evidence.of_kind(POD) if is_controller_pod(o)]
    found += [
        o.namespace
        for o in (*evidence.of_kind(LEASE), *evidence.of_kind(ENDPOINTS))
        if o.name == LOCK_NAME
    ]
    return next((ns for ns in found if ns), "kubevirt")


def is_controller_pod(pod: KubeObject) -> bool:
    labels = (pod.body.get("metadata") or {}).get("labels") or {}
    key, value = CONTROLLER_LABEL
    return labels.get(key) == value or pod.name.startswith("virt-controller-")


def _lock_object(evidence: Evidence, kind: str, namespace: str) -> KubeObject | None:
    return next(
        (o for o in evidence.of_kind(kind) if o.namespace == namespace and o.name == LOCK_NAME),
        None,
    )


def read_lease(evidence: Evidence, namespace: str) -> LockRecord | None:
    lease = _lock_object(evidence, LEASE, namespace)
    if lease is None:
        return None
    return _record(LEASE, namespace, lease.body.get("spec") or {}, "leaseTransitions")


def read_endpoints_lock(evidence: Evidence, namespace: str) -> LockRecord | None:
    """The annotation record of the pre-v1.3 Endpoints lock: JSON in the annotation
    ``control-plane.alpha.kubernetes.io/leader``, whole seconds, ``leaderTransitions``."""
    endpoints = _lock_object(evidence, ENDPOINTS, namespace)
    if endpoints is None:
        return None
    annotations = (endpoints.body.get("metadata") or {}).get("annotations") or {}
    try:
        record = orjson.loads(annotations.get(LEADER_ANNOTATION) or "null")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    return _record(ENDPOINTS, namespace, record, "leaderTransitions")


def _record(kind: str, namespace: str, fields: dict[str, Any], transitions: str) -> LockRecord:
    duration = fields.get("leaseDurationSeconds")
    count = fields.get(transitions)
    return LockRecord(
        kind,
        namespace,
        str(fields["holderIdentity"]) if fields.get("holderIdentity") else None,
        parse_time(fields.get("acquireTime")),
        parse_time(fields.get("renewTime")),
        duration if isinstance(duration, int) and duration > 0 else LEASE_SECONDS,
        count if isinstance(count, int) else (0 if kind == LEASE else None),
    )


def judge(lock: LockRecord | None, reference: datetime) -> tuple[str, float | None]:
    """State and age of ``renewTime`` at ``reference``: late past the renew deadline (the holder
    has given up renewing), expired past the lease duration (any standby may take over)."""
    if lock is None or lock.renew is None or not lock.holder:
        return ABSENT, None
    age = (reference - lock.renew.at).total_seconds()
    if age > lock.duration:
        return EXPIRED, age
    if age > min(RENEW_DEADLINE_SECONDS, lock.duration):
        return LATE, age
    return HEALTHY, age


# -- log lines -------------------------------------------------------------------------------
