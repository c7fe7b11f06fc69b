"""VMI phase checks: who moves a VMI where (at v1.9.0: the VMI controller, lifecycle.go:256-613;
virt-handler, its vm.go:2319-2390; the node controller, node.go:276-291).

Phase timestamps come from up to three clocks (virt-api, the leader, the VMI's node) at one-second
precision, and exist only for the first entry into a phase; changes the VMI controller makes by
patch leave none (lifecycle.go:571-591). So a missing phase is missing evidence, never a
violation, and order is judged with a clock-skew allowance.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from kvtrace.model.facts import Facts, Incarnation
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated

ORDER = {"Pending": 0, "Scheduling": 1, "Scheduled": 2, "Running": 3, "Succeeded": 4, "Failed": 4}
SKEW_SECONDS = 1.0
NODE_LABEL = "kubevirt.io/nodeName"
HANDED_OVER = {"Scheduled", "Running"}


def _phase_rows(facts: Facts, inc: Incarnation) -> list[tuple[str, int]]:
    return sorted(
        ((phase, i) for phase, rows in inc.phases.items() for i in rows),
        key=lambda item: ORDER.get(item[0], 9),
    )


def phase_order(facts: Facts) -> Iterator[Finding]:
    any_phase = False
    for inc in facts.incarnations:
        entries = [(p, i) for p, i in _phase_rows(facts, inc) if p in ORDER]
        any_phase = any_phase or bool(entries)
        yield from _order_of(facts, entries)
    if not any_phase:
        yield unverifiable("no phaseTransitionTimestamps in the evidence (no VMI object)")


def _order_of(facts: Facts, entries: list[tuple[str, int]]) -> Iterator[Finding]:
    finals = {p for p, _ in entries if ORDER[p] == 4}
    if len(finals) > 1:
        yield violated("a VMI with both Succeeded and Failed timestamps", *(i for _, i in entries))
    for (early, a), (late, b) in pairwise(entries):
        ta, tb = facts.rows[a].time, facts.rows[b].time
        if ta is None or tb is None:
            continue
        lag = (ta.at - tb.at).total_seconds()
        if lag > SKEW_SECONDS:
            yield violated(f"phase {late} is stamped {lag:.0f}s before {early}: a regression", a, b)
        else:
            yield explained(f"{early} → {late} in order", a, b)


def phase_bookkeeping(facts: Facts) -> Iterator[Finding]:
    for inc in facts.incarnations:
        for phase, rows in inc.phases.items():
            if phase == "Unknown":
                yield violated("phase Unknown is never set by KubeVirt (types.go:1122)", *rows)
            elif len(rows) > 1:
                yield violated(
                    f"{len(rows)} timestamps for phase {phase}: only the first entry is kept", *rows
                )
        if inc.status.get("phase") == "Unknown":
            yield violated(f"VMI {inc.uid[:8]} has status.phase Unknown")
    if not any(inc.phases for inc in facts.incarnations):
        yield unverifiable("no phaseTransitionTimestamps in the evidence (no VMI object)")


def handover(facts: Facts) -> Iterator[Finding]:
    checked = False
    for inc in facts.incarnations:
        if inc.vmi is None or not (set(inc.phases) & HANDED_OVER):
            continue
        checked = True
        rows = tuple(inc.phases.get("Scheduled", []) or inc.phases.get("Running", []))
        label = ((inc.vmi.body.get("metadata") or {}).get("labels") or {}).get(NODE_LABEL)
        node = inc.status.get("nodeName")
        if not label or not node:
            yield violated(
                f"a scheduled VMI without label {NODE_LABEL} ({label}) or status.nodeName ({node})",
                *rows,
            )
        elif label != node and not inc.status.get("migrationState"):
            yield violated(f"label {NODE_LABEL}={label} but status.nodeName={node}", *rows)
        else:
            yield explained(f"handover set {NODE_LABEL} and status.nodeName to {node}", *rows)
    if not checked:
        yield unverifiable("no VMI object that reached Scheduled")
