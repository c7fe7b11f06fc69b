"""Leader-only checks: only the replica holding the Lease runs the controllers (application.go:604,
614 at v1.9.0). Evidence: klog lease lines, ``STARTING controllers``, and
``leaderelection lost`` at the end of a previous container's log."""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.model.facts import Facts
from kvtrace.model.leader_epochs import STARTS, leader_at, replica_of, usurper
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated


def leader_only(facts: Facts) -> Iterator[Finding]:
    """A container that logged its start (``attempting to acquire``) and then an action before
    any sign of leadership (the acquisition, ``STARTING controllers``, the controllers' start
    lines) acted without the lease: a container acquires once, and exits when it loses it. With
    no line of the container's start, the acquisition may be outside the excerpt or lost."""
    actions = facts.actions()
    if actions and not facts.epochs and not facts.by_message("leader.attempt"):
        yield unverifiable("no leader-election lines in the evidence", *actions)
        return
    for i in actions:
        row = facts.rows[i]
        replica = replica_of(row.source)
        if row.time is None:
            continue
        if replica in leader_at(facts.epochs, row.time.at):
            yield explained(f"{replica} held the lease", i)
            continue
        attempt = _started_without_lead(facts, i)
        if attempt is not None:
            yield violated(
                f"{replica} acted after it started ({facts.rows[attempt].what[:40]}…) and before "
                "any sign that it held the lease",
                attempt,
                i,
            )
        else:
            yield unverifiable(
                f"{replica}'s leadership at this time is not in the evidence (its acquisition "
                "may be lost or before the excerpt)",
                i,
            )


def _started_without_lead(facts: Facts, index: int) -> int | None:
    """The container's ``attempting to acquire`` line before ``index`` with no leadership line
    of the same container between them."""
    source = facts.rows[index].source
    attempts = [j for j in facts.by_message("leader.attempt") if j < index]
    attempt = next((j for j in reversed(attempts) if facts.rows[j].source == source), None)
    if attempt is None:
        return None
    led = [
        j
        for j in facts.by_message(*STARTS)
        if attempt < j < index and facts.rows[j].source == source
    ]
    if led or _mixed(facts, source, attempt):
        return None
    return attempt


def _mixed(facts: Facts, source: str, attempt: int) -> bool:
    """Whether the source led before ``attempt`` without losing the lease in between: one
    container attempts once, at start, and after acquiring stops only by losing and exiting
    (application.go:1171), so such an attempt is another container's line in the same stream
    (logs of several pods concatenated on stdin), and leadership cannot be told apart."""
    led = [j for j in facts.by_message(*STARTS) if j < attempt and facts.rows[j].source == source]
    if not led:
        return False
    lost = facts.by_message("leader.lost", "leader.renew-failed")
    return not any(led[-1] < j < attempt and facts.rows[j].source == source for j in lost)


def no_split_brain(facts: Facts) -> Iterator[Finding]:
    """A replica acting after another replica acquired the lease from it, before its own loss
    of the lease shows, believed it still led: client-go does not fence a deposed leader, so a
    stalled leader that resumes acts on a stale view (leaderelection.go:278-299). In a clean
    hand-over the old leader gives up within the renew deadline (10 s) and exits before any
    standby can acquire (15 s after the last renewal it saw)."""
    for i in facts.actions():
        row = facts.rows[i]
        if row.time is None:
            continue
        replica = replica_of(row.source)
        taker = usurper(facts.epochs, replica, row.time.at)
        if taker is not None:
            acquired = taker.rows[0] if taker.rows else None
            evidence = [facts.rows.index(acquired)] if acquired in facts.rows else []
            yield violated(
                f"{replica} acted after {taker.replica} had acquired the lease from it: both "
                "believed they led (split brain)",
                *evidence,
                i,
            )
            return
    yield explained("no replica acted after another took the lease from it")
