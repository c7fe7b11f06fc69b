"""``kvtrace check`` over the simulator's histories gives the same report whichever way it reads
the lines: in this process with the full parser, or split into buckets whose workers read the
common lines with the fast reader. Rows, attribution, skip counts and verdicts are compared, on
clean logs and on logs damaged on their way to an operator (cut, lines lost, given twice)."""

from __future__ import annotations

from typing import Any

import pytest

from kvsim.histories import legitimate, with_fault
from kvtrace.check.report import CheckReport
from tests.simulated import DAMAGE, check, evidence_for

CASES = [
    (legitimate(5, vm_count=3), "none"),
    (legitimate(6, vm_count=2), "given-twice"),
    (legitimate(7, vm_count=2), "cut-and-lost"),
    (with_fault(8, "duplicate-create"), "logs-only"),
    (with_fault(9, "delete-create-one-reconcile"), "none"),
]


def _summary(report: CheckReport | None) -> Any:
    assert report is not None
    vms = [
        (
            vm.key,
            vm.strategy,
            vm.incarnations,
            vm.assessment.counts(),
            [v for v in vm.assessment.verdicts if v.status != "explained"],
            vm.refs,
            vm.creation_to_running,
        )
        for vm in report.vms
    ]
    sources = [(r.source_id, r.lines, dict(r.tally), r.rows) for r in report.reports]
    return vms, sources


@pytest.mark.parametrize(("history", "damage"), CASES, ids=lambda c: getattr(c, "seed", c))
def test_the_fast_partitioned_check_equals_the_full_one(tmp_path, monkeypatch, history, damage):
    import kvtrace.check.run as run

    assert damage in DAMAGE
    evidence = evidence_for(history, tmp_path / "bundle", damage, history.seed)
    here = _summary(check(evidence))
    monkeypatch.setattr(run, "PARTITION_MIN_BYTES", 1)
    split = _summary(check(evidence))
    assert split == here
    assert here[1] and sum(lines for _, lines, _, _ in here[1]) > 0


def _checked(evidence: Any, since: bool) -> CheckReport:
    from kvtrace.check.report import Selection
    from kvtrace.check.run import run_check
    from kvtrace.sources.opener import open_evidence

    bundle = str(evidence.root) if evidence.with_bundle else None
    with open_evidence(bundle, evidence.logs) as opened:
        return run_check(opened, Selection(None), since=since)


@pytest.mark.parametrize(
    ("history", "damage"), CASES[:3] + CASES[4:], ids=lambda c: getattr(c, "seed", c)
)
def test_check_since_in_the_workers_equals_the_check_in_process(
    tmp_path, monkeypatch, history, damage
):
    """``--since`` over a big log set runs in the workers, which keep no timeline but each
    VM's row ends: every window gives the VMs, verdicts and counts of the in-process check."""
    import kvtrace.check.run as run
    from kvtrace.check.report import last_row_time, since_moment

    evidence = evidence_for(history, tmp_path / "bundle", damage, history.seed)
    here = _checked(evidence, since=True)
    monkeypatch.setattr(run, "PARTITION_MIN_BYTES", 1)
    split = _checked(evidence, since=True)
    assert all(vm.timeline is None and vm.reach is not None for vm in split.vms)
    last = last_row_time(here)
    assert last is not None and last == last_row_time(split)
    first = min(
        vm.timeline.rows[0].time.at
        for vm in here.vms
        if vm.timeline and vm.timeline.rows and vm.timeline.rows[0].time
    )
    span = last - first
    shown = set()
    for part in (-0.1, 0.0, 0.3, 0.6, 0.9, 0.99, 1.0):
        moment = first + span * part
        windowed = _summary(since_moment(here, moment))
        assert _summary(since_moment(split, moment)) == windowed, part
        shown.add(len(windowed[0]))
    assert len(shown) > 1  # the windows chose differently: the comparison saw some choosing
