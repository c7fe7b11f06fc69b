"""Shape the rule table for ``kvtrace rules`` and for ``docs/model.md`` (one source, no drift)."""

from __future__ import annotations

from typing import Any

from kvtrace.model.releases import CHANGES, span_of
from kvtrace.model.rules import ENCODED_VERSION, RULES
from kvtrace.model.verdicts import Rule

HEADERS = ["RULE", "SEVERITY", "KIND", "POSITIONS", "WHAT THE CONTROLLER DOES"]
BY_CONSTRUCTION = "by construction"
BEHAVIOUR = "behaviour"


def kind_of(rule: Rule) -> str:
    """``by construction``: the code's shape guarantees it, so a finding means lost, duplicated
    or foreign lines or a binary that is not the release's; ``behaviour``: what the code does at
    run time, which evidence can show broken."""
    return BY_CONSTRUCTION if rule.by_construction else BEHAVIOUR


def rule_rows() -> list[list[str]]:
    return [[r.id, r.severity, kind_of(r), ", ".join(r.positions), r.sentence] for r in RULES]


def rules_document(_: object = None) -> dict[str, Any]:
    return {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "RuleList",
        "metadata": {"encodes": f"KubeVirt {ENCODED_VERSION}", "appliesTo": "v0.53.0 – v1.9.x"},
        "items": [
            {
                "id": r.id,
                "severity": r.severity,
                "kind": kind_of(r),
                "sentence": r.sentence,
                "positions": list(r.positions),
                "releases": span_of(r.id).shown,
            }
            for r in RULES
        ],
    }


def rules_markdown() -> str:
    """The Markdown table embedded in docs/model.md between the ``rules`` markers."""
    lines = [
        "| rule | severity | kind | what the controller does | source (v1.9.0) | releases |",
        "|---|---|---|---|---|---|",
    ]
    for r in RULES:
        positions = ", ".join(f"`{p}`" for p in r.positions)
        releases = span_of(r.id).shown
        lines.append(
            f"| {r.id} | {r.severity} | {kind_of(r)} | {r.sentence} | {positions} | {releases} |"
        )
    return "\n".join(lines) + "\n"


def releases_markdown() -> str:
    """The release table embedded in docs/model.md between the ``releases`` markers: what each
    release changed that the model sees, and which rules follow."""
    lines = ["| release | what changed | source (at that release) | rules |", "|---|---|---|---|"]
    for change in CHANGES:
        lines.append(f"| {change.release} | {change.what} | `{change.where}` | {change.rules} |")
    return "\n".join(lines) + "\n"
