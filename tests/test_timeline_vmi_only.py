"""A VMI with no VM (a VirtualMachineInstanceReplicaSet's) is a scope of its own: `timeline
ns/<vmi>` and `check` show it, with the replica set's create and delete Events (they name the
VMI by name and by uid, replicaset.go:290, 317), and the VM controller's rules (startVMI) do not
judge a VMI the VM controller never made.

kvsim's replicaset(seed): a replica set of 1-2 VMIs scaled up to 3-4, then down to 1-2."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kvsim import timefmt
from kvsim.bundle import write_bundle
from kvsim.kernel import SECOND
from kvsim.pool_histories import replicaset
from tests.helpers import run_cli
from tests.simulated import assessed, violated_rules

RS = "VirtualMachineInstanceReplicaSet"
STARTVMI_RULES = {"KV-SV-01", "KV-SV-02", "KV-SV-03", "KV-SV-04"}


def vmi_names(capture) -> list[str]:
    return sorted(v["metadata"]["name"] for v in capture.objects["VirtualMachineInstance"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_replica_set_vmi_has_a_timeline_with_its_creation(seed):
    capture = replicaset(seed).capture()
    assert vmi_names(capture), "the replica set keeps at least one VMI"
    for name in vmi_names(capture):
        timeline, assessment = assessed(capture, name)
        created = [
            r
            for r in timeline.rows
            if r.source == f"Event/{RS}" and r.what.endswith(f"virtual machine instance {name}")
        ]
        assert len(created) == 1, (name, [r.what for r in timeline.rows])
        assert not violated_rules(assessment), (seed, name)
        assert not {v.rule for v in assessment.verdicts} & STARTVMI_RULES
        assert any(r.what == "VMI created" for r in timeline.rows)


def test_the_replica_sets_delete_event_reaches_the_deleted_vmi():
    """Captured just after the scale-down: the deleted VMIs are still there, being deleted."""
    final = replicaset(0).capture()
    deletes = [
        e
        for e in final.objects["Event"]
        if e["involvedObject"]["kind"] == RS and e["reason"] == "SuccessfulDelete"
    ]
    assert deletes
    at = min(timefmt.from_iso(e["firstTimestamp"]) for e in deletes) + 2 * SECOND
    early = dataclasses.replace(replicaset(0), capture_at=at).capture()  # a fresh run
    doomed = [
        v
        for v in early.objects["VirtualMachineInstance"]
        if any(v["metadata"]["uid"] in e["message"] for e in deletes)
    ]
    assert doomed, "a deleted VMI is still in the capture"
    timeline, assessment = assessed(early, doomed[0]["metadata"]["name"])
    said = [r.what for r in timeline.rows if r.source == f"Event/{RS}"]
    assert any(doomed[0]["metadata"]["uid"] in what for what in said), said
    assert not violated_rules(assessment)


def test_check_lists_every_replica_set_vmi(tmp_path, capsys):
    capture = replicaset(1).capture()
    root = write_bundle(capture, tmp_path / "bundle")
    code, out, _ = run_cli(capsys, "check", "--bundle", str(root), "-o", "json")
    assert code == 0
    checked = sorted(item["name"] for item in json.loads(out)["items"])
    assert checked == vmi_names(capture)
