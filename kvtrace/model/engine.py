"""Run every rule over a timeline and collect the verdicts, per rule and per row."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from kvtrace.model.facts import Facts, derive
from kvtrace.model.releases import against, applies, candidates, judge, not_applied
from kvtrace.model.rules import RULES
from kvtrace.model.verdicts import (
    EXPLAINED,
    UNVERIFIABLE,
    VIOLATION,
    Finding,
    Rule,
    Verdict,
    severity_rank,
    unverifiable,
)
from kvtrace.model.version import VersionInfo
from kvtrace.timeline.build import Timeline

# Rules that hold for almost every action line: shown only when nothing more specific applies.
GENERIC_RULES = frozenset({"KV-RS-01", "KV-LD-01", "KV-LD-02", "KV-RC-03", "KV-EX-01"})


@dataclass
class Assessment:
    """All verdicts of one VM's timeline."""

    verdicts: list[Verdict]
    by_row: dict[int, list[Verdict]] = field(default_factory=dict)
    # per rule, when explained verdicts were counted, not kept (None: they are in verdicts)
    explained_by_rule: Counter[str] | None = None
    release: str = ""  # the release the verdicts judge against (set by judge)

    def counts(self) -> Counter[str]:
        counts = Counter(v.status for v in self.verdicts)
        if self.explained_by_rule is not None:
            counts[EXPLAINED] = self.explained_by_rule.total()
        return counts

    def violations(self, at_least: str = "info") -> list[Verdict]:
        floor = severity_rank(at_least)
        return [
            v for v in self.verdicts if v.status == VIOLATION and severity_rank(v.severity) >= floor
        ]

    def not_held_to_the_model(self, reason: str) -> None:
        """The evidence is from a release the model does not cover: each violation becomes an
        open question saying so (a ✗ must mean the release's own code broke its rules)."""
        self.verdicts = [
            replace(v, status=UNVERIFIABLE, why=f"{v.why}; not a violation here: {reason}")
            if v.status == VIOLATION
            else v
            for v in self.verdicts
        ]
        self.by_row = _by_row(self.verdicts)

    def judge(self, version: VersionInfo) -> list[str]:
        """Hold the verdicts to the evidence's release: outside the modelled releases nothing
        is a violation; inside, each rule applies only where its release's code guarantees it
        (:func:`kvtrace.model.releases.judge`). Returns the notes to show."""
        self.release = against(version)
        if version.outside:
            self.not_held_to_the_model(version.outside)
            return []
        counted = self.explained_by_rule or Counter()
        notes = not_applied({v.rule for v in self.verdicts} | set(counted), version)
        self.verdicts = judge(self.verdicts, version)
        self.by_row = _by_row(self.verdicts)
        releases = candidates(version)
        for rule in [r for r in counted if not applies(r, releases)]:
            del counted[rule]
        return notes

    def unverifiable(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == UNVERIFIABLE]

    def row_verdict(self, index: int) -> Verdict | None:
        """The verdict a table shows for a row: a violation first, then the most specific
        explanation, then an open question (every verdict stays in the JSON)."""
        found = self.by_row.get(index, [])
        for status in (VIOLATION, EXPLAINED, UNVERIFIABLE):
            matching = sorted(
                (v for v in found if v.status == status), key=lambda v: v.rule in GENERIC_RULES
            )
            if matching:
                return matching[0]
        return None


class AssessedTimeline(NamedTuple):
    """A timeline and the model's verdicts on it: what ``kvtrace timeline`` renders."""

    timeline: Timeline
    assessment: Assessment | None


def assess(
    timeline: Timeline, keep_explained: bool = True, version: VersionInfo | None = None
) -> Assessment:
    """Every rule's findings. ``keep_explained=False`` (``check`` over thousands of VMs) keeps only
    violations and open questions and counts the explanations: they are most of the verdicts.
    With ``version``, the verdicts are judged against that release (:meth:`Assessment.judge`)
    and its notes join the timeline's."""
    facts = derive(timeline)
    verdicts: list[Verdict] = []
    explained: Counter[str] = Counter()
    for rule in RULES:
        for finding in _findings(rule, facts):
            if finding.status == EXPLAINED and not keep_explained:
                explained[rule.id] += 1
                continue
            verdicts.append(
                Verdict(rule.id, rule.severity, finding.status, finding.why, finding.rows)
            )
    assessment = Assessment(verdicts, _by_row(verdicts), None if keep_explained else explained)
    if version is not None:
        timeline.notes.extend(assessment.judge(version))
    return assessment


MALFORMED = (TypeError, ValueError, AttributeError, KeyError, IndexError)


def _findings(rule: Rule, facts: Facts) -> list[Finding]:
    """A rule's findings; a rule that cannot read an object of the evidence (a stranger's
    truncated or hand-edited object of another shape) gives one open question naming it rather
    than ending the run (``KVTRACE_DEBUG=1`` raises, for kvtrace's own bugs)."""
    try:
        return list(rule.check(facts))
    except MALFORMED as exc:
        if os.environ.get("KVTRACE_DEBUG"):
            raise
        why = (
            f"the evidence holds an object this rule cannot read ({type(exc).__name__}: {exc}): "
            "a truncated or hand-edited object; the skipped and unparsed files say which"
        )
        return [unverifiable(why)]


def _by_row(verdicts: list[Verdict]) -> dict[int, list[Verdict]]:
    """Each evidence row's verdicts."""
    found: dict[int, list[Verdict]] = {}
    for verdict in verdicts:
        for index in verdict.rows:
            found.setdefault(index, []).append(verdict)
    return found
