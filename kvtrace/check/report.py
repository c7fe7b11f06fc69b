"""What ``kvtrace check`` hands to its renderers: the selection, one small result per VM, and a
closed summary of the evidence (never the open evidence itself)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime
from statistics import median

from kvtrace.evidence import EvidenceSummary, KubeObject
from kvtrace.model.engine import Assessment
from kvtrace.model.verdicts import Verdict
from kvtrace.model.version import VersionInfo
from kvtrace.sources.selectors import LabelSelector, labels_of
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.migration_rows import MigrationOutcome
from kvtrace.timeline.router import VMKey


@dataclass(frozen=True)
class Selection:
    """Which VMs: one ``namespace/name``, one namespace, or all (``namespace`` None)."""

    namespace: str | None
    name: str | None = None
    labels: LabelSelector | None = None  # -l: only VMs whose metadata.labels match

    def describe(self) -> str:
        if self.name:
            return f"VirtualMachine {self.namespace}/{self.name}"
        where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
        return f"{where}, labels {self.labels.text}" if self.labels else where

    def keeps(self, vm: KubeObject) -> bool:
        return self.labels is None or self.labels.matches(labels_of(vm))


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
    migrations: list[MigrationOutcome] = field(default_factory=list)
    timeline: Timeline | None = None

    @property
    def restarts(self) -> int:
        return max(0, self.incarnations - 1)

    def latency(self) -> tuple[float | None, float | None]:
        values = self.creation_to_running
        return (median(values), max(values)) if values else (None, None)

    @property
    def failed_migrations(self) -> int:
        return sum(1 for m in self.migrations if m.outcome == "Failed")

    def migration_durations(self) -> tuple[float | None, float | None]:
        """p50 and p95 (nearest rank) of the finished migrations' durations."""
        values = sorted(m.seconds for m in self.migrations if m.seconds is not None)
        if not values:
            return None, None
        return median(values), values[max(0, math.ceil(0.95 * len(values)) - 1)]

    def evidence_of(self, verdict: Verdict) -> list[str]:
        return [self.refs.get(i, f"row {i + 1}") for i in verdict.rows]


@dataclass
class CheckReport:
    selection: Selection
    version: VersionInfo
    vms: list[VMCheck]
    reports: list[SourceReport]
    evidence: EvidenceSummary  # closed: the report outlives the evidence
    notes: list[str] = field(default_factory=list)

    def violations(self, at_least: str = "info") -> list[tuple[VMCheck, Verdict]]:
        return [(vm, v) for vm in self.vms for v in vm.assessment.violations(at_least)]


def since_moment(report: CheckReport, moment: datetime) -> CheckReport:
    """``check --since``: the VMs with a row from ``moment`` on, and only the verdicts whose
    evidence reaches it. The model ran over every row first, so nothing before ``moment`` is
    missing from its judgement: the window chooses what is reported, never what is known.
    Needs each VM's timeline (the check runs in this process)."""
    kept = [vm for vm in (_windowed(vm, moment) for vm in report.vms) if vm is not None]
    hidden = len(report.vms) - len(kept)
    notes = [*report.notes, f"--since {moment.isoformat()}: only rows from then on are judged"]
    if hidden:
        notes.append(f"{hidden} VM(s) with no row from --since on not shown")
    return replace(report, vms=kept, notes=notes)


def _windowed(vm: VMCheck, moment: datetime) -> VMCheck | None:
    if vm.timeline is None:
        return vm  # no rows to choose by: shown whole rather than hidden
    rows = vm.timeline.rows
    inside = {i for i, row in enumerate(rows) if row.time is None or row.time.end > moment}
    if not inside:
        return None
    verdicts = [v for v in vm.assessment.verdicts if not v.rows or inside & set(v.rows)]
    by_row: dict[int, list[Verdict]] = {}
    for verdict in verdicts:
        for index in verdict.rows:
            by_row.setdefault(index, []).append(verdict)
    assessment = replace(vm.assessment, verdicts=verdicts, by_row=by_row)
    return replace(vm, assessment=assessment)
