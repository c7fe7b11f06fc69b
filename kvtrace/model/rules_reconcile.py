"""Reconcile-shape checks: API calls, separate reconciles, expectations, re-enqueues.

Every stop branch returns right after ``stopVMI`` (vm.go:1016, 1065, 1100), a create needs the
VMI gone from the cache, and while a create or delete expectation is pending ``sync`` returns
before deciding (vm.go:3225): delete and create never share a reconcile. Expectations
(vm.go:1333, 2012) keep a second create from happening before the first is observed.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from kvtrace.model.facts import Facts
from kvtrace.model.rules_strategy import STARTS, STOPS
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated

DECISIONS_FOR = {"vm.created": STARTS, "vm.deleted": STOPS}
COLLISION = "already exists"


def delete_and_create_apart(facts: Facts) -> Iterator[Finding]:
    for reconcile in facts.reconciles:
        ids = {facts.rows[i].message_id: i for i in reconcile.rows}
        if "vm.deleted" in ids and "vm.created" in ids:
            yield violated(
                "the VMI was deleted and its successor created in one reconcile",
                ids["vm.deleted"],
                ids["vm.created"],
            )
        elif "vm.created" in ids:
            yield explained("the create ran in a reconcile of its own", ids["vm.created"])


def api_call_follows_decision(facts: Facts) -> Iterator[Finding]:
    vm_deleting = bool(facts.vm and (facts.vm.body.get("metadata") or {}).get("deletionTimestamp"))
    for i in facts.by_message("vm.created", "vm.deleted"):
        row = facts.rows[i]
        reconcile = facts.reconcile_of(i)
        decided = [
            j
            for j in (reconcile.rows if reconcile else [])
            if j < i and facts.rows[j].message_id in DECISIONS_FOR[row.message_id or ""]
        ]
        if decided:
            yield explained(
                f"{facts.rows[decided[-1]].message_id} decided this call", decided[-1], i
            )
        elif row.message_id == "vm.deleted" and vm_deleting:
            yield explained("the VM is being deleted: stopVMI runs without a decision line", i)
        else:
            yield violated(f"{row.message_id} with no decision line in its reconcile", i)
    yield from _repeated_decisions(facts)


def _repeated_decisions(facts: Facts) -> Iterator[Finding]:
    """Stop decisions without a delete repeat while the VMI terminates (vm.go:1005, 1134)."""
    for reconcile in facts.reconciles:
        ids = [facts.rows[i].message_id for i in reconcile.rows]
        stops = [i for i in reconcile.rows if facts.rows[i].message_id in STOPS]
        if stops and "vm.deleted" not in ids:
            yield explained("decision repeats while the VMI terminates; no delete is sent", *stops)


def one_delete_per_incarnation(facts: Facts) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for i in facts.by_message("vm.deleted"):
        # without a known uid, the VMI between two creates is one incarnation
        key = facts.rows[i].incarnation or f"after-create-{facts.count_before(i, 'vm.created')}"
        if key in seen:
            yield violated("a second delete for the same VMI incarnation", seen[key], i)
        else:
            seen[key] = i
            yield explained("one delete for this incarnation", i)


def no_duplicate_create(facts: Facts) -> Iterator[Finding]:
    creates = facts.by_message("vm.created")
    for before, after in pairwise(creates):
        first, second = facts.rows[before].incarnation, facts.rows[after].incarnation
        if facts.between(before, after, "vm.deleted"):
            yield explained("the previous VMI was deleted before this create", after)
        elif _alive(facts, first) and first != second:
            yield violated(
                f"a second VMI create while VMI {str(first)[:8]} still existed (it was never "
                "deleted)",
                before,
                after,
            )
        elif first and second and first != second and not second.startswith("unseen-"):
            yield explained(
                "a new VMI: the previous one vanished without a controller delete", after
            )
        elif first and first == second:
            yield violated("a second VMI create while the first VMI still existed", before, after)
        else:
            yield unverifiable(
                "two creates without a delete; the VMIs are not in the evidence", before, after
            )
    yield from _failed_creates(facts)
    if creates[:1]:
        yield explained("first create", creates[0])


def _failed_creates(facts: Facts) -> Iterator[Finding]:
    """A failed create is a duplicate only when the API said ``already exists``.

    ``Failed to create VirtualMachineInstance: /`` (vm.go:1336) is printed for every failed create
    — the ``/`` comes from the empty object the client returns on any error (client-go's
    gentype/type.go:205-216, vendored at v1.9.0) — and carries no reason; the cause is in the
    reconcile's ``Reconciling the VirtualMachine failed.`` line (vm.go:448) or, for the revision,
    in vm.go:1286's own reason.
    """
    reported: set[int] = set()
    for i in facts.by_message("vm.revision-failed", "vm.create-failed"):
        failure = facts.next_in_reconcile(i, "vm.reconcile-failed")
        reason = facts.rows[i].reason or (facts.rows[failure].reason if failure else "") or ""
        rows = (i,) if failure is None else (i, failure)
        reported.update(rows)
        if COLLISION in reason:
            yield violated(
                "create collided with an existing object: a stale-cache duplicate create", *rows
            )
        elif reason:
            yield explained(f"the create failed ({reason[:80]}); the work queue retries it", *rows)
        else:
            yield unverifiable("the create failed; why is not in the evidence", i)
    for i in facts.by_message("vm.reconcile-failed"):
        reason = facts.rows[i].reason or ""
        if i not in reported and "Failure while starting VMI" in reason and COLLISION in reason:
            yield violated("reconcile failed on an already existing VMI or revision", i)


def _alive(facts: Facts, uid: str | None) -> bool:
    """The VMI is in the evidence without a deletionTimestamp: it outlived every later line."""
    inc = facts.incarnation(uid)
    if inc is None or inc.vmi is None:
        return False
    return not (inc.vmi.body.get("metadata") or {}).get("deletionTimestamp")


def failure_ends_in_requeue(facts: Facts) -> Iterator[Finding]:
    """``Execute`` logs ``re-enqueuing`` after every failed reconcile (vm.go:336-355)."""
    for i in facts.by_message("vm.reconcile-failed", "vm.status-failed"):
        requeue = facts.next_in_reconcile(i, "vm.requeue")
        if requeue is not None:
            yield explained("the failed reconcile was re-enqueued with backoff", i, requeue)
        elif i == max(facts.actions(), default=-1):
            yield unverifiable("the log ends right after the failure", i)
        else:
            yield violated("a failed reconcile with no re-enqueuing line", i)
    yield from _retries(facts)


# seconds; workqueue per-key exponential limiter (vm.go:153-156 at v1.9.0 uses client-go's
# DefaultTypedControllerRateLimiter, default_rate_limiters.go:50-56, 116-135)
LIMITER_BASE = 0.005
LIMITER_CAP = 1000.0
TIMER_SLACK = 0.001  # the queue's delaying timer and the log's µs stamps


def limiter_delay(failures: int) -> float:
    """The per-key delay before retry ``failures`` (≥ 1): ``5 ms·2^(n-1)``, at most 1000 s
    (``DefaultTypedControllerRateLimiter``, vm.go:153-156; the 10 qps bucket only adds)."""
    return LIMITER_CAP if failures > 30 else min(LIMITER_BASE * 2 ** (failures - 1), LIMITER_CAP)


def _retries(facts: Facts) -> Iterator[Finding]:
    """Explain when a re-enqueued VM key came back: the n-th consecutive failure waits
    ``limiter_delay(n)``; sooner means an informer event re-added the key (plain ``Add`` bypasses
    the limiter) or a reconcile that printed nothing succeeded and reset the count (vm.go:352).
    Each replica's queue counts on its own."""
    failed: dict[str, tuple[int, int]] = {}  # replica → (consecutive failures, requeue row)
    for reconcile in facts.reconciles:
        rows = [i for i in reconcile.rows if (facts.rows[i].pos or "").startswith("vm.go:")]
        if not rows:
            continue
        before = failed.pop(reconcile.replica, None)
        if before is not None:
            yield _retry(facts, *before, rows[0])
        if facts.rows[rows[-1]].message_id == "vm.requeue":
            failed[reconcile.replica] = ((before[0] if before else 0) + 1, rows[-1])


def _retry(facts: Facts, failures: int, requeued: int, retried: int) -> Finding:
    gap = facts.seconds(requeued, retried)
    delay = limiter_delay(failures)
    if gap + TIMER_SLACK >= delay:
        why = f"retried {gap:.3f}s after failure #{failures}: the work queue waits {delay:g}s"
    else:
        why = (
            f"retried {gap:.3f}s after failure #{failures}, before the limiter's {delay:g}s: an "
            "informer event re-added the key, or a silent success reset the count"
        )
    return explained(why, requeued, retried)
