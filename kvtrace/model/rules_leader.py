"""Leader-only checks: only the replica holding the Lease runs the controllers (application.go:604,
614 at v1.9.0). Evidence: klog lease lines, ``STARTING controllers``, and
``leaderelection lost`` at the end of a previous container's log."""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.model.facts import Facts
from kvtrace.model.leader_epochs import (
    LEASE_SECONDS,
    leader_at,
    replica_of,
    replicas_with_lease_lines,
)
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated


def leader_only(facts: Facts) -> Iterator[Finding]:
    actions = facts.actions()
    if actions and not facts.epochs:
        yield unverifiable("no leader-election lines in the evidence", *actions)
        return
    with_lines = replicas_with_lease_lines(facts.rows)
    for i in actions:
        row = facts.rows[i]
        replica = replica_of(row.source)
        if row.time is None:
            continue
        if replica in leader_at(facts.epochs, row.time.at):
            yield explained(f"{replica} held the lease", i)
        elif replica in with_lines:
            yield violated(f"{replica} acted without holding the lease", i)
        else:
            yield unverifiable(f"{replica}'s log has no leader-election lines", i)


def no_split_brain(facts: Facts) -> Iterator[Finding]:
    """Actions of two replicas interleaved within one lease duration: both believed they led."""
    timed = [
        (row.time.at, replica_of(row.source), i)
        for i in facts.actions()
        if (row := facts.rows[i]).time is not None
    ]
    replicas = {r for _, r, _ in timed}
    if len(replicas) < 2:
        if timed:
            yield explained("one replica took every action", *(i for *_, i in timed[:1]))
        return
    for (t1, r1, i1), (_, r2, i2), (t3, r3, i3) in zip(timed, timed[1:], timed[2:], strict=False):
        if r1 == r3 != r2 and (t3 - t1).total_seconds() < LEASE_SECONDS:
            yield violated(f"{r1} and {r2} acted within {LEASE_SECONDS}s of each other", i1, i2, i3)
            return
    yield explained("replicas took turns, never interleaved")
