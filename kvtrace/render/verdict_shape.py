"""Shape model verdicts: the marks in tables, the lists under them, the data in JSON."""

from __future__ import annotations

from typing import Any

from kvtrace.model.engine import Assessment
from kvtrace.model.rules import ENCODED_VERSION
from kvtrace.model.verdicts import EXPLAINED, VIOLATION, Verdict
from kvtrace.render.words import count

UNVERIFIABLE_SHOWN = 3


def verdict_data(verdict: Verdict) -> dict[str, Any]:
    return {
        "rule": verdict.rule,
        "status": verdict.status,
        "severity": verdict.severity,
        "why": verdict.why,
        "rows": [r + 1 for r in verdict.rows],  # 1-based, as in the table
        "judgedAgainst": verdict.release or None,
    }


def mark(verdict: Verdict | None) -> str:
    return f"{verdict.mark} {verdict.rule}" if verdict else ""


def model_status(assessment: Assessment) -> dict[str, Any]:
    counts = assessment.counts()
    return {
        "encodes": f"KubeVirt {ENCODED_VERSION} (each rule applied to the releases v0.53.0–v1.9.x "
        "whose code guarantees it)",
        "judgedAgainst": assessment.release or None,
        "explained": counts.get("explained", 0),
        "violations": counts.get("violation", 0),
        "unverifiable": counts.get("unverifiable", 0),
        "findings": [verdict_data(v) for v in assessment.verdicts if v.status != EXPLAINED],
    }


def model_lines(assessment: Assessment) -> list[str]:
    """The model's counts, then every violation, then the open questions: at most
    ``UNVERIFIABLE_SHOWN`` per rule (a long history repeats the same one; JSON keeps all)."""
    counts = assessment.counts()
    lines = [
        f"model (KubeVirt {ENCODED_VERSION}'s rules, judging {assessment.release or 'unknown'}): "
        f"{counts.get('explained', 0)} explained, "
        f"{count(counts.get('violation', 0), 'violation')}, "
        f"{counts.get('unverifiable', 0)} unverifiable"
    ]
    lines += [_line(v) for v in assessment.verdicts if v.status == VIOLATION]
    open_questions: dict[str, list[Verdict]] = {}
    for verdict in assessment.unverifiable():
        open_questions.setdefault(verdict.rule, []).append(verdict)
    for rule, verdicts in open_questions.items():
        lines += [_line(v) for v in verdicts[:UNVERIFIABLE_SHOWN]]
        if len(verdicts) > UNVERIFIABLE_SHOWN:
            more = len(verdicts) - UNVERIFIABLE_SHOWN
            lines.append(f"  ? {rule}: {more} more like these (-o json lists every one)")
    return lines


def _line(verdict: Verdict) -> str:
    rows = ", ".join(str(r + 1) for r in verdict.rows)
    where = f" [{'row' if len(verdict.rows) == 1 else 'rows'} {rows}]" if rows else ""
    return f"  {verdict.mark} {verdict.rule} ({verdict.severity}): {verdict.why}{where}"
