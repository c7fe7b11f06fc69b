"""``kvtrace check``: the model over every selected VM of the evidence.

Small evidence is read in this process (:mod:`kvtrace.bulk`). Large log sets are split into
per-VM buckets of raw lines (:mod:`kvtrace.partition`) and the buckets are parsed and checked by
one worker process per core (:mod:`kvtrace.check_workers`), so memory stays bounded by a bucket
and every core works. Both paths use the same routing, timeline assembly and model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from kvtrace.errors import NotFoundError
from kvtrace.evidence import VM, Evidence
from kvtrace.model.engine import Assessment, assess
from kvtrace.model.facts import run_strategy
from kvtrace.model.verdicts import EXPLAINED, Verdict
from kvtrace.model.version import VersionInfo, detect
from kvtrace.timeline.build import Timeline, assemble
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.router import Router, VMKey, bulk_log_rows, router_for
from kvtrace.timeline.rows import TimelineRow
from kvtrace.timeline.vmscope import VMScope
from parsers.timestamps import parse_time

PARTITION_MIN_BYTES = 64 << 20


@dataclass(frozen=True)
class Selection:
    """Which VMs: one ``namespace/name``, one namespace, or all (``namespace`` None)."""

    namespace: str | None
    name: str | None = None

    def describe(self) -> str:
        if self.name:
            return f"VirtualMachine {self.namespace}/{self.name}"
        return f"namespace {self.namespace}" if self.namespace else "all namespaces"


@dataclass
class VMCheck:
    """One VM's result: small and picklable (workers send it back); ``timeline`` only when the
    check ran in this process."""

    key: VMKey
    strategy: str | None
    incarnations: int
    assessment: Assessment
    refs: dict[int, str] = field(default_factory=dict)  # row → "file:line (what)" for findings
    creation_to_running: list[float] = field(default_factory=list)
    timeline: Timeline | None = None

    @property
    def restarts(self) -> int:
        return max(0, self.incarnations - 1)

    def latency(self) -> tuple[float | None, float | None]:
        values = self.creation_to_running
        return (median(values), max(values)) if values else (None, None)

    def evidence_of(self, verdict: Verdict) -> list[str]:
        return [self.refs.get(i, f"row {i + 1}") for i in verdict.rows]


@dataclass
class CheckReport:
    selection: Selection
    version: VersionInfo
    vms: list[VMCheck]
    reports: list[SourceReport]
    evidence: Evidence
    notes: list[str] = field(default_factory=list)

    def violations(self, at_least: str = "info") -> list[tuple[VMCheck, Verdict]]:
        return [(vm, v) for vm in self.vms for v in vm.assessment.violations(at_least)]


def run_check(
    evidence: Evidence, selection: Selection, version_flag: str | None = None
) -> CheckReport:
    namespaces = {selection.namespace} if selection.namespace else None
    only = (selection.namespace or "default", selection.name) if selection.name else None
    router = router_for(evidence, namespaces, only)
    if only is None and _log_bytes(evidence) >= PARTITION_MIN_BYTES:
        from kvtrace.check.workers import check_partitioned

        vms, reports = check_partitioned(evidence, router)
    else:
        vms, reports = _check_here(evidence, router)
    if not vms:
        raise NotFoundError(_nothing_found(evidence, selection))
    version = detect(evidence, version_flag)
    notes = [n for n in (version.note(),) if n] + list(evidence.missing)
    return CheckReport(
        selection, version, sorted(vms, key=lambda v: v.key), reports, evidence, notes
    )


def _log_bytes(evidence: Evidence) -> int:
    total = 0
    for stream in evidence.logs:
        try:
            total += stream.path.stat().st_size if stream.path else 0
        except OSError:
            continue
    return total


def _check_here(evidence: Evidence, router: Router) -> tuple[list[VMCheck], list[SourceReport]]:
    bulk = bulk_log_rows(router, evidence.logs, evidence.captured_at)
    return check_scopes(
        evidence, router, bulk.rows, bulk.leader_rows, bulk.reports, keep=True
    ), bulk.reports


def check_scopes(
    evidence: Evidence,
    router: Router,
    rows: dict[VMKey, list[TimelineRow]],
    leader_rows: list[TimelineRow],
    reports: list[SourceReport],
    keep: bool,
) -> list[VMCheck]:
    """Assemble and assess every VM that has objects or log rows."""
    keys = sorted(k for k in router.scopes if k in rows or router.scopes[k].vm is not None)
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
        timeline=timeline if keep else None,
    )


def _logged_strategy(timeline: Timeline) -> str | None:
    named = [r.arg("strategy") for r in timeline.rows if r.arg("strategy")]
    return named[-1] if named else None


def _creation_to_running(timeline: Timeline) -> list[float]:
    values = []
    for vmi in timeline.scope.vmis:
        created = parse_time(str((vmi.body.get("metadata") or {}).get("creationTimestamp") or ""))
        entries = (vmi.body.get("status") or {}).get("phaseTransitionTimestamps") or []
        running = [e for e in entries if isinstance(e, dict) and e.get("phase") == "Running"]
        ran = parse_time(str(running[0].get("phaseTransitionTimestamp") or "")) if running else None
        if created and ran:
            values.append((ran.at - created.at).total_seconds())
    return values


def _nothing_found(evidence: Evidence, selection: Selection) -> str:
    namespaces = sorted({o.namespace or "default" for o in evidence.of_kind(VM)})
    where = evidence.origin or evidence.layout
    if namespaces:
        hint = f"namespaces with VMs: {', '.join(namespaces)} (use -n NS or -A)"
    else:
        hint = "no VMs at all in this evidence"
    from kvtrace.timeline.build import skipped_lines

    return "\n".join(
        [f"no VMs found for {selection.describe()} in {where}; {hint}", *skipped_lines(evidence)]
    )
