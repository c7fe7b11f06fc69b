"""What ``kvtrace check`` hands to its renderers: the selection, one small result per VM, and a
closed summary of the evidence (never the open evidence itself)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median

from kvtrace.evidence import EvidenceSummary
from kvtrace.model.engine import Assessment
from kvtrace.model.verdicts import Verdict
from kvtrace.model.version import VersionInfo
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.migration_rows import MigrationOutcome
from kvtrace.timeline.router import VMKey


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
