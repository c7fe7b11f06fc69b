"""kvsim's workload updater (workload-updater.go at v1.9.0) and what kvtrace makes of it.

``workload_update(seed)``: KubeVirt is updated to a new virt-launcher image; the workload
updater migrates each running LiveMigratable VMI off the outdated launcher (even seeds), or
evicts each VMI's pod (odd seeds, the Evict method)."""

from __future__ import annotations

import pytest

from kvsim.migration_histories import NEW_LAUNCHER, workload_update
from kvsim.workload_updater import WORKLOAD_UPDATE_ANNOTATION
from tests.simulated import assessed, violated_rules

OLD_LAUNCHER = "quay.io/kubevirt/virt-launcher:v1.9.0"


def lines_at(capture, pos: str) -> list[str]:
    return [
        body
        for log, _ in capture.logs
        for body in log.bodies().splitlines()
        if f'"pos":"{pos}"' in body
    ]


@pytest.mark.parametrize("seed", [0, 2, 4])  # even seeds: the LiveMigrate method
def test_every_vmi_moves_to_the_new_launcher_by_a_workload_migration(seed):
    history = workload_update(seed)
    capture = history.capture()
    vmis = capture.objects["VirtualMachineInstance"]
    assert {v["metadata"]["name"] for v in vmis} == set(history.vms)
    for vmi in vmis:  # the VMI controller reports the new pod's image (lifecycle.go:846-858)
        assert vmi["status"]["launcherContainerImageVersion"] == NEW_LAUNCHER
        assert "kubevirt.io/outdatedLauncherImage" not in vmi["metadata"].get("labels", {})
    vmims = capture.objects["VirtualMachineInstanceMigration"]
    assert sorted(m["spec"]["vmiName"] for m in vmims) == sorted(history.vms)
    for vmim in vmims:  # workload-updater.go:563-588
        assert vmim["metadata"]["generateName"] == "kubevirt-workload-update-"
        assert vmim["metadata"]["annotations"][WORKLOAD_UPDATE_ANNOTATION] == ""
        assert vmim["spec"]["priority"] == "system-critical"
        assert vmim["status"]["phase"] == "Succeeded"
    assert len(lines_at(capture, "workload-updater.go:596")) == len(history.vms)
    kubevirt = capture.objects["KubeVirt"][0]
    assert kubevirt["status"]["outdatedVirtualMachineInstanceWorkloads"] == 0
    old = [
        p
        for p in capture.objects["Pod"]
        if p["metadata"]["name"].startswith("virt-launcher-")
        and p["spec"]["containers"][0]["image"] == OLD_LAUNCHER
    ]
    assert all(p["status"]["phase"] in ("Succeeded", "Failed") for p in old)


def test_without_an_update_nothing_is_migrated():
    """The same cluster, captured before the update (at T0 + 150..240 s): no VMI is outdated."""
    import dataclasses

    from kvsim.history import T0
    from kvsim.kernel import SECOND

    early = dataclasses.replace(workload_update(0), capture_at=T0 + 140 * SECOND)
    capture = early.capture()
    assert not capture.objects["VirtualMachineInstanceMigration"]
    assert not lines_at(capture, "workload-updater.go:596")
    for vmi in capture.objects["VirtualMachineInstance"]:
        assert vmi["status"]["launcherContainerImageVersion"] == OLD_LAUNCHER


@pytest.mark.parametrize("seed", [0, 2])
def test_the_timeline_names_the_workload_update(seed):
    history = workload_update(seed)
    capture = history.capture()
    for name in history.vms:
        timeline, assessment = assessed(capture, name)
        initiated = [r for r in timeline.rows if r.message_id == "workload.migrate"]
        assert len(initiated) == 1 and initiated[0].pos == "workload-updater.go:596"
        assert any(r.what == "migration created by workload update" for r in timeline.rows)
        assert not violated_rules(assessment), (seed, name)


@pytest.mark.parametrize("seed", [1, 3])
def test_an_evicted_vmi_ends_by_a_workload_update_and_the_others_are_evacuated(seed):
    """The Evict method (odd seeds): vm-0 (evictionStrategy None) loses its pod and its VM
    starts a new VMI; the webhook refuses the eviction of a LiveMigrate VMI and marks it, the
    updater logs the refusal (workload-updater.go:624) and the evacuation controller migrates
    it."""
    from kvtrace.timeline.endings import WORKLOAD_UPDATE, endings

    history = workload_update(seed)
    capture = history.capture()
    assert len(lines_at(capture, "workload-updater.go:628")) == 1
    timeline, assessment = assessed(capture, "vm-0")
    found = endings(timeline)
    assert len(found) >= 2 and found[0].cause == WORKLOAD_UPDATE, found
    assert "workload-updater.go:628" in found[0].detail
    assert not violated_rules(assessment)
    for name in history.vms[1:]:
        vmims = [
            m
            for m in capture.objects["VirtualMachineInstanceMigration"]
            if m["spec"]["vmiName"] == name
        ]
        assert [m["metadata"]["generateName"] for m in vmims] == ["kubevirt-evacuation-"]
        timeline, assessment = assessed(capture, name)
        refused = [r for r in timeline.rows if r.message_id == "workload.evict-failed"]
        assert refused and not violated_rules(assessment)
