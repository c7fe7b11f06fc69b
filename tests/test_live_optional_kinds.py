"""`kvtrace collect` reads pools, VMI replica sets, snapshots, snapshot contents and restores.

The test API server serves kvsim's samples (sample-logs/snapshot-restore, pool-proactive-update)
over HTTPS to the real client, with exactly the roles of docs/rbac.yaml. A collected bundle must
give the same timeline as the sample; a cluster that does not serve one of these APIs (no
snapshot CRDs, an older KubeVirt) gives a complete bundle that names the absence; a cluster that
serves only v1alpha1 is read at v1alpha1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvtrace.sources.bundle import open_bundle
from tests.apiserver import ApiServer, load_roles
from tests.apiserver.fixture import RBAC, ROOT, bundle_files, kvtrace
from tests.test_live_collect import normalised

SNAPSHOTS = ROOT / "sample-logs" / "snapshot-restore"
POOL = ROOT / "sample-logs" / "pool-proactive-update"
SNAPSHOT_KINDS = (
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VirtualMachineRestore",
)


@pytest.fixture(params=[SNAPSHOTS, POOL], ids=["snapshot-restore", "pool-proactive-update"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiServer]:
    workdir = tmp_path / "apiserver"
    workdir.mkdir()
    with ApiServer(request.param, workdir) as server:
        server.restrict(load_roles(RBAC))
        yield server


def serve(base: Path, sample: Path) -> ApiServer:
    workdir = base / "apiserver"
    workdir.mkdir(parents=True)
    server = ApiServer(sample, workdir).start()
    server.restrict(load_roles(RBAC))
    return server


def sample_of(server: ApiServer) -> Path:
    return SNAPSHOTS if server.store.objects.get("virtualmachinesnapshots") else POOL


def vm_of(sample: Path) -> str:
    return "default/vm-0" if sample == SNAPSHOTS else "default/web-0"


def collect(capsys: pytest.CaptureFixture[str], server: ApiServer, target: Path, *args: str):
    return kvtrace(
        capsys, "collect", "--kubeconfig", str(server.kubeconfig), "-f", str(target), *args
    )


def timeline(capsys: pytest.CaptureFixture[str], vm: str, bundle: Path) -> dict[str, Any]:
    code, out, err = kvtrace(capsys, "timeline", vm, "-o", "json", "-q", "--bundle", str(bundle))
    assert code == 0, err
    return dict(json.loads(out))


def manifest_of(target: Path) -> dict[str, Any]:
    return dict(json.loads(bundle_files(target)["manifest.json"]))


def counts(manifest: dict[str, Any]) -> dict[str, int]:
    return {e["kind"]: e["count"] for e in manifest["collected"]}


def test_collected_bundle_gives_the_samples_timeline(served, tmp_path, capsys):
    sample = sample_of(served)
    target = tmp_path / "bundle"
    code, _, err = collect(capsys, served, target)
    assert (code, err) == (0, "")
    source = json.loads((sample / "manifest.json").read_text())
    # every object of these kinds is the VM's (a pool's own template revisions are not read)
    kinds = ("VirtualMachine", "VirtualMachineInstance", "VirtualMachinePool", *SNAPSHOT_KINDS)
    expected = {k: n for k, n in counts(source).items() if k in kinds}
    got = counts(manifest_of(target))
    assert {k: got[k] for k in expected} == expected
    collected, offline = (
        timeline(capsys, vm_of(sample), target),
        timeline(capsys, vm_of(sample), sample),
    )
    assert normalised(collected) == normalised(offline)
    groups = {r.path.split("/")[2] for r in served.requests if r.path.startswith("/apis/")}
    assert {"pool.kubevirt.io", "snapshot.kubevirt.io"} <= groups
    assert {r.method for r in served.requests} == {"GET"}  # read-only, these kinds too


def test_snapshot_sample_holds_what_the_round_trip_must_carry():
    """The round trip above proves something only if the sample has these objects."""
    source = json.loads((SNAPSHOTS / "manifest.json").read_text())
    assert all(counts(source)[kind] >= 1 for kind in SNAPSHOT_KINDS)
    assert counts(json.loads((POOL / "manifest.json").read_text()))["VirtualMachinePool"] == 1


def test_a_cluster_without_the_snapshot_api_gives_a_complete_bundle_naming_the_absence(
    tmp_path, capsys
):
    server = serve(tmp_path, SNAPSHOTS)
    try:
        server.unserve("snapshot.kubevirt.io")
        target = tmp_path / "bundle"
        code, out, err = collect(capsys, server, target)
    finally:
        server.stop()
    assert code == 0 and out.startswith(f"wrote bundle {target} (")
    assert "warning" not in err and "Traceback" not in err
    manifest = manifest_of(target)
    absent = [m for m in manifest["missing"] if m.get("notServed")]
    assert sorted(m["kind"] for m in absent) == sorted(SNAPSHOT_KINDS)
    assert all(m["reason"].startswith("not served by this cluster") for m in absent)
    assert all("v1beta1 or v1alpha1" in m["reason"] for m in absent)
    for kind in SNAPSHOT_KINDS:
        assert f"note: not collected: {kind}: not served by this cluster" in err
        assert kind not in counts(manifest)  # no objects/ file: nothing was read
    files = bundle_files(target)
    assert "objects/virtualmachinesnapshots.json" not in files
    assert counts(manifest)["VirtualMachinePool"] == 0  # the other kinds are still read
    # both versions were asked for, every answer was a 404, nothing else failed
    asked = [r for r in server.requests if "snapshot.kubevirt.io" in r.path]
    assert {r.path.split("/")[3] for r in asked} == {"v1beta1", "v1alpha1"}
    assert {r.status for r in asked} == {404}
    with open_bundle(target) as evidence:
        said = [m for m in evidence.missing if "not served by this cluster" in m]
        assert evidence.coverage == "full"  # an absent API is no gap in what was read
    assert sorted(m.split(" ", 1)[0] for m in said) == sorted(SNAPSHOT_KINDS)
    assert timeline(capsys, "default/vm-0", target)["items"]


def test_an_older_kubevirt_is_read_at_v1alpha1(tmp_path, capsys):
    server = serve(tmp_path, SNAPSHOTS)
    try:
        server.unserve("snapshot.kubevirt.io", "v1beta1")
        server.unserve("pool.kubevirt.io", "v1beta1")
        target = tmp_path / "bundle"
        code, _, err = collect(capsys, server, target)
    finally:
        server.stop()
    assert (code, err) == (0, "")
    files = bundle_files(target)
    snapshots = json.loads(files["objects/virtualmachinesnapshots.json"])["items"]
    assert snapshots and {s["apiVersion"] for s in snapshots} == {"snapshot.kubevirt.io/v1alpha1"}
    assert normalised(timeline(capsys, "default/vm-0", target)) == normalised(
        timeline(capsys, "default/vm-0", SNAPSHOTS)
    )


def test_vm_filter_keeps_the_pool_of_the_vm_and_the_snapshots_of_the_vm(tmp_path, capsys):
    server = serve(tmp_path, POOL)
    try:
        assert collect(capsys, server, tmp_path / "web-0", "--vm", "web-0")[0] == 0
        assert collect(capsys, server, tmp_path / "other", "--vm", "no-such-vm")[0] == 0
    finally:
        server.stop()
    assert counts(manifest_of(tmp_path / "web-0"))["VirtualMachinePool"] == 1
    assert counts(manifest_of(tmp_path / "other"))["VirtualMachinePool"] == 0
    server = serve(tmp_path / "s", SNAPSHOTS)
    try:
        assert collect(capsys, server, tmp_path / "vm-0", "--vm", "vm-0")[0] == 0
        assert collect(capsys, server, tmp_path / "vm-9", "--vm", "vm-9")[0] == 0
    finally:
        server.stop()
    assert all(counts(manifest_of(tmp_path / "vm-0"))[k] >= 1 for k in SNAPSHOT_KINDS)
    assert all(counts(manifest_of(tmp_path / "vm-9"))[k] == 0 for k in SNAPSHOT_KINDS)


def test_a_replica_sets_vmi_round_trips_and_keeps_its_replica_set(tmp_path, capsys):
    """kvsim's replicaset history served live: the VMIRS is collected (also with ``--vm`` of one
    of its VMIs, which it owns) and the VMI's own timeline is the bundle's."""
    from kvsim.bundle import write_bundle
    from kvsim.pool_histories import replicaset

    capture = replicaset(0).capture()
    source = write_bundle(capture, tmp_path / "source")
    name = sorted(v["metadata"]["name"] for v in capture.objects["VirtualMachineInstance"])[0]
    server = serve(tmp_path / "s", source)
    try:
        assert collect(capsys, server, tmp_path / "all")[0] == 0
        assert collect(capsys, server, tmp_path / "one", "--vm", name)[0] == 0
    finally:
        server.stop()
    assert counts(manifest_of(tmp_path / "all"))["VirtualMachineInstanceReplicaSet"] == 1
    one = counts(manifest_of(tmp_path / "one"))
    assert one["VirtualMachineInstanceReplicaSet"] == 1 and one["VirtualMachineInstance"] == 1
    vmi = f"default/{name}"
    expected = normalised(timeline(capsys, vmi, source))
    assert normalised(timeline(capsys, vmi, tmp_path / "all")) == expected
    assert normalised(timeline(capsys, vmi, tmp_path / "one")) == expected
    assert any(i["source"] == "Event/VirtualMachineInstanceReplicaSet" for i in expected["items"])
