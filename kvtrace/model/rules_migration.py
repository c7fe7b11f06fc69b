"""Live-migration checks (the migration controller, pkg/virt-controller/watch/migration/ at
v1.9.0), on the VMIM lanes of the timeline (kvtrace/timeline/migration_rows.py).

The controller computes a VMIM's phase in ``updateStatus`` from the phase at the start of the
reconcile: one forward step (``processMigrationPhase``, migration.go:716-856) or Failed by one of
the failure checks (migration.go:528-676), and ``SetVMIMigrationPhaseTransitionTimestamp``
(controller.go:406-421) appends each new phase once, so the list order is the order the phases
were entered. The target pod is created only when none exists for the VMIM
(``listMatchingTargetPods``, migration.go:1970-1986; ``createTargetPod``, migration.go:938-1045);
a second migration of a VMI in flight is refused by the create webhook
(migration-create-admitter.go:60-148), one whose VMI another unfinished migration owns is failed
at once (migration.go:476-508, 739-748), and no target pod is created while the VMI has more than
one active pod (migration.go:1354-1357); only the target virt-handler moves
the VMI to the target node, after the migration completed (migration-target.go:289-317).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from itertools import pairwise

from kvtrace.evidence import KubeObject
from kvtrace.model.facts import Facts
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated
from kvtrace.timeline.migration_rows import (
    EVACUATION_ANNOTATION,
    MIGRATION_JOB_LABEL,
    migration_state,
    migration_vmi_uid,
    target_pods,
)
from kvtrace.timeline.vmscope import VMScope, eviction_strategy
from parsers.timestamps import parse_time

ORDER = {
    "WaitingForSync": 0,
    "Synchronizing": 0,
    "Pending": 1,
    "Scheduling": 2,
    "Scheduled": 3,
    "PreparingTarget": 4,
    "TargetReady": 5,
    "Running": 6,
    "Succeeded": 7,
    "Failed": 7,
}
ACTIVE_FROM = ORDER["Scheduling"]  # a target pod exists: counted against the limits
FINAL = ("Succeeded", "Failed")
ONE_SECOND = 1.0  # phase timestamps are metav1.Time


def _phase_rows(facts: Facts, name: str) -> list[tuple[str, int]]:
    """The VMIM's phase rows in list order: (phase, row index)."""
    found = [
        (row.arg("phase") or "", int(row.arg("index") or 0), i)
        for i, row in enumerate(facts.rows)
        if row.origin == "migration" and row.arg("migration") == name and row.arg("index")
    ]
    return [(phase, i) for phase, _, i in sorted(found, key=lambda f: f[1])]


def _rows_of(facts: Facts, name: str) -> list[int]:
    return [
        i
        for i, r in enumerate(facts.rows)
        if r.origin == "migration" and r.arg("migration") == name
    ]


def migration_phase_order(facts: Facts) -> Iterator[Finding]:
    for vmim in facts.timeline.scope.migrations:
        entries = _phase_rows(facts, vmim.name)
        known = [(p, i) for p, i in entries if p in ORDER]
        unknown = [i for p, i in entries if p not in ORDER]
        if unknown:
            yield unverifiable(f"migration {vmim.name}: a phase this model does not know", *unknown)
        yield from _order(vmim.name, known)


def _order(name: str, entries: list[tuple[str, int]]) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    finals = [i for p, i in entries if p in FINAL]
    if len(finals) > 1:
        yield violated(f"migration {name} ended twice (Succeeded and Failed)", *finals)
    for phase, i in entries:
        if phase in seen:
            yield violated(f"migration {name} entered {phase} twice", seen[phase], i)
        seen.setdefault(phase, i)
    for (early, a), (late, b) in pairwise(entries):
        if late == "Failed" or ORDER[late] > ORDER[early]:
            yield explained(f"migration {name}: {early} → {late}", a, b)
        elif late != early:
            yield violated(f"migration {name} went back from {early} to {late}", a, b)


def one_target_pod(facts: Facts) -> Iterator[Finding]:
    scope = facts.timeline.scope
    for vmim in scope.migrations:
        pods = sorted(target_pods(vmim, scope), key=_created)
        rows = _rows_of(facts, vmim.name)
        if len(pods) <= 1:
            if pods:
                yield explained(f"migration {vmim.name}: one target pod, {pods[0].name}", *rows)
            continue
        live_together = [(a, b) for a, b in pairwise(pods) if not _gone_before(a, _created(b))]
        if live_together:
            a, b = live_together[0]
            yield violated(
                f"migration {vmim.name} has two target pods at once: {a.name} and {b.name} "
                "(createTargetPod runs only while none exists)",
                *rows,
            )
        else:
            yield explained(
                f"migration {vmim.name}: {len(pods)} target pods, each after the previous one "
                "was deleted",
                *rows,
            )


def one_active_migration(facts: Facts) -> Iterator[Finding]:
    """Two VMIMs of one VMI incarnation never both hold a target pod at the same time."""
    scope = facts.timeline.scope
    spans: dict[str | None, list[tuple[datetime, datetime | None, KubeObject, int]]] = {}
    for vmim in scope.migrations:
        span = _active_span(facts, vmim.name)
        if span is not None:
            uid = migration_vmi_uid(vmim, scope)
            spans.setdefault(uid, []).append((*span, vmim, _rows_of(facts, vmim.name)[0]))
    for uid, found in spans.items():
        found.sort(key=lambda s: s[0])
        for (_, end, first, a), (start, _, second, b) in pairwise(found):
            if end is None or (start - end).total_seconds() < -ONE_SECOND:
                if uid is None:
                    yield unverifiable(
                        f"migrations {first.name} and {second.name} overlap, but which VMI "
                        "incarnation each moved is not in the evidence",
                        a,
                        b,
                    )
                    continue
                yield violated(
                    f"migrations {first.name} and {second.name} of one VMI were active at once "
                    "(the create webhook refuses a second migration in flight, and no target pod "
                    "is created while the VMI has more than one active pod)",
                    a,
                    b,
                )
            else:
                yield explained(f"{first.name} ended before {second.name} took over", a, b)


def _active_span(facts: Facts, name: str) -> tuple[datetime, datetime | None] | None:
    entries = _phase_rows(facts, name)
    start = next((i for p, i in entries if ORDER.get(p, -1) >= ACTIVE_FROM), None)
    if start is None or facts.rows[start].time is None:
        return None
    end = next((i for p, i in entries if p in FINAL), None)
    start_at = facts.rows[start].time
    assert start_at is not None
    end_time = facts.rows[end].time if end is not None else None
    return start_at.at, (end_time.at if end_time else None)


def node_change_needs_migration(facts: Facts) -> Iterator[Finding]:
    """A VMI runs on the node of its first launcher pod until a migration completes."""
    scope = facts.timeline.scope
    for vmi in scope.vmis:
        node = (vmi.body.get("status") or {}).get("nodeName")
        first = _first_pod(scope.pods, vmi.uid)
        if not node or first is None or not (first.body.get("spec") or {}).get("nodeName"):
            continue
        started_on = first.body["spec"]["nodeName"]
        if node == started_on:
            continue
        moved_by = [
            m
            for m in scope.migrations
            if _completed_to(m, scope, node) and migration_vmi_uid(m, scope) in (vmi.uid, None)
        ]
        rows = [i for m in moved_by for i in _rows_of(facts, m.name)]
        if moved_by:
            yield explained(
                f"VMI {vmi.name} moved {started_on} → {node} by {moved_by[-1].name}", *rows
            )
        elif not scope.migrations:
            yield unverifiable(
                f"VMI {vmi.name} is on {node} but started on {started_on}, and no migration is "
                "in the evidence (VMIMs not collected, or garbage-collected after 5 per VMI)"
            )
        else:
            yield violated(
                f"VMI {vmi.name} is on {node} but started on {started_on}, and no migration of it "
                f"to {node} completed",
                *(i for m in scope.migrations for i in _rows_of(facts, m.name)),
            )


def _completed_to(vmim: KubeObject, scope: VMScope, node: str) -> bool:
    state, _ = migration_state(vmim, scope)
    done = bool(state.get("completed")) and not state.get("failed")
    return done and state.get("targetNode") == node


def _first_pod(pods: list[KubeObject], vmi_uid: str | None) -> KubeObject | None:
    """The VMI's own launcher pod: created by it, not a migration's target pod."""
    own = [p for p in pods if _label(p, "kubevirt.io/created-by") == vmi_uid]
    return min((p for p in own if not _label(p, MIGRATION_JOB_LABEL)), key=_created, default=None)


def _label(obj: KubeObject, key: str) -> str | None:
    labels = (obj.body.get("metadata") or {}).get("labels") or {}
    value = labels.get(key) if isinstance(labels, dict) else None
    return str(value) if value is not None else None


def _created(obj: KubeObject) -> datetime:
    when = parse_time(str((obj.body.get("metadata") or {}).get("creationTimestamp") or ""))
    return when.at if when else datetime.min.replace(tzinfo=timezone.utc)


def _gone_before(pod: KubeObject, moment: datetime) -> bool:
    when = parse_time(str((pod.body.get("metadata") or {}).get("deletionTimestamp") or ""))
    return when is not None and when.at <= moment


MIGRATE_ON_EVICTION = ("LiveMigrate", "LiveMigrateIfPossible")


def evacuation_only_when_allowed(facts: Facts) -> Iterator[Finding]:
    """The evacuation controller migrates a VMI of a drained node only when its eviction
    strategy (the VMI's, else the cluster's) is LiveMigrate, or LiveMigrateIfPossible on a
    migratable VMI (VMIMigratableOnEviction, migrations.go:116-138; evacuation.go:438-477)."""
    scope = facts.timeline.scope
    for vmim in scope.migrations:
        if EVACUATION_ANNOTATION not in (
            (vmim.body.get("metadata") or {}).get("annotations") or {}
        ):
            continue
        rows = _rows_of(facts, vmim.name)
        strategy, source = eviction_strategy(scope, migration_vmi_uid(vmim, scope))
        if strategy in MIGRATE_ON_EVICTION:
            yield explained(
                f"evacuation of a VMI with evictionStrategy {strategy} ({source})", *rows
            )
        elif strategy is None and scope.kubevirt is None:
            yield unverifiable(
                f"evacuation {vmim.name}: the VMI sets no evictionStrategy and the KubeVirt CR "
                "(cluster-wide evictionStrategy) is not in the evidence",
                *rows,
            )
        else:
            yield violated(
                f"evacuation {vmim.name} migrated a VMI whose evictionStrategy is "
                f"{strategy or 'unset (None)'} ({source}): only LiveMigrate or "
                "LiveMigrateIfPossible VMIs are evacuated",
                *rows,
            )


def stale_mark_failed(facts: Facts) -> Iterator[Finding]:
    """``Failed to patch VMI status to indicate migration X failed.`` (migration.go:1146) for a
    finished X while the VMI's migrationState belongs to another migration is v1.9.0's code, not
    a fault: the patch tests a migrationUid the VMI no longer holds, and X is reconciled again on
    every VMI update for as long as it is kept (migration.go:1114-1148, 1909-1919, 2363-2394)."""
    scope = facts.timeline.scope
    by_name = {f"{m.namespace}/{m.name}": m for m in scope.migrations}
    for i in facts.by_message("migration.mark-failed-patch"):
        key = facts.rows[i].arg("migration") or ""
        vmim = by_name.get(key)
        if vmim is None:
            yield unverifiable(
                f"migration {key} is not in the evidence: whether it was final decides", i
            )
            continue
        phase = str((vmim.body.get("status") or {}).get("phase") or "")
        owner = _current_owner(scope, migration_vmi_uid(vmim, scope))
        if phase in FINAL and owner not in (None, vmim.uid):
            yield explained(
                f"{key} is {phase} and the VMI's migration state now belongs to another "
                "migration: the patch's test cannot match (harmless, repeats while it is kept)",
                i,
            )
        elif phase not in FINAL:
            yield unverifiable(f"{key} was not final at capture: the patch failure is its own", i)


def _current_owner(scope: VMScope, vmi_uid: str | None) -> str | None:
    vmi = next((v for v in scope.vmis if v.uid == vmi_uid), None)
    state = ((vmi.body.get("status") or {}).get("migrationState") or {}) if vmi else {}
    return (
        str(state["migrationUid"])
        if isinstance(state, dict) and state.get("migrationUid")
        else None
    )
