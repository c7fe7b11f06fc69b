"""kvsim's pool, VMIRS, snapshot and restore controllers against what v1.9.0's source does
(pkg/virt-controller/watch/pool/pool.go, watch/replicaset/replicaset.go,
pkg/storage/snapshot/{snapshot,source,util,restore}.go at v1.9.0): the names they give, the
lines they print at their v1.9.0 positions and levels, the order of their steps, the clusters
without them left as they were, and one output per seed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kvsim.bundle import PLURALS
from kvsim.cluster import KINDS_CAPTURED, Capture, Cluster
from kvsim.guest_agent import go_duration
from kvsim.histories import POOL_HISTORIES, pool_update, replicaset, snapshot_restore
from kvsim.history import T0

SEEDS = (1, 2, 3, 6)
NS = r"default/[a-z0-9-]+"
UID = r"[0-9a-f-]{36}"
DURATION = r"[0-9.]+(ns|µs|ms|s)"
# pos -> (level, message) of every line these controllers print at default verbosity on the
# paths kvsim takes, from the v1.9.0 source
CATALOG: dict[str, tuple[str, str]] = {
    "pool.go:419": ("info", r"Starting pool controller\."),
    "pool.go:926": ("info", r"Adding \d+ VMs to pool"),
    "pool.go:961": ("error", rf"Failed to add vm {NS} to pool"),
    "pool.go:966": ("info", rf"Adding vm {NS} to pool"),
    "pool.go:661": ("info", r"Removing \d+ VMs from pool"),
    "pool.go:687": ("info", rf"Deleted vm {NS} from pool"),
    "pool.go:1819": ("info", rf"Removing VM {NS} from pool"),
    "pool.go:1097": ("error", rf"Error encountered during update of vm {NS} in pool"),
    "pool.go:1102": ("info", rf"Updated vm {NS} in pool"),
    "pool.go:1252": ("info", rf"Marking vmi {NS} for update due to missing revision label"),
    "pool.go:1281": ("info", rf"Marking vmi {NS} for update due to missing revision"),
    "pool.go:1297": ("info", rf"Marking vmi {NS} for update due out of sync spec"),
    "pool.go:1315": ("info", rf"Marking vm {NS} for update due to missing revision labels "),
    "pool.go:1323": ("info", rf"Marking vm {NS} for update due to missing revision"),
    "pool.go:1328": ("info", rf"Marking vm {NS} for update due out of date spec"),
    "pool.go:1454": ("info", rf"reenqueuing pool {NS}"),
    "pool.go:1550": ("error", r"Selector does not match template labels, will not re-enqueue\."),
    "pool.go:1599": ("error", r"Scaling the pool failed\."),
    "pool.go:1636": ("info", rf"Proactive update of VM {NS} by deleting outdated VMI"),
    "pool.go:1670": ("info", rf"Proactive update of VM {NS} in pool via label patch"),
    "replicaset.go:119": ("info", r"Starting VirtualMachineInstanceReplicaSet controller\."),
    "replicaset.go:145": ("info", rf"re-enqueuing VirtualMachineInstanceReplicaSet {NS}"),
    "replicaset.go:237": ("error", r"Scaling the replicaset failed\."),
    "replicaset.go:242": ("error", r"Updating the replicaset status failed\."),
    "source.go:202": ("info", r"Adding VM snapshot finalizer to [a-z0-9-]+"),
    "source.go:452": (
        "warning",
        r"Guest agent does not exist and VM [a-z0-9-]+ is running\. Snapshoting without freezing "
        r"FS\. This can result in inconsistent snapshot!",
    ),
    "source.go:463": ("error", r"Failed freezing vm [a-z0-9-]+: .+"),
    "source.go:481": ("error", r"Failed unfreezing vm [a-z0-9-]+: .+"),
    "util.go:44": ("info", rf"(Freezing|Unfreezing) vmi [a-z0-9-]+ took {DURATION}"),
    "snapshot.go:535": (
        "info",
        rf"Attempting to create VolumeSnapshot vmsnapshot-{UID}-volume-[a-z0-9-]+",
    ),
    "snapshot_base.go:235": ("info", r"Starting snapshot controller\."),
    "restore_base.go:121": ("info", r"Starting restore controller\."),
    "restore.go:202": ("info", r"Updating VirtualMachineRestore"),
    "restore.go:655": ("info", rf"Stopping VM before restore \[{NS}\]"),
}
OWN_FILES = ("pool.go", "replicaset.go", "source.go", "util.go", "snapshot.go", "restore.go")
WITH_OBJECT = {  # the lines that attach an object, and its name
    "pool.go:926": "web",
    "pool.go:966": "web",
    "pool.go:1102": "web",
    "pool.go:1328": "web",
    "pool.go:1636": "web",
    "restore.go:202": "vm-0-restore",
}


def _lines(capture: Capture) -> list[dict[str, Any]]:
    out = []
    for log, _ in capture.logs:
        for line in sorted(log.lines, key=lambda line: line.at):
            if line.body.startswith("{"):
                out.append(json.loads(line.body))
    return out


def _own(capture: Capture) -> list[dict[str, Any]]:
    return [f for f in _lines(capture) if f.get("pos", "").split(":")[0] in OWN_FILES]


def _events(capture: Capture, kind: str) -> list[dict[str, Any]]:
    return [e for e in capture.objects["Event"] if e["involvedObject"]["kind"] == kind]


@pytest.fixture(scope="module")
def captures() -> dict[tuple[str, int], Capture]:
    return {
        (name, seed): make(seed).capture()
        for name, make in POOL_HISTORIES.items()
        for seed in SEEDS
    }


def test_every_line_is_a_v190_line_at_its_position(
    captures: dict[tuple[str, int], Capture],
) -> None:
    for capture in captures.values():
        for fields in _own(capture):
            level, pattern = CATALOG[fields["pos"]]
            assert fields["level"] == level, fields
            assert re.fullmatch(pattern, fields["msg"]), fields
            if fields["pos"] in WITH_OBJECT:
                assert fields["name"] == WITH_OBJECT[fields["pos"]], fields
            if fields["pos"] == "pool.go:1297":  # log.Log.Infof: no object
                assert "name" not in fields


def test_scaling_failures_carry_no_reason(captures: dict[tuple[str, int], Capture]) -> None:
    """pool.go:1599 and replicaset.go:237 pass an unrelated nil error to Reason."""
    for capture in captures.values():
        for fields in _own(capture):
            if fields["pos"] in ("pool.go:1599", "replicaset.go:237"):
                assert "reason" not in fields


# --- the pool ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_pool_vms_are_named_and_owned_as_v190_creates_them(seed: int) -> None:
    capture = pool_update(seed).capture()
    pool = capture.objects["VirtualMachinePool"][0]
    vms = capture.objects["VirtualMachine"]
    size = pool["spec"]["replicas"]
    assert sorted(vm["metadata"]["name"] for vm in vms) == [f"web-{i}" for i in range(size)]
    revision = f"web-{pool['metadata']['generation']}"
    for vm in vms:
        meta = vm["metadata"]
        index = meta["name"].rsplit("-", 1)[1]
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "pool.kubevirt.io/v1beta1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "VirtualMachinePool",
                "name": "web",
                "uid": pool["metadata"]["uid"],
            }
        ]
        assert "pool.kubevirt.io/finalizer" in meta["finalizers"]
        assert meta["labels"]["kubevirt.io/vm-pool-revision-name"] == revision
        template = vm["spec"]["template"]
        assert template["metadata"]["labels"]["kubevirt.io/vm-pool-revision-name"] == revision
        assert vm["spec"]["dataVolumeTemplates"][0]["metadata"]["name"] == f"web-rootdisk-{index}"
        claim = template["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
        assert claim == f"web-rootdisk-{index}"
    assert pool["metadata"]["finalizers"] == ["pool.kubevirt.io/finalizer"]
    revisions = [
        cr for cr in capture.objects["ControllerRevision"] if cr["metadata"]["name"] == revision
    ]
    assert revisions and revisions[0]["revision"] == pool["metadata"]["generation"]


@pytest.mark.parametrize("seed", SEEDS)
def test_proactive_update_restarts_every_vm_from_the_new_template(seed: int) -> None:
    """Spec update (1102), then the outdated VMI deleted (1297, 1636), then the VM controller
    starts a VMI from the new template (vm.go:1341)."""
    capture = pool_update(seed).capture()
    pool = capture.objects["VirtualMachinePool"][0]
    memory = pool["spec"]["virtualMachineTemplate"]["spec"]["template"]["spec"]["domain"]["memory"]
    lines = _lines(capture)
    for vm in capture.objects["VirtualMachine"]:
        name = vm["metadata"]["name"]
        key = f"default/{name}"
        updated = _first(lines, "pool.go:1102", f"Updated vm {key} in pool")
        marked = _first(lines, "pool.go:1297", f"Marking vmi {key} for update due out of sync spec")
        deleted = _first(
            lines, "pool.go:1636", f"Proactive update of VM {key} by deleting outdated VMI"
        )
        restarted = [
            i
            for i, f in enumerate(lines)
            if f["pos"] == "vm.go:1341" and f.get("name") == name and i > deleted
        ]
        assert updated < marked < deleted and restarted
        vmi = next(
            v for v in capture.objects["VirtualMachineInstance"] if v["metadata"]["name"] == name
        )
        assert vmi["spec"]["domain"]["memory"]["guest"] == memory["guest"]
        assert (
            vmi["metadata"]["labels"]["kubevirt.io/vm-pool-revision-name"]
            == f"web-{pool['metadata']['generation']}"
        )
    messages = {(e["reason"], e["message"]) for e in _events(capture, "VirtualMachinePool")}
    for vm in capture.objects["VirtualMachine"]:
        key = f"default/{vm['metadata']['name']}"
        assert ("SuccessfulCreate", f"Created VM {key}") in messages
        assert ("SuccessfulUpdate", f"Updated VM {key}") in messages
        assert ("SuccessfulDelete", f"Successfully updated resource {key}") in messages
    sources = {e["source"]["component"] for e in _events(capture, "VirtualMachinePool")}
    assert sources == {"virtualmachinepool-controller"}


def _first(lines: list[dict[str, Any]], pos: str, msg: str) -> int:
    return next(i for i, f in enumerate(lines) if f["pos"] == pos and f["msg"] == msg)


def test_the_pool_prunes_the_revision_no_vm_uses(captures: dict[tuple[str, int], Capture]) -> None:
    for seed in SEEDS:
        capture = captures[("pool-update", seed)]
        generation = capture.objects["VirtualMachinePool"][0]["metadata"]["generation"]
        pool_revisions = [
            cr["metadata"]["name"]
            for cr in capture.objects["ControllerRevision"]
            if cr["metadata"]["ownerReferences"][0]["kind"] == "VirtualMachinePool"
        ]
        assert pool_revisions == [f"web-{generation}"]


# --- the replica set -----------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_replicaset_creates_and_deletes_vmis_to_match_replicas(seed: int) -> None:
    capture = replicaset(seed).capture()
    rs = capture.objects["VirtualMachineInstanceReplicaSet"][0]
    vmis = [
        v
        for v in capture.objects["VirtualMachineInstance"]
        if not v["metadata"].get("deletionTimestamp")
    ]
    assert len(vmis) == rs["spec"]["replicas"] == rs["status"]["replicas"]
    for vmi in vmis:  # generateName = the set's name, verbatim: no dash
        assert re.fullmatch(r"batch[bcdfghjklmnpqrstvwxz2456789]{5}", vmi["metadata"]["name"])
        assert vmi["metadata"]["ownerReferences"][0]["kind"] == "VirtualMachineInstanceReplicaSet"
    events = _events(capture, "VirtualMachineInstanceReplicaSet")
    created = [e for e in events if e["reason"] == "SuccessfulCreate"]
    deleted = [e for e in events if e["reason"] == "SuccessfulDelete"]
    assert all(
        re.fullmatch(
            r"Started the virtual machine by creating the new virtual machine instance batch\w{5}",
            e["message"],
        )
        for e in created
    )
    assert all(
        re.fullmatch(
            rf"Stopped the virtual machine by deleting the virtual machine instance {UID}",
            e["message"],
        )
        for e in deleted
    )
    scaled = [a for a in capture.actions if a.what.startswith("kubectl scale")]
    up = int(scaled[0].what.rsplit("=", 1)[1])
    assert len(created) == up and len(deleted) == up - rs["spec"]["replicas"]
    assert {e["source"]["component"] for e in events} == {"virtualmachinereplicaset-controller"}


# --- snapshot and restore ------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_online_snapshot_locks_freezes_and_unfreezes_in_order(seed: int) -> None:
    capture = snapshot_restore(seed).capture()
    lines = [f["msg"] for f in _own(capture) if f["pos"] != "restore.go:202"]
    steps = [
        "Adding VM snapshot finalizer to vm-0",
        "Freezing vmi vm-0 took",
        "Attempting to create VolumeSnapshot vmsnapshot-",
        "Unfreezing vmi vm-0 took",
    ]
    found = [next(i for i, m in enumerate(lines) if m.startswith(step)) for step in steps]
    assert found == sorted(found)
    snapshot = capture.objects["VirtualMachineSnapshot"][0]
    assert snapshot["status"]["phase"] == "Succeeded" and snapshot["status"]["readyToUse"]
    assert snapshot["status"]["indications"] == ["GuestAgent", "Online"]
    vm = capture.objects["VirtualMachine"][0]
    assert "snapshot.kubevirt.io/snapshot-source-protection" not in vm["metadata"]["finalizers"]
    assert "snapshotInProgress" not in vm["status"]
    reasons = {e["reason"] for e in _events(capture, "VirtualMachineSnapshot")}
    assert reasons == {"SuccessfulVirtualMachineSnapshotContentCreate"}


@pytest.mark.parametrize("seed", SEEDS)
def test_restore_waits_for_the_vm_to_stop_then_restores_it(seed: int) -> None:
    capture = snapshot_restore(seed).capture()
    restore = capture.objects["VirtualMachineRestore"][0]
    assert restore["status"]["complete"]
    vm = capture.objects["VirtualMachine"][0]
    mark = f"vm-0-restore-{restore['metadata']['uid']}"
    assert vm["metadata"]["annotations"]["restore.kubevirt.io/lastRestoreUID"] == mark
    claim = vm["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
    assert claim == f"restore-{restore['metadata']['uid']}-rootdisk"
    assert "restoreInProgress" not in vm["status"]
    events = _events(capture, "VirtualMachineRestore")
    stop = next(a.at for a in capture.actions if a.what == "virtctl stop")
    created = next(a.at for a in capture.actions if a.what == "create vmrestore")
    waited = [e for e in events if e["reason"] == "RestoreTargetNotReady"]
    assert bool(waited) == (created < stop)
    assert {e["reason"] for e in events} - {"RestoreTargetNotReady"} == {
        "VirtualMachineRestoreComplete"
    }


def test_restores_while_running_and_after_a_stop_are_both_drawn() -> None:
    orders = set()
    for seed in SEEDS:
        actions = snapshot_restore(seed).cluster
        actions.run(T0 + 3600 * 10**6)
        whats = [a.what for a in actions.actions]
        orders.add(whats.index("virtctl stop") < whats.index("create vmrestore"))
    assert orders == {True, False}


def test_stop_target_policy_stops_the_vm_first() -> None:
    """StopTarget: ``Stopping VM before restore`` (restore.go:655) and the VM stop subresource."""
    cluster = Cluster("stop-target", T0, replicas_count=1, snapshots=True)
    cluster.create_vm(T0 + 20 * 10**6, "vm-0")
    cluster.snapshot_vm(T0 + 120 * 10**6, "snap", "vm-0")
    cluster.restore_vm(T0 + 240 * 10**6, "restore", "vm-0", "snap", policy="StopTarget")
    capture = cluster.capture(T0 + 600 * 10**6)
    stops = [f for f in _own(capture) if f["pos"] == "restore.go:655"]
    assert stops and stops[0]["msg"] == "Stopping VM before restore [default/vm-0]"
    assert "name" not in stops[0]
    assert capture.objects["VirtualMachine"][0]["spec"]["runStrategy"] == "Halted"
    assert capture.objects["VirtualMachineRestore"][0]["status"]["complete"]


# --- the flags, the capture, determinism ---------------------------------------------------
def test_clusters_without_the_flags_capture_none_of_the_new_kinds() -> None:
    capture = Cluster("plain", T0, replicas_count=1).capture(T0 + 30 * 10**6)
    new = {
        "VirtualMachinePool",
        "VirtualMachineInstanceReplicaSet",
        "VirtualMachineSnapshot",
        "VirtualMachineRestore",
    }
    assert not new & set(capture.objects)
    assert new <= set(KINDS_CAPTURED) and new <= set(PLURALS)
    assert PLURALS["VirtualMachinePool"] == "virtualmachinepools"
    assert PLURALS["VirtualMachineInstanceReplicaSet"] == "virtualmachineinstancereplicasets"
    assert PLURALS["VirtualMachineSnapshot"] == "virtualmachinesnapshots"
    assert PLURALS["VirtualMachineRestore"] == "virtualmachinerestores"


def test_the_new_kinds_are_captured_with_their_api_versions(
    captures: dict[tuple[str, int], Capture],
) -> None:
    versions = {
        "VirtualMachinePool": "pool.kubevirt.io/v1beta1",
        "VirtualMachineInstanceReplicaSet": "kubevirt.io/v1",
        "VirtualMachineSnapshot": "snapshot.kubevirt.io/v1beta1",
        "VirtualMachineRestore": "snapshot.kubevirt.io/v1beta1",
    }
    for capture in captures.values():
        for kind, version in versions.items():
            for obj in capture.objects.get(kind, []):
                assert obj["apiVersion"] == version


@pytest.mark.parametrize("name", sorted(POOL_HISTORIES))
def test_one_output_per_seed(name: str) -> None:
    first, second = (POOL_HISTORIES[name](4).capture() for _ in range(2))
    assert [log.render() for log, _ in first.logs] == [log.render() for log, _ in second.logs]
    assert json.dumps(first.objects, sort_keys=True) == json.dumps(second.objects, sort_keys=True)


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (999, "999ns"),
        (1_500, "1.5µs"),
        (86_982_999, "86.982999ms"),
        (1_250_000_000, "1.25s"),
        (2_000_000, "2ms"),
    ],
)
def test_go_duration(ns: int, text: str) -> None:
    assert go_duration(ns) == text


def test_pool_scale_in_deletes_vms_and_removes_their_finalizer() -> None:
    """scaleIn (pool.go:626-701): 661, then per VM the deletion, 1819 (obj VM), 687."""
    from kvsim.pool_vms import POOL

    cluster = Cluster("scale-in", T0, replicas_count=1, pools=True)
    cluster.create_pool(T0 + 20 * 10**6, "web", 3)
    cluster.scale(T0 + 200 * 10**6, POOL, "web", 1)
    capture = cluster.capture(T0 + 400 * 10**6)
    own = [f for f in _own(capture) if f["pos"] in ("pool.go:661", "pool.go:1819", "pool.go:687")]
    assert own[0]["pos"] == "pool.go:661" and own[0]["msg"] == "Removing 2 VMs from pool"
    gone = {f["msg"].split()[2] for f in own if f["pos"] == "pool.go:687"}
    assert len(gone) == 2
    for f in own[1:]:  # "Removing VM <key> from pool" / "Deleted vm <key> from pool"
        name = f["msg"].split()[2]
        assert name in gone
        if f["pos"] == "pool.go:1819":
            assert f["name"] == name.split("/")[1]  # Object(vm)
    left = [vm["metadata"]["name"] for vm in capture.objects["VirtualMachine"]]
    assert len(left) == 1 and f"default/{left[0]}" not in gone
    deleted = [
        e for e in _events(capture, "VirtualMachinePool") if e["reason"] == "SuccessfulDelete"
    ]
    assert all(
        re.fullmatch(rf"Deleted VM {NS} with uid {UID} from pool", e["message"]) for e in deleted
    )
    assert len(capture.objects["VirtualMachineInstance"]) == 1
