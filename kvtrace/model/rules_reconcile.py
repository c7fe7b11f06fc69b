"""Reconcile-shape checks: API calls, separate reconciles, expectations, re-enqueues.

Every stop branch returns right after ``stopVMI`` (vm.go:1016, 1065, 1100), a create needs the
VMI gone from the cache, and while a create or delete expectation is pending ``sync`` returns
before deciding (vm.go:3225): delete and create never share a reconcile. Expectations
(vm.go:1333, 2012) keep a second create from happening before the first is observed.

The checks that follow from the code's shape alone (a call has its decision line, a failure its
re-enqueue) can only be contradicted by a lost, duplicated or foreign line or by another binary:
their findings say so, and stay open questions rather than violations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kvtrace.model.facts import Facts
from kvtrace.model.reconciles import CLOSING, START_DECISIONS, STOP_DECISIONS
from kvtrace.model.verdicts import Finding, explained, inconsistent, unverifiable, violated

DECISIONS_FOR = {"vm.created": START_DECISIONS, "vm.deleted": STOP_DECISIONS}
COLLISION = "already exists"
VMI_COLLISION = re.compile(r'virtualmachineinstances\.kubevirt\.io "[^"]*" already exists')
REVISION_COLLISION = re.compile(r'controllerrevisions\.apps "[^"]*" already exists')
# A failed start is retried by the work queue within milliseconds; the revision it created may
# not be in the informer yet when the retry looks (vm.go:1726-1757).
RETRY_SECONDS = 10.0
# A start decision this soon after a delete line may be the same pass; at default verbosity the
# log cannot tell one pass from two.
SAME_PASS_SECONDS = 0.001
BOUNDARIES = frozenset({"vm.processing", *CLOSING})


def delete_and_create_apart(facts: Facts) -> Iterator[Finding]:
    for deleted in facts.by_message("vm.deleted"):
        row = facts.rows[deleted]
        start = facts.next_of_source(deleted, START_DECISIONS)
        if start is None:
            continue
        gap = facts.seconds(deleted, start)
        between = facts.source_rows_between(deleted, start, BOUNDARIES)
        if between:
            yield explained(
                "separate reconciles: a reconcile boundary lies between", deleted, start
            )
        elif gap >= SAME_PASS_SECONDS:
            yield explained(
                f"the start came {gap:.3f}s after the delete: the VMI was gone from the cache "
                "first, so a reconcile of its own",
                deleted,
                start,
            )
        elif facts.verbose(row.source):
            yield violated(
                "the VMI was deleted and its successor decided in one reconcile (no reconcile "
                "boundary between them at verbosity 4); v1.9.0's stop branches return before "
                "any start, so the binary is not the release's code, or the lines are foreign",
                deleted,
                start,
            )
        else:
            yield unverifiable(
                f"the start came {gap * 1e6:.0f} µs after the delete; a VMI already without "
                "finalizers is gone at once, so this can be the next reconcile — "
                "logVerbosity.virtController: 4 (Started processing vm, vm.go:372) would decide",
                deleted,
                start,
            )


def api_call_follows_decision(facts: Facts) -> Iterator[Finding]:
    for i in facts.by_message("vm.created", "vm.deleted"):
        row = facts.rows[i]
        decided = facts.decision_before(i, DECISIONS_FOR[row.message_id or ""])
        if decided is not None:
            yield explained(f"{facts.rows[decided].message_id} decided this call", decided, i)
        elif row.message_id == "vm.deleted" and facts.vm_deleted_at(i):
            yield explained("the VM was being deleted: stopVMI runs without a decision line", i)
        else:
            yield unverifiable(
                f"the decision line before this {row.message_id} call is not in the evidence: "
                "lost, or the excerpt starts mid-reconcile (the call is printed only after one, "
                "or on the VM's deletion path)",
                i,
            )
    yield from _repeated_decisions(facts)


def _repeated_decisions(facts: Facts) -> Iterator[Finding]:
    """Stop decisions without a delete repeat while the VMI terminates (vm.go:1005, 1134)."""
    for reconcile in facts.reconciles:
        ids = [facts.rows[i].message_id for i in reconcile.rows]
        stops = [i for i in reconcile.rows if facts.rows[i].message_id in STOP_DECISIONS]
        if stops and "vm.deleted" not in ids:
            yield explained("decision repeats while the VMI terminates; no delete is sent", *stops)


def one_delete_per_incarnation(facts: Facts) -> Iterator[Finding]:
    """Two successful deletes of one VMI leave one SuccessfulDelete Event naming its uid with
    count 2; two delete lines in what the evidence shows as one incarnation may only mean a
    create line is missing between them."""
    twice = facts.deleted_twice()
    by_incarnation: dict[str, list[int]] = {}
    for i in facts.by_message("vm.deleted"):
        by_incarnation.setdefault(facts.rows[i].incarnation or "?", []).append(i)
    for uid, rows in by_incarnation.items():
        if uid in twice:
            yield violated(
                f"VMI {uid[:8]} was deleted twice (SuccessfulDelete ×{twice[uid]})", *rows
            )
        elif len(rows) > 1:
            yield unverifiable(
                f"{len(rows)} deletes where the evidence shows one VMI: a create between them may "
                "be missing; each SuccessfulDelete Event names the VMI it deleted",
                *rows,
            )
        else:
            yield explained("one delete for this incarnation", *rows)


def no_duplicate_create(facts: Facts) -> Iterator[Finding]:
    """A create succeeds only once the previous VMI of this name is gone (same name), so only a
    collision shows a duplicate: the controller decided to create while a VMI existed."""
    creates = facts.by_message("vm.created")
    if creates:
        yield explained("each successful create found no VMI of this name in the API", *creates[:1])
    yield from _failed_creates(facts)


def _failed_creates(facts: Facts) -> Iterator[Finding]:
    """``Failed to create VirtualMachineInstance: /`` (vm.go:1336) is printed for every failed
    create — the ``/`` comes from the empty object the client returns on any error (client-go's
    gentype/type.go:205-216, vendored at v1.9.0) — and carries no reason; the cause is in the
    reconcile's ``Reconciling the VirtualMachine failed.`` line (vm.go:448) or, for the
    revision, in vm.go:1286's own reason."""
    reported: set[int] = set()
    for i in facts.by_message("vm.revision-failed", "vm.create-failed"):
        failure = facts.next_in_reconcile(i, "vm.reconcile-failed")
        reason = facts.rows[i].reason or (facts.rows[failure].reason if failure else "") or ""
        rows = (i,) if failure is None else (i, failure)
        reported.update(rows)
        yield _failed_create(facts, i, reason, rows)
    for i in facts.by_message("vm.reconcile-failed"):
        reason = facts.rows[i].reason or ""
        if i not in reported and "Failure while starting VMI" in reason and COLLISION in reason:
            yield _failed_create(facts, i, reason, (i,))


def _failed_create(facts: Facts, i: int, reason: str, rows: tuple[int, ...]) -> Finding:
    if VMI_COLLISION.search(reason):
        return _vmi_collision(facts, i, rows)
    if REVISION_COLLISION.search(reason):
        return _revision_collision(facts, i, rows)
    if reason:
        return explained(f"the create failed ({reason[:80]}); the work queue retries it", *rows)
    return unverifiable("the create failed; why is not in the evidence", i)


def _vmi_collision(facts: Facts, i: int, rows: tuple[int, ...]) -> Finding:
    """The same VM had created a VMI of this name before: the one in the way is its own, which
    its cache did not show (a lost informer event and an expired expectation)."""
    subject = facts.rows[i].subject
    own = facts.created_by(subject, before=i)
    if own is not None:
        return violated(
            "the VMI create collided with a VMI this VM had created: a stale-cache duplicate "
            "create",
            own,
            *rows,
        )
    if facts.older_vm_before(i):
        return explained(
            "the VMI of the previous VM of this name was still terminating: the new VM waits "
            "for it",
            *rows,
        )
    return unverifiable(
        "the VMI create collided with an existing VMI whose owner is not in the evidence (a VM "
        "of the same name deleted earlier?); its ownerReferences would decide",
        *rows,
    )


def _revision_collision(facts: Facts, i: int, rows: tuple[int, ...]) -> Finding:
    earlier = facts.last_before(i, *START_DECISIONS)
    previous = facts.last_before(earlier, *START_DECISIONS) if earlier is not None else None
    if previous is not None and facts.seconds(previous, i) <= RETRY_SECONDS:
        return explained(
            "a retried start: the revision its previous attempt created was not yet in the "
            "informer cache (vm.go:1726-1757)",
            previous,
            *rows,
        )
    return unverifiable(
        "the start revision already existed: an earlier attempt of this generation created it, "
        "outside the evidence, or the revision cache was stale",
        *rows,
    )


def failure_ends_in_requeue(facts: Facts) -> Iterator[Finding]:
    """``Execute`` logs ``re-enqueuing`` after every failed reconcile (vm.go:336-355)."""
    for i in facts.by_message("vm.reconcile-failed", "vm.status-failed"):
        requeue = facts.next_in_reconcile(i, "vm.requeue")
        if requeue is not None:
            yield explained("the failed reconcile was re-enqueued with backoff", i, requeue)
        elif facts.next_of_source(i, None) is None:
            yield unverifiable("the log ends right after the failure", i)
        else:
            yield inconsistent("a failed reconcile with no re-enqueuing line after it", i)
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
        rows = reconcile.rows
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
