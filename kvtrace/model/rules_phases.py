"""VMI phase checks: who moves a VMI where (at v1.9.0: the VMI controller, lifecycle.go:256-613;
virt-handler, its vm.go:2319-2390; the node controller, node.go:276-291).

``status.phaseTransitionTimestamps`` is appended to on the first entry into each phase
(controller.go:389-404), so its list order is the order the phases were entered, whoever wrote
them. The stamps come from up to three clocks (virt-api, the leader, the VMI's node) at
one-second precision: stamps that disagree with the list order mean clocks that disagree, never a
regression. A regression shows in the order itself (a phase entered after a later one) or in
``status.phase`` behind a phase the VMI already entered. A missing phase is missing evidence:
changes made by patch leave no stamp (lifecycle.go:571-591).
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
STAMPED_BY_THE_NODE = {"Running", "Succeeded", "Failed"}  # virt-handler's status updates


def _phase_rows(facts: Facts, inc: Incarnation) -> list[tuple[str, int]]:
    """The incarnation's stamped phases in list order (the order they were entered)."""

    def position(item: tuple[str, int]) -> tuple[int, int]:
        index = facts.rows[item[1]].arg("index")
        return (int(index) if index and index.isdigit() else ORDER.get(item[0], 9), item[1])

    return sorted(((phase, i) for phase, rows in inc.phases.items() for i in rows), key=position)


def phase_order(facts: Facts) -> Iterator[Finding]:
    any_phase = False
    for inc in facts.incarnations:
        entries = [(p, i) for p, i in _phase_rows(facts, inc) if p in ORDER]
        any_phase = any_phase or bool(entries)
        yield from _order_of(facts, entries)
        yield from _current_phase(inc, entries)
    if not any_phase:
        yield unverifiable("no phaseTransitionTimestamps in the evidence (no VMI object)")


def _order_of(facts: Facts, entries: list[tuple[str, int]]) -> Iterator[Finding]:
    finals = {p for p, _ in entries if ORDER[p] == 4}
    if len(finals) > 1:
        yield violated("a VMI with both Succeeded and Failed timestamps", *(i for _, i in entries))
    for (early, a), (late, b) in pairwise(entries):
        if ORDER[late] < ORDER[early]:
            yield violated(f"phase {late} was entered after {early}: a regression", a, b)
        else:
            yield explained(
                f"{early} → {late} in order{_clock_note(facts, early, a, late, b)}", a, b
            )


def _clock_note(facts: Facts, early: str, a: int, late: str, b: int) -> str:
    ta, tb = facts.rows[a].time, facts.rows[b].time
    if ta is None or tb is None:
        return ""
    lag = (ta.at - tb.at).total_seconds()
    if lag <= SKEW_SECONDS:
        return ""
    who = "the node's virt-handler" if late in STAMPED_BY_THE_NODE else "its writer"
    return (
        f"; {late} is stamped {lag:.0f}s before {early}: {who} and {early}'s writer disagree "
        "on the time (a node clock out of sync), which does not change the order"
    )


def _current_phase(inc: Incarnation, entries: list[tuple[str, int]]) -> Iterator[Finding]:
    phase = str(inc.status.get("phase") or "")
    if phase not in ORDER or not entries:
        return
    furthest, row = max(entries, key=lambda entry: ORDER[entry[0]])
    if ORDER[phase] < ORDER[furthest]:
        yield violated(
            f"status.phase is {phase} after the VMI had entered {furthest}: a regression", row
        )


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
