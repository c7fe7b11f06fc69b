"""The migration rules (kvtrace/model/rules_migration.py) on kvsim's migration, drain and
node-failure histories: no violation on what v1.9.0 does as designed, and each injected fault
caught by its rule — with the VMIM lane, the endings and the rows that carry them."""

from __future__ import annotations

import os

import pytest

from kvsim.migration_histories import (
    MIGRATION_FAULTS,
    drain,
    migrations,
    node_failure,
    with_migration_fault,
    workload_update,
)
from tests.simulated import assessed, check, evidence_for, statuses, violations

HISTORIES = int(os.environ.get("KVTRACE_MIGRATION_HISTORIES", "4"))
GENERATORS = {
    "migrations": migrations,
    "drain": drain,
    "node-failure": node_failure,
    "workload-update": workload_update,
}
EXPECTED = {
    "second-target-pod": "KV-MG-02",
    "node-change-without-migration": "KV-MG-04",
    "evacuate-forbidden": "KV-EV-01",
    "target-pod-left": "KV-MG-06",
}


@pytest.mark.parametrize("kind", GENERATORS)
def test_no_violation_on_legitimate_migration_histories(tmp_path, kind):
    failures, vms = [], 0
    for seed in range(HISTORIES):
        report = check(evidence_for(GENERATORS[kind](seed), tmp_path / f"{seed}", "none", seed))
        vms += len(report.vms) if report else 0
        failures += [(seed, *v) for v in violations(report)]
    assert vms and not failures, failures[:10]


@pytest.mark.parametrize("fault", MIGRATION_FAULTS)
def test_a_migration_fault_trips_its_rule(tmp_path, fault):
    rule = EXPECTED[fault]
    for seed in range(max(2, HISTORIES // 2)):
        report = check(
            evidence_for(with_migration_fault(seed, fault), tmp_path / f"{seed}", "none", seed)
        )
        found = violations(report)
        assert ("default/vm-0", rule) in {(vm, r) for vm, r, _ in found}, (seed, found)
        assert {r for vm, r, _ in found} <= {rule}, (seed, found)


def test_the_migration_lane_holds_every_phase_in_order():
    timeline, assessment = assessed(migrations(0).capture(), "vm-0")
    lanes: dict[str, list[str]] = {}
    for row in timeline.rows:
        if row.origin == "migration" and row.arg("index") is not None:
            lanes.setdefault(row.arg("migration") or "", []).append(row.arg("phase") or "")
    assert lanes, "the VM was migrated"
    for phases in lanes.values():
        assert phases[0] == "Pending" and phases[-1] in ("Succeeded", "Failed")
    assert statuses(assessment, "KV-MG-01") == {"explained"}


def test_a_node_failure_ends_the_incarnation_and_says_so():
    from kvtrace.timeline.endings import NODE_FAILURE, endings

    timeline, _ = assessed(node_failure(0).capture(), "vm-0")
    found = endings(timeline)
    assert found[0].cause == NODE_FAILURE and found[0].row is not None
    assert "unresponsive node" in timeline.rows[found[0].row].what
    assert len(found) >= 2, "the VM controller started a new VMI"


def test_check_reports_each_vms_migrations(tmp_path, capsys):
    """drain(seed): vm-0's first evacuation fails on the nodes, the next one succeeds."""
    import json

    from kvsim.bundle import write_bundle
    from tests.helpers import run_cli

    root = write_bundle(drain(0).capture(), tmp_path / "bundle")
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(root), "-o", "json")
    assert code == 0, err
    items = {i["name"]: i for i in json.loads(out)["items"]}
    vm0 = items["vm-0"]
    assert vm0["migrations"] >= 2 and vm0["migrationsFailed"] >= 1
    assert vm0["migrationP50"] is not None and vm0["migrationP95"] >= vm0["migrationP50"]
