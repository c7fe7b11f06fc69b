"""The model against the simulator of v1.9.0's virt-controller (kvsim): no violation on any
history the controller can produce, and each injected fault trips its rule.

Legitimate histories mix every run strategy with virtctl start/stop/restart, strategy switches,
edits inside and outside the template, VM deletes and re-creates under the same name, guests
that crash, shut down or never start, webhook rejections, slow API calls, informer lag, replica
crashes and stalls. Each is checked as its capture was taken, or damaged on its way to the
operator: logs only, cut at a random point, lines lost at random, a log given twice.

CI runs ``KVTRACE_HISTORIES`` histories (default 160, seeded, about 40 s); run thousands by hand:
``KVTRACE_HISTORIES=3000 python -m pytest tests/test_model_simulated.py -q -s``.
"""

from __future__ import annotations

import os

import pytest

from kvsim.histories import FAULTS, legitimate, with_fault
from kvtrace.check.report import CheckReport
from tests.simulated import DAMAGE, check, evidence_for, violations

HISTORIES = int(os.environ.get("KVTRACE_HISTORIES", "160"))
FIRST_SEED = int(os.environ.get("KVTRACE_FIRST_SEED", "0"))

# The rule each fault must trip, and how sure the evidence can make it: "violation" when the
# evidence decides, "open" when a legitimate history prints the same (the rule then asks for the
# evidence that would decide).
EXPECTED = {
    "duplicate-create": ("KV-EX-01", "violation"),
    "delete-create-one-reconcile": ("KV-RC-01", "open"),
    "delete-create-one-reconcile-v4": ("KV-RC-01", "violation"),
    "rerun-after-succeeded": ("KV-RS-03", "open"),
    "backoff-broken": ("KV-BO-01", "open"),
    "non-leader-action": ("KV-LD-01", "violation"),
    "split-brain": ("KV-LD-02", "violation"),
    "phase-regression": ("KV-PH-01", "violation"),
    "wrong-revision": ("KV-SV-01", "violation"),
    "second-launcher-pod": ("KV-PO-01", "violation"),
}


def test_no_violation_on_any_legitimate_history(tmp_path):
    checked, vms, failures = 0, 0, []
    for seed in range(FIRST_SEED, FIRST_SEED + HISTORIES):
        damage = DAMAGE[seed % len(DAMAGE)]
        evidence = evidence_for(legitimate(seed), tmp_path / "bundle", damage, seed)
        report = check(evidence)
        checked += 1
        vms += len(report.vms) if report else 0
        failures += [(seed, damage, *v) for v in violations(report)]
    print(f"\n{checked} legitimate histories ({vms} VMs) checked: {len(failures)} violations")
    assert not failures, "\n".join(map(str, failures[:20]))


# Releases across the call-site catalog, with those where the code the model reads changed:
# v0.59.0 (the VM finalizer: before it the garbage collector deleted a deleted VM's VMI),
# v1.0.0 (the generation annotation), v1.2.0 (RerunOnFailure), v1.3.0 (Lease lock, stopVMI's
# early return).
OLDER_RELEASES = (
    *("v0.53.0", "v0.58.2", "v0.59.0", "v1.0.0", "v1.1.1"),
    *("v1.2.0", "v1.3.1", "v1.5.3", "v1.6.0", "v1.7.4"),
)
OLDER_HISTORIES = int(os.environ.get("KVTRACE_OLDER_HISTORIES", "6"))


@pytest.mark.parametrize("release", OLDER_RELEASES)
def test_no_violation_on_legitimate_histories_of_older_releases(tmp_path, release):
    """kvsim follows each release's code where it differs (kvsim.releases); judged against the
    release read from the logs alone or from the bundle, no legitimate history is a violation."""
    failures, vms = [], 0
    for seed in range(FIRST_SEED, FIRST_SEED + OLDER_HISTORIES):
        damage = DAMAGE[seed % len(DAMAGE)]
        history = legitimate(seed, release=release)
        report = check(evidence_for(history, tmp_path / f"{release}-{seed}", damage, seed))
        vms += len(report.vms) if report else 0
        failures += [(seed, damage, *v) for v in violations(report)]
        if report is not None:
            assert {v.release for vm in report.vms for v in vm.assessment.verdicts} <= {
                report.version.shown
            }
    assert vms and not failures, "\n".join(map(str, failures[:20]))


def _statuses_of(report: CheckReport | None, rule: str, vm: str) -> set[str]:
    if report is None:
        return set()
    return {
        v.status
        for checked in report.vms
        if f"{checked.key[0]}/{checked.key[1]}" == vm
        for v in checked.assessment.verdicts
        if v.rule == rule
    }


# Faults of a replica, not of one VM: two controllers acting at once break other rules on every
# VM they touch (double deletes, colliding creates), and that is the truth of it.
REPLICA_WIDE = {"non-leader-action", "split-brain"}
FAULT_SEEDS = max(3, HISTORIES // 40)


@pytest.mark.parametrize("fault", FAULTS)
def test_an_injected_fault_trips_its_rule(tmp_path, fault):
    rule, strength = EXPECTED[fault]
    wanted = {"violation"} if strength == "violation" else {"violation", "unverifiable"}
    missed, stray = [], []
    for seed in range(FIRST_SEED + 1, FIRST_SEED + 1 + FAULT_SEEDS):
        history = with_fault(seed, fault)
        report = check(evidence_for(history, tmp_path / "bundle", "none", seed))
        if not _statuses_of(report, rule, "default/vm-0") & wanted:
            missed.append((seed, _statuses_of(report, rule, "default/vm-0")))
        # the stale finalizer patch of the deleted VMI lands on its successor (KV-SV-02)
        allowed = {rule, *(("KV-SV-02",) if fault.startswith("delete-create") else ())}
        stray += [
            (seed, *v)
            for v in violations(report)
            if fault not in REPLICA_WIDE and not (v[0] == "default/vm-0" and v[1] in allowed)
        ]
    print(f"\n{fault}: {FAULT_SEEDS} histories with the fault, {len(missed)} missed it")
    assert not missed, f"{fault}: {rule} not {strength}: {missed}"
    assert not stray, f"{fault}: violations besides the fault's: {stray[:5]}"
