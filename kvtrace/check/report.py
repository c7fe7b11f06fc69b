"""What ``kvtrace check`` hands to its renderers: the selection, one small result per VM, and a
closed summary of the evidence (never the open evidence itself)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from statistics import median

from kvtrace.evidence import EvidenceSummary, KubeObject
from kvtrace.model.engine import Assessment
from kvtrace.model.verdicts import EXPLAINED, Verdict
from kvtrace.model.version import VersionInfo
from kvtrace.sources.selectors import LabelSelector, labels_of
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.migration_rows import MigrationOutcome
from kvtrace.timeline.router import VMKey
from kvtrace.timeline.rows import TimelineRow


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


@dataclass(frozen=True)
class Reach:
    """What ``check --since`` needs of a VM checked without keeping its timeline: when its
    rows end (POSIX seconds; ``inf`` for a row with no time, which every window holds).
    ``latest`` is the latest end of a row with a time, ``timeless`` whether a row has none;
    ``ends`` the end of each row a kept verdict cites; ``explained`` the reach of each counted
    explanation, by rule."""

    latest: datetime | None
    timeless: bool
    ends: dict[int, float]
    explained: tuple[tuple[str, float], ...] = ()

    def of(self, rows: tuple[int, ...]) -> float:
        """How far a verdict's evidence reaches (``inf`` with no rows: always shown)."""
        return max((self.ends.get(i, math.inf) for i in rows), default=math.inf)


def row_end(row: TimelineRow) -> float:
    return math.inf if row.time is None else row.time.end.timestamp()


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
    reach: Reach | None = None  # set when the timeline was dropped but --since must choose

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
    Needs each VM's timeline, or its :class:`Reach` (what the workers send back)."""
    kept = [vm for vm in (_windowed(vm, moment) for vm in report.vms) if vm is not None]
    hidden = len(report.vms) - len(kept)
    notes = [*report.notes, f"--since {moment.isoformat()}: only rows from then on are judged"]
    if hidden:
        notes.append(f"{hidden} VM(s) with no row from --since on not shown")
    return replace(report, vms=kept, notes=notes)


def _windowed(vm: VMCheck, moment: datetime) -> VMCheck | None:
    if vm.timeline is None:
        return _reached(vm, moment) if vm.reach else vm  # no rows to choose by: shown whole
    rows = vm.timeline.rows
    inside = {i for i, row in enumerate(rows) if row.time is None or row.time.end > moment}
    if not inside:
        return None
    verdicts = [v for v in vm.assessment.verdicts if not v.rows or inside & set(v.rows)]
    assessment = replace(vm.assessment, verdicts=verdicts, by_row=_by_row(verdicts))
    return replace(vm, assessment=assessment)


def _by_row(verdicts: list[Verdict]) -> dict[int, list[Verdict]]:
    found: dict[int, list[Verdict]] = {}
    for verdict in verdicts:
        for index in verdict.rows:
            found.setdefault(index, []).append(verdict)
    return found


def _reached(vm: VMCheck, moment: datetime) -> VMCheck | None:
    """:func:`_windowed` from a :class:`Reach`: the same VMs, verdicts and counts."""
    reach = vm.reach
    assert reach is not None
    if not reach.timeless and (reach.latest is None or reach.latest <= moment):
        return None
    at = moment.timestamp()
    verdicts = [v for v in vm.assessment.verdicts if reach.of(v.rows) > at]
    counted = vm.assessment.explained_by_rule
    if counted is not None:
        counted = Counter(r for r, end in reach.explained if end > at and counted[r])
    assessment = replace(
        vm.assessment, verdicts=verdicts, by_row=_by_row(verdicts), explained_by_rule=counted
    )
    return replace(vm, assessment=assessment)


def without_timeline(vm: VMCheck) -> VMCheck:
    """A VM checked with its timeline, as a worker sends it back for ``--since``: explanations
    counted rather than kept, the timeline dropped, and the :class:`Reach` the window needs."""
    timeline = vm.timeline
    assert timeline is not None
    ends = [row_end(row) for row in timeline.rows]
    verdicts = vm.assessment.verdicts
    kept = [v for v in verdicts if v.status != EXPLAINED]
    explained = [v for v in verdicts if v.status == EXPLAINED]
    reach = Reach(
        timeline.last_time(),
        math.inf in ends,
        {i: ends[i] for v in kept for i in v.rows},
        tuple((v.rule, max((ends[i] for i in v.rows), default=math.inf)) for v in explained),
    )
    assert vm.assessment.explained_by_rule is None, "checked with its explanations kept"
    counted = Counter(v.rule for v in explained)
    assessment = replace(
        vm.assessment, verdicts=kept, by_row=_by_row(kept), explained_by_rule=counted
    )
    return replace(vm, assessment=assessment, timeline=None, reach=reach)


def last_row_time(report: CheckReport) -> datetime | None:
    """The latest row end of the report's VMs: what ``--since 2h`` counts back from when the
    evidence has no capture time."""
    times = [t for vm in report.vms if vm.timeline and (t := vm.timeline.last_time())]
    times += [vm.reach.latest for vm in report.vms if vm.reach and vm.reach.latest]
    return max(times) if times else None
