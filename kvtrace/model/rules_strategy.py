"""Run-strategy checks: ``syncRunStrategy`` (vm.go:970-1178 at v1.9.0)."""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.model.facts import FINAL, Facts
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated

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


def decision_text(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message(*TEXT_STRATEGIES):
        row = facts.rows[i]
        strategy = row.arg("strategy") or "?"
        allowed = TEXT_STRATEGIES[row.message_id or ""]
        if strategy in allowed:
            yield explained(f"{row.message_id} is printed for runStrategy {strategy}", i)
        else:
            printed_for = ", ".join(sorted(allowed))
            yield violated(f"this line is printed only for {printed_for}, not {strategy}", i)


def stop_needs_final_or_request(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message("vm.stop"):
        row = facts.rows[i]
        phase, strategy = row.arg("phase") or "", row.arg("strategy") or "?"
        if phase in FINAL:
            yield explained(f"VMI phase {phase} is final: {strategy} stops it", i)
            continue
        prelude = _prelude(facts, i)
        if prelude is not None:
            yield explained(f"a request to stop/restart this VMI came first ({phase})", prelude, i)
        else:
            yield violated(
                f"{strategy} stopped a {phase or 'non-final'} VMI without a stop or restart "
                "request line before it",
                i,
            )


def _prelude(facts: Facts, index: int) -> int | None:
    reconcile = facts.reconcile_of(index)
    if reconcile is None:
        return None
    before = [j for j in reconcile.rows if j < index]
    if before and facts.rows[before[-1]].message_id in ("vm.restart-request", "vm.stop-request"):
        return before[-1]
    return None


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
        elif phase == "Succeeded" and _prelude(facts, last) is None:
            yield violated(
                "RerunOnFailure recreated a VMI that Succeeded, with no start request", last, i
            )
        else:
            yield unverifiable(
                f"the VMI was stopped in phase {phase} on request: a start request is not logged",
                last,
                i,
            )


def once_never_restarts(facts: Facts) -> Iterator[Finding]:
    if facts.strategy != "Once" and not _named(facts, "Once"):
        return
    being_deleted = bool(
        facts.vm and (facts.vm.body.get("metadata") or {}).get("deletionTimestamp")
    )
    for i in [*facts.by_message(*STOPS), *facts.by_message("vm.deleted")]:
        if being_deleted:
            yield explained("the VM itself is being deleted", i)
        else:
            yield violated("a Once VM's VMI is never stopped or deleted by the controller", i)
    starts = facts.by_message(*STARTS)
    for i in starts[:1]:
        yield explained("Once starts its VMI once", i)
    for i in starts[1:]:
        yield unverifiable(
            "Once starts again only if someone deleted the VMI; who deleted it is not in the "
            "evidence",
            i,
        )


def halted_never_creates(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message("vm.stop-halted"):
        yield explained("Halted stops any VMI; the line repeats while the VMI exists", i)
    for i in facts.by_message("vm.created"):
        strategy = _decided_strategy(facts, i)
        if strategy == "Halted":
            yield violated("a VMI was created while the VM's runStrategy was Halted", i)


def _decided_strategy(facts: Facts, index: int) -> str | None:
    reconcile = facts.reconcile_of(index)
    rows = reconcile.rows if reconcile else []
    named = [facts.rows[j].arg("strategy") for j in rows if facts.rows[j].arg("strategy")]
    return named[-1] if named else facts.strategy


def _named(facts: Facts, strategy: str) -> bool:
    return any(r.arg("strategy") == strategy for r in facts.rows if r.origin == "log")
