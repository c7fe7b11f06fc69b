"""The fault-injection samples: each breaks exactly one model rule, every other sample none."""

from __future__ import annotations

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.verdicts import VIOLATION
from kvtrace.sources.bundle import open_bundle
from tests.conftest import SAMPLES

FAULTS = {
    "fault-duplicate-create": "KV-EX-01",
    "fault-rerun-after-succeeded": "KV-RS-03",
    "fault-delete-create-one-reconcile": "KV-RC-01",
    "fault-phase-regression": "KV-PH-01",
    "fault-wrong-revision-name": "KV-SV-01",
    "fault-backoff-violated": "KV-BO-01",
    "fault-non-leader-action": "KV-LD-01",
}
CLEAN = sorted(
    p.name
    for p in SAMPLES.iterdir()
    if (p / "README.md").exists() and not p.name.startswith("fault-")
)


def _violated(sample: str) -> set[str]:
    with open_bundle(SAMPLES / sample) as evidence:
        report = run_check(evidence, Selection(None))
    return {v.rule for vm in report.vms for v in vm.assessment.verdicts if v.status == VIOLATION}


def test_every_fault_sample_is_listed():
    on_disk = {p.name for p in SAMPLES.iterdir() if p.name.startswith("fault-")}
    assert on_disk == set(FAULTS)


@pytest.mark.parametrize(("sample", "rule"), sorted(FAULTS.items()))
def test_fault_sample_violates_exactly_its_rule(sample: str, rule: str):
    assert _violated(sample) == {rule}


@pytest.mark.parametrize("sample", CLEAN)
def test_sample_without_fault_has_no_violation(sample: str):
    assert CLEAN, "no sample without a fault"
    assert _violated(sample) == set()
