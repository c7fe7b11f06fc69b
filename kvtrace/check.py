"""``kvtrace check``: the model over every selected VM of the evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from kvtrace.bulk import VMKey, bulk_log_rows, router_for
from kvtrace.errors import NotFoundError
from kvtrace.log_rows import SourceReport
from kvtrace.model.engine import Assessment, assess
from kvtrace.model.facts import run_strategy
from kvtrace.model.verdicts import Verdict
from kvtrace.model.version import VersionInfo, detect
from kvtrace.rows import TimelineRow
from kvtrace.sources.model import VM, Evidence
from kvtrace.timeline import Timeline, assemble
from kvtrace.vmscope import VMScope
from parsers.timestamps import parse_time


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
    key: VMKey
    timeline: Timeline
    assessment: Assessment
    strategy: str | None
    creation_to_running: list[float] = field(default_factory=list)

    @property
    def incarnations(self) -> int:
        return len(self.timeline.incarnations)

    @property
    def restarts(self) -> int:
        return max(0, self.incarnations - 1)

    def latency(self) -> tuple[float | None, float | None]:
        values = self.creation_to_running
        return (median(values), max(values)) if values else (None, None)


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
    bulk = bulk_log_rows(router, evidence.logs, evidence.captured_at)
    keys = sorted(k for k in router.scopes if k in bulk.rows or router.scopes[k].vm is not None)
    if not keys:
        raise NotFoundError(_nothing_found(evidence, selection))
    vms = [
        _check_one(
            evidence, router.scopes[k], bulk.rows.get(k, []) + bulk.leader_rows, bulk.reports
        )
        for k in keys
    ]
    version = detect(evidence, version_flag)
    notes = [n for n in (version.note(),) if n] + list(evidence.missing)
    return CheckReport(selection, version, vms, bulk.reports, evidence, notes)


def _check_one(
    evidence: Evidence, scope: VMScope, logged: list[TimelineRow], reports: list[SourceReport]
) -> VMCheck:
    timeline = assemble(evidence, scope, logged, reports)
    return VMCheck(
        (scope.namespace, scope.name),
        timeline,
        assess(timeline),
        run_strategy(scope.vm) or _logged_strategy(timeline),
        _creation_to_running(timeline),
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
    hint = (
        f"namespaces with VMs: {', '.join(namespaces)} (use -n NS or -A)"
        if namespaces
        else "no VMs at all in this evidence"
    )
    return f"no VMs found for {selection.describe()} in {where}; {hint}"
