"""Crash-loop backoff (vm.go:1477-1603 at v1.9.0; the 300 s cap is vm.go:132).

A VMI that ends (Succeeded or Failed) without ever reaching Running counts as a start failure:
the n-th consecutive one delays the next start by ``10·n²`` s plus up to 50 % jitter, capped at
300 s, counted from when the VM controller observes it (``retryAfterTimestamp``, whole seconds).

Every user request clears the backoff: virt-api removes ``status.startFailure`` with each start,
stop or restart request it patches in (pkg/virt-api/rest/lifecycle.go:626-628 at v1.9.0), and a
``virtctl stop`` then ``start`` of an Always VM passes through Halted, which clears it too
(vm.go:1537-1556). None of that prints a line at default verbosity, so a start that comes too
early is an open question, not a violation. Backoffs of a VM deleted and re-created under the
same name are its own: each VM uid is judged on its own lines.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.model.facts import FINAL, Facts
from kvtrace.model.verdicts import Finding, explained, inconsistent, unverifiable

MAX_DELAY = 300
TOLERANCE = 1.0  # retryAfterTimestamp and the comparison use whole seconds (vm.go:1558-1573)
CLEARED = (
    "unless a user's request cleared the backoff (virtctl start, or stop then start, removes "
    "status.startFailure and prints nothing at default verbosity); the API server's audit log "
    "would decide"
)


def minimum_delay(consecutive_failures: int) -> int:
    """The least ``calculateStartBackoffTime`` can return: jitter only adds (vm.go:1477-1504)."""
    count = max(consecutive_failures, 1)
    return min(max(MAX_DELAY // 30, 10) * count * count, MAX_DELAY)


def maximum_delay(consecutive_failures: int) -> int:
    base = minimum_delay(consecutive_failures)
    return min(base + base // 2, MAX_DELAY)


def start_failure_backoff(facts: Facts) -> Iterator[Finding]:
    streak = 0
    for start in facts.by_message("vm.start"):
        stop = _last_final_stop(facts, start)
        if stop is None or not _same_vm(facts, stop, start):
            streak = 0
            continue
        ran = _reached_running(facts, facts.rows[stop].incarnation)
        if ran is True:
            streak = 0
            yield explained("the VMI had reached Running: no start-failure backoff", stop, start)
            continue
        waited = facts.seconds(stop, start)
        if ran is None:
            yield from _unknown_run(facts, stop, start, waited)
            continue
        streak += 1
        least = minimum_delay(streak)
        if waited + TOLERANCE < least:
            yield unverifiable(
                f"start {waited:.1f}s after start failure #{streak}, before the backoff's "
                f"{least}s, {CLEARED}",
                stop,
                start,
            )
        else:
            yield explained(
                f"start {waited:.1f}s after start failure #{streak} "
                f"(backoff {least}–{maximum_delay(streak)}s)",
                stop,
                start,
            )


def _unknown_run(facts: Facts, stop: int, start: int, waited: float) -> Iterator[Finding]:
    delayed = facts.between(stop, start, "vm.backoff")
    if delayed:
        yield explained("the controller delayed this start for the backoff", *delayed, start)
    elif waited + TOLERANCE >= minimum_delay(1):
        yield explained(
            f"start {waited:.1f}s after the stop: no backoff could be pending", stop, start
        )
    else:
        uid = facts.rows[stop].incarnation
        which = f"VMI {uid[:8]}" if uid else "the previous VMI"
        yield unverifiable(
            f"whether {which} reached Running is not in the evidence; had it failed before "
            f"Running, a start {waited:.2f}s later would break the {minimum_delay(1)}s backoff",
            stop,
            start,
        )


def _same_vm(facts: Facts, a: int, b: int) -> bool:
    """Both lines are about one VM (uid), not a VM and its re-creation under the same name."""
    first, second = facts.rows[a].subject, facts.rows[b].subject
    return first is None or second is None or first == second


def _last_final_stop(facts: Facts, start: int) -> int | None:
    """The first stop decision for the VMI that ended before ``start``: the controller saw the
    final VMI there, and retryAfterTimestamp counts from it. That VMI is the one created last
    before ``start`` (its uid is often unknown once it is gone)."""
    created = facts.last_before(start, "vm.created")
    stops = facts.between(-1 if created is None else created, start, "vm.stop")
    return next((i for i in stops if facts.rows[i].arg("phase") in FINAL), None)


def _reached_running(facts: Facts, uid: str | None) -> bool | None:
    """From the VMI's phase timestamps, or virt-handler's ``Started`` Event, which outlives the
    VMI object by the Event TTL (an hour)."""
    inc = facts.incarnation(uid)
    if inc is None:
        return None
    if "Running" in inc.phases or inc.started:
        return True
    return False if inc.phases else None


def backoff_wait_honoured(facts: Facts) -> Iterator[Finding]:
    for delay in facts.by_message("vm.backoff"):
        seconds = int(facts.rows[delay].arg("seconds") or 0)
        later = facts.first_after(delay, "vm.start")
        if seconds > MAX_DELAY:
            yield inconsistent(f"a wait of {seconds}s exceeds the 300s cap", delay)
        elif later is None or not _same_vm(facts, delay, later):
            yield explained(f"start deferred {seconds}s", delay)
        elif facts.seconds(delay, later) + TOLERANCE < seconds:
            yield unverifiable(
                f"started {facts.seconds(delay, later):.1f}s after being told to wait {seconds}s, "
                f"{CLEARED}",
                delay,
                later,
            )
        else:
            yield explained(f"started after the announced {seconds}s wait", delay, later)
