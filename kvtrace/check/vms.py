"""Check VMs: assemble each one's timeline and run the model over it. Used alike by the run in
this process and by the partition workers."""

from __future__ import annotations

from kvtrace.check.report import VMCheck
from kvtrace.evidence import Evidence
from kvtrace.model.engine import assess
from kvtrace.model.facts import run_strategy
from kvtrace.model.verdicts import EXPLAINED
from kvtrace.timeline.build import Timeline, assemble
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.migration_rows import migration_outcomes
from kvtrace.timeline.router import Router, VMKey
from kvtrace.timeline.rows import TimelineRow
from kvtrace.timeline.vmscope import VMScope
from parsers.timestamps import parse_time


def check_scopes(
    evidence: Evidence,
    router: Router,
    rows: dict[VMKey, list[TimelineRow]],
    leader_rows: list[TimelineRow],
    reports: list[SourceReport],
    keep: bool,
) -> list[VMCheck]:
    """Assemble and assess every VM (or VMI with no VM) that has objects or log rows."""
    scopes = router.scopes
    keys = sorted(k for k in scopes if k in rows or scopes[k].vm is not None or scopes[k].vmis)
    return [
        check_one(evidence, router.scopes[k], rows.get(k, []) + leader_rows, reports, keep)
        for k in keys
    ]


def check_one(
    evidence: Evidence,
    scope: VMScope,
    logged: list[TimelineRow],
    reports: list[SourceReport],
    keep: bool,
) -> VMCheck:
    timeline = assemble(evidence, scope, logged, reports)
    assessment = assess(timeline, keep_explained=keep)
    referenced = {i for v in assessment.verdicts if v.status != EXPLAINED for i in v.rows}
    return VMCheck(
        key=(scope.namespace, scope.name),
        strategy=run_strategy(scope.vm) or _logged_strategy(timeline),
        incarnations=len(timeline.incarnations),
        assessment=assessment,
        refs={i: f"{timeline.rows[i].evidence} ({timeline.rows[i].what})" for i in referenced},
        creation_to_running=_creation_to_running(timeline),
        migrations=migration_outcomes(scope),
        timeline=timeline if keep else None,
    )


def _logged_strategy(timeline: Timeline) -> str | None:
    named = [r.arg("strategy") for r in timeline.rows if r.arg("strategy")]
    return named[-1] if named else None


def _creation_to_running(timeline: Timeline) -> list[float]:
    """metadata.creationTimestamp (the API server's clock) to the Running stamp (the node's)."""
    values = []
    for vmi in timeline.scope.vmis:
        created = parse_time(str((vmi.body.get("metadata") or {}).get("creationTimestamp") or ""))
        entries = (vmi.body.get("status") or {}).get("phaseTransitionTimestamps") or []
        running = [e for e in entries if isinstance(e, dict) and e.get("phase") == "Running"]
        ran = parse_time(str(running[0].get("phaseTransitionTimestamp") or "")) if running else None
        if created and ran and ran.at >= created.at:  # earlier: the node's clock is behind
            values.append((ran.at - created.at).total_seconds())
    return values
