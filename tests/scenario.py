"""Build evidence for model tests: v1.9.0-shaped log lines and objects, in memory.

A Scenario writes lines exactly as virt-controller prints them (sorted JSON keys, 6-digit µs,
``kind`` "", v1.9.0 ``pos``) and objects as the API returns them, then runs the real pipeline:
``evidence() → build_timeline → assess``.
"""

from __future__ import annotations

import io
import json
import uuid
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from typing import Any

from kvtrace.evidence import POD, REVISION, VM, VMI, Evidence, KubeObject, LogStream
from kvtrace.model.engine import Assessment, assess
from kvtrace.timeline.build import Timeline, build_timeline
from parsers.records import SourceInfo

T0 = datetime(2026, 11, 28, 0, 0, 0, tzinfo=timezone.utc)
LEADER = "virt-controller-6f8b9c7d54-aaaaa"
STANDBY = "virt-controller-6f8b9c7d54-bbbbb"
POS = {
    ("stop", "Always"): "vm.go:1005",
    ("stop", "RerunOnFailure"): "vm.go:1052",
    ("start", "Always"): "vm.go:1032",
    ("start", "RerunOnFailure"): "vm.go:1081",
    ("start-request", "Manual"): "vm.go:1105",
    ("start-request", "Once"): "vm.go:1142",
    ("backoff", "Always"): "vm.go:1027",
    ("backoff", "RerunOnFailure"): "vm.go:1076",
}


def uid_for(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def ts(at: datetime, micro: bool = True) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


class Scenario:
    def __init__(self, strategy: str = "Always", name: str = "vm1", namespace: str = "default"):
        self.strategy, self.name, self.namespace = strategy, name, namespace
        self.vm_uid = uid_for("vm", namespace, name)
        self.lines: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
        self.vmis: list[dict[str, Any]] = []
        self.extra: list[tuple[str, dict[str, Any]]] = []
        self.vm_status: dict[str, Any] = {}

    # --- log lines -------------------------------------------------------------------------
    def _json(self, at: datetime, fields: dict[str, Any], pod: str) -> None:
        body = {"component": "virt-controller", "level": "info", "timestamp": ts(at), **fields}
        self.lines[pod].append((at, json.dumps(body, sort_keys=True, separators=(",", ":"))))

    def vm_line(
        self,
        at: datetime,
        msg: str,
        pos: str,
        *,
        pod: str = LEADER,
        level: str = "info",
        reason: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            "kind": "",
            "msg": msg,
            "name": self.name,
            "namespace": self.namespace,
            "pos": pos,
            "uid": self.vm_uid,
            "level": level,
        }
        if reason:
            fields["reason"] = reason
        self._json(at, fields, pod)

    def requeue(self, at: datetime, reason: str, pod: str = LEADER) -> None:
        self._json(
            at,
            {
                "msg": f"re-enqueuing VirtualMachine {self.namespace}/{self.name}",
                "pos": "vm.go:348",
                "reason": reason,
            },
            pod,
        )

    def lease(self, pod: str, attempt: datetime, acquired: datetime | None) -> None:
        self.lines[pod].append(
            (
                attempt,
                f"I{attempt:%m%d %H:%M:%S.%f}       1 leaderelection.go:257] attempting to acquire leader lease kubevirt/virt-controller...",
            )
        )
        if acquired:
            self.lines[pod].append(
                (
                    acquired,
                    f"I{acquired:%m%d %H:%M:%S.%f}       1 leaderelection.go:271] successfully acquired lease kubevirt/virt-controller",
                )
            )

    def stop(self, at: datetime, phase: str, pod: str = LEADER) -> None:
        self.vm_line(
            at,
            f"Stopping VM with VMI in phase {phase} and VM runStrategy: {self.strategy}",
            POS[("stop", self.strategy)],
            pod=pod,
        )

    def delete(self, at: datetime, phase: str, pod: str = LEADER) -> None:
        self.vm_line(
            at,
            f"Dispatching delete event for vmi {self.namespace}/{self.name} with phase {phase}",
            "vm.go:1685",
            pod=pod,
        )

    def start(self, at: datetime, pod: str = LEADER) -> None:
        if self.strategy in ("Manual", "Once"):
            msg, key = (
                f"Starting VM due to start request and runStrategy: {self.strategy}",
                "start-request",
            )
        else:
            msg, key = f"Starting VM due to runStrategy: {self.strategy}", "start"
        self.vm_line(at, msg, POS[(key, self.strategy)], pod=pod)

    def created(self, at: datetime, pod: str = LEADER) -> None:
        self.vm_line(
            at,
            f"Started VM by creating the new virtual machine instance {self.name}",
            "vm.go:1341",
            pod=pod,
        )

    def backoff(self, at: datetime, seconds: int, pod: str = LEADER) -> None:
        msg = f"Delaying start of VM Starting VM with 'runStrategy: {self.strategy}' due to start failure backoff. Waiting {seconds} more seconds before starting."
        self.vm_line(at, msg, POS[("backoff", self.strategy)], pod=pod)

    # --- objects ---------------------------------------------------------------------------
    def vmi(
        self,
        uid: str,
        created: datetime,
        phases: list[tuple[str, datetime]],
        *,
        generation: int = 1,
        deleting: datetime | None = None,
        node: str = "node-a",
        revision: str | None = None,
    ) -> dict[str, Any]:
        last = phases[-1][0] if phases else "Pending"
        body: dict[str, Any] = {
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstance",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "uid": uid,
                "resourceVersion": "100",
                "creationTimestamp": ts(created, micro=False),
                "annotations": {"kubevirt.io/vm-generation": str(generation)},
                "finalizers": [
                    "kubevirt.io/virtualMachineControllerFinalize",
                    "kubevirt.io/foregroundDeleteVirtualMachine",
                ],
                "labels": {"kubevirt.io/nodeName": node} if last != "Pending" else {},
                "ownerReferences": [
                    {
                        "apiVersion": "kubevirt.io/v1",
                        "kind": "VirtualMachine",
                        "name": self.name,
                        "uid": self.vm_uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"domain": {"firmware": {"uuid": uid_for("fw", self.name)}}},
            "status": {
                "phase": last,
                "nodeName": node,
                "phaseTransitionTimestamps": [
                    {"phase": p, "phaseTransitionTimestamp": ts(t, micro=False)} for p, t in phases
                ],
                "virtualMachineRevisionName": revision
                or f"revision-start-vm-{self.vm_uid}-{generation}",
            },
        }
        if deleting:
            body["metadata"]["deletionTimestamp"] = ts(deleting, micro=False)
        self.vmis.append(body)
        return body

    def _vm(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "uid": self.vm_uid,
                "generation": 1,
                "resourceVersion": "10",
                "creationTimestamp": ts(T0 - timedelta(hours=1), micro=False),
            },
            "spec": {
                "runStrategy": self.strategy,
                "template": {"spec": {"domain": {"firmware": {"uuid": uid_for("fw", self.name)}}}},
            },
            "status": self.vm_status,
        }

    def evidence(self) -> Evidence:
        objects: dict[str, list[KubeObject]] = {
            VM: [_obj(VM, self._vm())],
            VMI: [_obj(VMI, b) for b in self.vmis],
            POD: [],
            REVISION: [],
        }
        for kind, body in self.extra:
            objects.setdefault(kind, []).append(_obj(kind, body))
        logs = [self._stream(pod, lines) for pod, lines in sorted(self.lines.items())]
        return Evidence(
            "kvtrace", "full", objects, logs, captured_at=T0 + timedelta(hours=2), origin="scenario"
        )

    def _stream(self, pod: str, lines: list[tuple[datetime, str]]) -> LogStream:
        data = "".join(f"{line}\n" for _, line in sorted(lines, key=lambda x: x[0])).encode()
        info = SourceInfo(
            f"logs/kubevirt/{pod}/virt-controller/current.log",
            pod,
            "kubevirt",
            "virt-controller",
            "current",
        )
        return LogStream(info, lambda: io.BytesIO(data), prefixed=False)

    def timeline(self) -> Timeline:
        return build_timeline(self.evidence(), self.namespace, self.name)

    def assess(self) -> tuple[Timeline, Assessment]:
        timeline = self.timeline()
        return timeline, assess(timeline)


def _obj(kind: str, body: dict[str, Any]) -> KubeObject:
    meta = body.get("metadata", {})
    return KubeObject(
        kind,
        meta.get("namespace"),
        meta.get("name", ""),
        meta.get("uid"),
        meta.get("resourceVersion"),
        body,
        ["scenario"],
    )


def statuses(assessment: Assessment, rule: str) -> set[str]:
    return {v.status for v in assessment.verdicts if v.rule == rule}


def violated_rules(assessment: Assessment) -> set[str]:
    return {v.rule for v in assessment.verdicts if v.status == "violation"}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)
