"""The shipped samples: each fault sample trips its rule (as a violation where the evidence
decides, as an open question where a legitimate history prints the same), every other sample
none."""

from __future__ import annotations

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.verdicts import UNVERIFIABLE, VIOLATION
from kvtrace.sources.bundle import open_bundle
from tests.conftest import SAMPLES

# sample → (rules violated, rules that must be open). Each entry says why when it is not just
# the injected fault's rule.
FAULTS = {
    "fault-duplicate-create": ({"KV-EX-01"}, set()),
    # a user's virtctl start after Succeeded prints the same lines: only the audit log decides
    "fault-rerun-after-succeeded": (set(), {"KV-RS-03"}),
    # the stale cache's finalizer patch of the deleted VMI (by name, tested only against the
    # finalizer list, vm.go:2306-2311) lands on its same-named successor: a consequence
    "fault-delete-create-one-reconcile": ({"KV-RC-01", "KV-SV-02"}, set()),
    "fault-phase-regression": ({"KV-PH-01"}, set()),
    "fault-wrong-revision-name": ({"KV-SV-01"}, set()),
    # a user's stop and start clears the backoff without a line: only the audit log decides
    "fault-backoff-violated": (set(), {"KV-BO-01"}),
    # the standby's VMI controller, running too, creates a second launcher pod: a consequence
    "fault-non-leader-action": ({"KV-LD-01", "KV-PO-01"}, set()),
    "leader-split-brain": ({"KV-LD-02"}, set()),
}
CLEAN = sorted(
    p.name
    for p in SAMPLES.iterdir()
    if (p / "README.md").exists() and p.name not in FAULTS and p.name != "overhead"
)


def _statuses(sample: str) -> tuple[set[str], set[str]]:
    with open_bundle(SAMPLES / sample) as evidence:
        report = run_check(evidence, Selection(None))
    verdicts = [v for vm in report.vms for v in vm.assessment.verdicts]
    return (
        {v.rule for v in verdicts if v.status == VIOLATION},
        {v.rule for v in verdicts if v.status == UNVERIFIABLE},
    )


def test_every_fault_sample_is_listed():
    on_disk = {p.name for p in SAMPLES.iterdir() if p.name.startswith("fault-")}
    assert on_disk <= set(FAULTS)


@pytest.mark.parametrize(("sample", "expected"), sorted(FAULTS.items()))
def test_fault_sample_trips_its_rule(sample: str, expected: tuple[set[str], set[str]]):
    violated, open_questions = _statuses(sample)
    wanted_violated, wanted_open = expected
    assert violated == wanted_violated
    assert wanted_open <= open_questions


@pytest.mark.parametrize("sample", CLEAN)
def test_sample_without_fault_has_no_violation(sample: str):
    assert CLEAN, "no sample without a fault"
    assert _statuses(sample)[0] == set()
