"""Timeline rows of the VM's live migrations: each VirtualMachineInstanceMigration is a lane.

What a VMIM records, at v1.9.0: its creation and who made it (``kubevirt-migrate-vm-`` for
``virtctl migrate``, api-lifecycle.go:523-573; ``kubevirt-evacuation-`` with annotation
``kubevirt.io/evacuationMigration: <node>`` for a drain, evacuation.go:336-356;
``kubevirt-workload-update-`` for the workload updater, workload-updater.go:558-598); each phase
reached, once and in order, in ``status.phaseTransitionTimestamps`` (controller.go:406-421, one
second resolution: the list order is the authoritative order); and, once final, a copy of the
VMI's ``status.migrationState`` (migration.go:553-557) with the source and target nodes, the
start and end, ``completed``/``failed`` and ``failureReason``. The VMI holds the same state while
it belongs to this migration (``migrationUid`` = the VMIM's uid).

A VMIM names its VMI by name only (``spec.vmiName``); it is tied to an incarnation by the VMI
whose ``migrationState.migrationUid`` is its uid, else by its target pod's
``kubevirt.io/created-by`` (the VMI uid), else by time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kvtrace.evidence import KubeObject
from kvtrace.timeline.rows import Provenance, TimelineRow
from kvtrace.timeline.vmscope import VMScope
from parsers.timestamps import parse_time

MIGRATION_JOB_LABEL = "kubevirt.io/migrationJobUID"  # the target pod's (types.go:1165)
EVACUATION_ANNOTATION = "kubevirt.io/evacuationMigration"  # types.go:1178
WORKLOAD_UPDATE_ANNOTATION = "kubevirt.io/workloadUpdateMigration"  # types.go:1181


def migration_rows(scope: VMScope) -> list[TimelineRow]:
    rows: list[TimelineRow] = []
    for vmim in scope.migrations:
        vmi_uid = migration_vmi_uid(vmim, scope)
        rows += list(_created_rows(vmim, vmi_uid))
        rows += list(_phase_rows(vmim, vmi_uid))
        rows += list(_state_rows(vmim, vmi_uid, scope))
    return rows


def trigger(vmim: KubeObject) -> str:
    """Who asked for the migration, from its name and annotations."""
    meta = _meta(vmim)
    annotations = meta.get("annotations") or {}
    if EVACUATION_ANNOTATION in annotations:
        return f"evacuation of node {annotations[EVACUATION_ANNOTATION]}"
    if WORKLOAD_UPDATE_ANNOTATION in annotations:
        return "workload update"
    generated = str(meta.get("generateName") or vmim.name)
    if generated.startswith("kubevirt-migrate-vm-"):
        return "virtctl migrate"
    if generated.startswith("kubevirt-evacuation-"):
        return "evacuation"
    return "a user's manifest"


def migration_vmi_uid(vmim: KubeObject, scope: VMScope) -> str | None:
    for vmi in scope.vmis:
        state = _dict((vmi.body.get("status") or {}).get("migrationState"))
        if vmim.uid and state.get("migrationUid") == vmim.uid:
            return vmi.uid
    for pod in target_pods(vmim, scope):
        created_by = (_meta(pod).get("labels") or {}).get("kubevirt.io/created-by")
        if created_by:
            return str(created_by)
    return None


def target_pods(vmim: KubeObject, scope: VMScope) -> list[KubeObject]:
    """The launcher pods the migration controller created for this VMIM (its target pods,
    listMatchingTargetPods at migration.go:1970-1986)."""
    return [
        p
        for p in scope.pods
        if vmim.uid and (_meta(p).get("labels") or {}).get(MIGRATION_JOB_LABEL) == vmim.uid
    ]


def _created_rows(vmim: KubeObject, vmi_uid: str | None) -> Iterator[TimelineRow]:
    fields = (
        ("creationTimestamp", f"created by {trigger(vmim)}"),
        ("deletionTimestamp", "deleted"),
    )
    for field, what in fields:
        when = parse_time(str(_meta(vmim).get(field) or ""))
        if when:
            yield _row(vmim, when, f"migration {what}", f"metadata.{field}", vmi_uid)


def _phase_rows(vmim: KubeObject, vmi_uid: str | None) -> Iterator[TimelineRow]:
    entries = (vmim.body.get("status") or {}).get("phaseTransitionTimestamps") or []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        when = parse_time(str(entry.get("phaseTransitionTimestamp") or ""))
        phase = str(entry.get("phase", ""))
        field = f"status.phaseTransitionTimestamps[{index}]"
        args = (("phase", phase), ("index", str(index)))
        yield _row(vmim, when, f"migration phase {phase}", field, vmi_uid, args)


def migration_state(vmim: KubeObject, scope: VMScope) -> tuple[dict[str, Any], str]:
    """The migration's state and where it was read: the VMI's while it belongs to this
    migration, else the VMIM's copy (written once the VMIM is final)."""
    for vmi in scope.vmis:
        state = _dict((vmi.body.get("status") or {}).get("migrationState"))
        if vmim.uid and state.get("migrationUid") == vmim.uid:
            return state, f"{_ref(vmi)} status.migrationState"
    own = _dict((vmim.body.get("status") or {}).get("migrationState"))
    return own, f"{_ref(vmim)} status.migrationState"


def _state_rows(vmim: KubeObject, vmi_uid: str | None, scope: VMScope) -> Iterator[TimelineRow]:
    state, where = migration_state(vmim, scope)
    ref, _, field = where.partition(" ")
    route = f"{state.get('sourceNode') or '?'} → {state.get('targetNode') or '?'}"
    start = parse_time(str(state.get("startTimestamp") or ""))
    if start:
        yield _row(
            vmim, start, f"migration started {route}", f"{field}.startTimestamp", vmi_uid, ref=ref
        )
    end = parse_time(str(state.get("endTimestamp") or ""))
    if end:
        outcome = _outcome(state)
        yield _row(
            vmim,
            end,
            f"migration ended: {outcome}",
            f"{field}.endTimestamp",
            vmi_uid,
            (("outcome", outcome),),
            ref=ref,
        )


def _outcome(state: dict[str, Any]) -> str:
    if state.get("failed"):
        reason = state.get("failureReason")
        return f"failed ({reason})" if reason else "failed"
    if state.get("abortStatus"):
        return f"abort {state['abortStatus']}"
    return "completed" if state.get("completed") else "ended"


def _row(
    vmim: KubeObject,
    when: Any,
    what: str,
    field: str,
    vmi_uid: str | None,
    args: tuple[tuple[str, str], ...] = (),
    ref: str | None = None,
) -> TimelineRow:
    return TimelineRow(
        when,
        "migration",
        f"VMIM/{vmim.name}",
        "migration",
        what,
        Provenance("object", ref or _ref(vmim), field=field),
        incarnation=vmi_uid,
        args=(("migration", vmim.name), *args),
    )


def _ref(obj: KubeObject) -> str:
    return "/".join(p for p in (obj.kind, obj.namespace, obj.name) if p)


def _meta(obj: KubeObject) -> dict[str, Any]:
    return _dict(obj.body.get("metadata"))


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class MigrationOutcome:
    """How one migration ended: ``Succeeded``, ``Failed`` or ``in progress``, and how long it
    took from the VMIM's creation to its final phase (1 s resolution; None while unfinished)."""

    name: str
    outcome: str
    seconds: float | None


def migration_outcomes(scope: VMScope) -> list[MigrationOutcome]:
    return [_outcome_of(vmim) for vmim in scope.migrations]


def _outcome_of(vmim: KubeObject) -> MigrationOutcome:
    status = _dict(vmim.body.get("status"))
    phase = str(status.get("phase") or "")
    if phase not in ("Succeeded", "Failed"):
        return MigrationOutcome(vmim.name, "in progress", None)
    created = parse_time(str(_meta(vmim).get("creationTimestamp") or ""))
    stamps = [e for e in status.get("phaseTransitionTimestamps") or [] if isinstance(e, dict)]
    final = next((e for e in stamps if e.get("phase") == phase), None)
    ended = parse_time(str(final.get("phaseTransitionTimestamp") or "")) if final else None
    seconds = (ended.at - created.at).total_seconds() if created and ended else None
    return MigrationOutcome(vmim.name, phase, seconds)
