"""Timeline rows recorded by objects: VMI phases, creations, deletions, revisions, pods, Events.

Object times are ``metav1.Time``: one-second resolution, kept as such. Phase timestamps come
from up to three clocks and exist only for the first entry into a phase
(``SetVMIPhaseTransitionTimestamp``, pkg/controller/controller.go:389-404 at v1.9.0; patch-path
changes add none), so a missing phase row is missing evidence, not a missing phase.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kvtrace.evidence import VM, KubeObject
from kvtrace.timeline.rows import Provenance, TimelineRow
from kvtrace.timeline.vmscope import START_REVISION, VMScope
from parsers.timestamps import parse_time


def object_rows(scope: VMScope) -> list[TimelineRow]:
    rows: list[TimelineRow] = []
    if scope.vm:
        rows += _lifecycle_rows(scope.vm, "object", "VM", "VM", None)
    for vmi in scope.vmis:
        rows += _lifecycle_rows(vmi, "object", "VMI", "VMI", vmi.uid)
        rows += list(_phase_rows(vmi))
    for rev in scope.revisions:
        rows += list(_revision_rows(rev))
    for pod in scope.pods:
        rows += list(_pod_rows(pod))
    for event in scope.events:
        rows += list(_event_rows(event, scope))
    return rows


def _ref(obj: KubeObject) -> str:
    return "/".join(p for p in (obj.kind, obj.namespace, obj.name) if p)


def _meta(obj: KubeObject) -> dict[str, Any]:
    meta = obj.body.get("metadata")
    return meta if isinstance(meta, dict) else {}


DELETED_VMI = re.compile(r"deleting the virtual machine instance (?P<uid>\S+)$")
LIFECYCLE = (("creationTimestamp", "created"), ("deletionTimestamp", "deletion requested"))


def _lifecycle_rows(
    obj: KubeObject, origin: str, label: str, what: str, vmi_uid: str | None
) -> Iterator[TimelineRow]:
    """Creation and deletion request of an object (``metadata.*Timestamp``, 1 s)."""
    for field, verb in LIFECYCLE:
        when = parse_time(str(_meta(obj).get(field) or ""))
        if when:
            yield TimelineRow(
                when,
                origin,
                f"{label}/{obj.name}",
                origin,
                f"{what} {verb}",
                Provenance("object", _ref(obj), field=f"metadata.{field}"),
                incarnation=vmi_uid,
            )


def _phase_rows(vmi: KubeObject) -> Iterator[TimelineRow]:
    status = vmi.body.get("status") or {}
    entries = status.get("phaseTransitionTimestamps") or []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        when = parse_time(str(entry.get("phaseTransitionTimestamp") or ""))
        phase = str(entry.get("phase", ""))
        yield TimelineRow(
            when,
            "phase",
            f"VMI/{vmi.name}",
            "phase",
            f"phase {phase}",
            Provenance("object", _ref(vmi), field=f"status.phaseTransitionTimestamps[{index}]"),
            incarnation=vmi.uid,
            args=(("phase", phase), ("index", str(index))),
        )


def _revision_rows(rev: KubeObject) -> Iterator[TimelineRow]:
    when = parse_time(str(_meta(rev).get("creationTimestamp") or ""))
    named = START_REVISION.match(rev.name)
    generation = named.group("gen") if named else "?"
    yield TimelineRow(
        when,
        "revision",
        "ControllerRevision",
        "revision",
        f"start revision {rev.name} (generation {generation})",
        Provenance("object", _ref(rev), field="metadata.creationTimestamp"),
        args=(("generation", generation), ("name", rev.name)),
    )


def _pod_rows(pod: KubeObject) -> Iterator[TimelineRow]:
    vmi_uid = (_meta(pod).get("labels") or {}).get("kubevirt.io/created-by")
    yield from _lifecycle_rows(pod, "pod", "Pod", "launcher pod", vmi_uid)
    yield from _container_rows(pod, vmi_uid)


def _container_rows(pod: KubeObject, vmi_uid: str | None) -> Iterator[TimelineRow]:
    statuses = (pod.body.get("status") or {}).get("containerStatuses") or []
    for index, cs in enumerate(statuses):
        if not isinstance(cs, dict) or cs.get("name") != "compute":
            continue
        for state_name, state in (cs.get("state") or {}).items():
            if not isinstance(state, dict):
                continue
            for field in ("startedAt", "finishedAt"):
                when = parse_time(str(state.get(field) or ""))
                if when:
                    verb = (
                        "started"
                        if field == "startedAt"
                        else f"{state_name} ({state.get('reason', '')})"
                    )
                    yield TimelineRow(
                        when,
                        "pod",
                        f"Pod/{pod.name}",
                        "pod",
                        f"compute container {verb}".rstrip(" ()"),
                        Provenance(
                            "object",
                            _ref(pod),
                            field=f"status.containerStatuses[{index}].state.{state_name}.{field}",
                        ),
                        incarnation=vmi_uid,
                    )


def _event_time(body: dict[str, Any]) -> tuple[str, str]:
    """Best time of an Event (in the order docs/timeline.md gives) and the field it came from."""
    series = body.get("series") or {}
    for field, value in (
        ("eventTime", body.get("eventTime")),
        ("series.lastObservedTime", series.get("lastObservedTime")),
        ("lastTimestamp", body.get("lastTimestamp")),
        ("firstTimestamp", body.get("firstTimestamp")),
        ("metadata.creationTimestamp", (body.get("metadata") or {}).get("creationTimestamp")),
    ):
        if value not in (None, "", "null"):
            return str(value), field
    return "", ""


def _event_rows(event: KubeObject, scope: VMScope) -> Iterator[TimelineRow]:
    body = event.body
    text, field = _event_time(body)
    involved = body.get("involvedObject") or {}
    count = body.get("count")
    suffix = f" (x{count})" if isinstance(count, int) and count > 1 else ""
    kind = str(involved.get("kind", "?"))
    incarnation = involved.get("uid") if kind == "VirtualMachineInstance" else None
    deleted = DELETED_VMI.search(str(body.get("message", ""))) if kind == VM else None
    if deleted:  # the VM's SuccessfulDelete names the VMI it deleted (vm.go:1684)
        incarnation = deleted.group("uid")
    yield TimelineRow(
        parse_time(text),
        "event",
        f"Event/{kind}",
        "event",
        f"{body.get('type', '')} {body.get('reason', '')}: {body.get('message', '')}{suffix}",
        Provenance("object", _ref(event), field=field or None),
        incarnation=incarnation,
        args=(("reason", str(body.get("reason", ""))), ("kind", kind)),
    )
