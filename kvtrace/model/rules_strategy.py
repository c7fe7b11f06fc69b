"""Run-strategy checks: ``syncRunStrategy`` (vm.go:970-1178 at v1.9.0).

Most of what these rules check the code guarantees by construction: each decision line prints
the strategy the ``switch`` chose, stops are gated on a final VMI or a request, and no branch
starts after a stop. Evidence against them is a lost, duplicated or foreign line (or a binary
that is not the release's code), so they raise open questions, not violations. What a user
asked for (``virtctl start``/``stop``/``restart`` patch ``status.stateChangeRequests`` or
``spec.runStrategy``, pkg/virt-api/rest/lifecycle.go) leaves no line at default verbosity.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.model.facts import FINAL, Facts
from kvtrace.model.reconciles import REQUESTS
from kvtrace.model.verdicts import Finding, explained, inconsistent, unverifiable

# Which strategies print each decision text (v1.9.0 positions in ``syncRunStrategy``).
TEXT_STRATEGIES: dict[str, frozenset[str]] = {
    "vm.restart-request": frozenset({"Always"}),  # vm.go:985
    "vm.stop": frozenset({"Always", "RerunOnFailure"}),  # vm.go:1005, 1052
    "vm.backoff": frozenset({"Always", "RerunOnFailure"}),  # vm.go:1027, 1076
    "vm.start": frozenset({"Always", "RerunOnFailure"}),  # vm.go:1032, 1081
    "vm.stop-request": frozenset({"RerunOnFailure"}),  # vm.go:1045
    "vm.stop-manual": frozenset({"Manual"}),  # vm.go:1094
    "vm.start-request": frozenset({"Manual", "Once"}),  # vm.go:1105, 1142
    "vm.stop-halted": frozenset({"Halted"}),  # vm.go:1134
    "vm.start-receiver": frozenset({"WaitAsReceiver"}),  # vm.go:1167
}
STARTS = ("vm.start", "vm.start-request", "vm.start-receiver")
STOPS = ("vm.stop", "vm.stop-manual", "vm.stop-halted")
USER_REQUEST = (
    "a virtctl start or restart, or a runStrategy switched away and back, leaves no line at "
    "default verbosity; the API server's audit log (or the VM's status.stateChangeRequests "
    "before they were consumed) would decide"
)


def decision_text(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message(*TEXT_STRATEGIES):
        row = facts.rows[i]
        strategy = row.arg("strategy") or "?"
        allowed = TEXT_STRATEGIES[row.message_id or ""]
        if strategy in allowed:
            yield explained(f"{row.message_id} is printed for runStrategy {strategy}", i)
        else:
            printed_for = ", ".join(sorted(allowed))
            yield inconsistent(f"this line is printed only for {printed_for}, not {strategy}", i)


def stop_needs_final_or_request(facts: Facts) -> Iterator[Finding]:
    """v1.2.0 on: Always and RerunOnFailure stop a final VMI, or one a request asked to stop."""
    yield from _gated_stops(facts, {"Always": FINAL, "RerunOnFailure": FINAL})


def rerun_before_v1_2(facts: Facts) -> Iterator[Finding]:
    """v0.53–v1.1 ``startStop`` (vm.go:742-820 at v1.0.0): Always as later; RerunOnFailure
    stops only a Failed VMI or on a stop request (vm.go:793), leaves a Succeeded VMI in place,
    and starts whenever no VMI exists, with no start request (vm.go:815)."""
    yield from _gated_stops(facts, {"Always": FINAL, "RerunOnFailure": frozenset({"Failed"})})
    for i in facts.by_message("vm.start"):
        if facts.rows[i].arg("strategy") == "RerunOnFailure":
            yield explained(
                "before v1.2.0 RerunOnFailure starts whenever its VMI is gone, with no start "
                "request (vm.go:815 at v1.0.0)",
                i,
            )


def _gated_stops(facts: Facts, stops_at: dict[str, frozenset[str] | set[str]]) -> Iterator[Finding]:
    for i in facts.by_message("vm.stop"):
        row = facts.rows[i]
        phase, strategy = row.arg("phase") or "", row.arg("strategy") or "?"
        if phase in stops_at.get(strategy, FINAL):
            yield explained(f"VMI phase {phase} is final: {strategy} stops it", i)
            continue
        prelude = facts.decision_before(i, REQUESTS)
        if prelude is not None:
            yield explained(f"a request to stop/restart this VMI came first ({phase})", prelude, i)
        else:
            yield inconsistent(
                f"{strategy} stopped a {phase or 'non-final'} VMI with no stop or restart "
                "request line before it",
                i,
            )


def rerun_after_failure_only(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message("vm.start"):
        if facts.rows[i].arg("strategy") != "RerunOnFailure":
            continue
        last = facts.last_before(i, "vm.stop")
        if last is None:
            yield explained("first start of a RerunOnFailure VM (status.runStrategy empty)", i)
            continue
        phase = facts.rows[last].arg("phase")
        if phase == "Failed":
            yield explained("the VMI Failed: a Start request was appended (vm.go:1059)", last, i)
        elif phase == "Succeeded":
            yield unverifiable(
                f"RerunOnFailure started again after its VMI Succeeded, which it does only on a "
                f"start request or a strategy switch: {USER_REQUEST}",
                last,
                i,
            )
        else:
            yield explained(f"the VMI was stopped in phase {phase} on request", last, i)


def once_never_restarts(facts: Facts) -> Iterator[Finding]:
    """Once has no stop branch (vm.go:1140-1149): its VMI ends only by itself, by a delete from
    outside, by the VM's deletion, or under another strategy after a switch (``virtctl stop``
    turns Once into Halted)."""
    for i in facts.by_message(*STOPS):
        if facts.rows[i].arg("strategy") == "Once":
            yield inconsistent("a stop decision under Once, which has no stop branch", i)
    starts = [i for i in facts.by_message(*STARTS) if facts.rows[i].arg("strategy") == "Once"]
    for previous, start in zip([None, *starts], starts, strict=False):
        if previous is None:
            yield explained("Once starts its VMI once", start)
        elif facts.between(previous, start, "vm.deleted"):
            yield explained(
                "the VMI was deleted under another strategy before Once started again", start
            )
        else:
            yield unverifiable(
                "Once starts again only after its VMI was deleted; who deleted it is not in the "
                "evidence",
                previous,
                start,
            )


def halted_never_creates(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message("vm.stop-halted"):
        yield explained("Halted stops any VMI; the line repeats while the VMI exists", i)
    for i in facts.by_message("vm.created"):
        decision = facts.decision_before(i, frozenset(STARTS))
        strategy = facts.rows[decision].arg("strategy") if decision is not None else None
        if decision is not None and strategy == "Halted":
            yield inconsistent("a VMI was created by a start decision under Halted", decision, i)
