"""`kvtrace collect` and live mode against the test API server (real client, real HTTPS).

The round trip: the server serves sample-logs/always-restart; `collect` writes a bundle; `timeline`
on that bundle must equal `timeline` on the sample. What legitimately differs, and why:

- ``spec.source.origin``: the path given to --bundle (or "live cluster test");
- ``spec.capturedAt``: the sample's capture time vs the time `collect` ran;
- ``evidence``/``status.sources[].source`` of log rows: in an archive, paths carry the archive's
  top directory (``kvtrace-bundle-<time>/logs/...``); the rest of the path is the same.

Object rows cite objects (``VirtualMachine/default/testvm metadata.creationTimestamp``), not
files, so YAML in the sample vs JSON in the collected bundle makes no difference.
"""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from kvtrace.sources.live import api as live_api
from kvtrace.sources.live.progress import Progress
from tests.apiserver import ApiServer, load_roles
from tests.apiserver.fixture import RBAC, SOURCE, apiserver, bundle_files, kvtrace, waits
from tests.sample_names import leader_pod, log_file, objects, standby_pod

__all__ = ["apiserver", "waits"]  # fixtures used by name below

ARCHIVE_TOP = re.compile(r"^kvtrace-bundle-\d{8}T\d{6}/")


def timeline_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = kvtrace(capsys, "timeline", "default/testvm", "-o", "json", "-q", *args)
    assert code == 0, err
    return dict(json.loads(out))


def normalised(doc: dict[str, Any]) -> dict[str, Any]:
    """The timeline without what must differ between a source and its collected copy."""
    for item in doc["items"]:
        item["evidence"] = ARCHIVE_TOP.sub("", item["evidence"] or "")
    for source in doc["status"]["sources"]:
        source["source"] = ARCHIVE_TOP.sub("", source["source"])
    del doc["spec"]["source"]["origin"], doc["spec"]["capturedAt"]
    return doc


def collect(
    capsys: pytest.CaptureFixture[str], server: ApiServer, target: Path, *args: str
) -> tuple[int, str, str]:
    return kvtrace(
        capsys, "collect", "--kubeconfig", str(server.kubeconfig), "-f", str(target), *args
    )


def manifest_of(target: Path) -> dict[str, Any]:
    return dict(json.loads(bundle_files(target)["manifest.json"]))


def test_round_trip_timeline_equals_the_source_bundle(apiserver, tmp_path, capsys):
    target = tmp_path / "bundle.tar.gz"
    code, out, err = collect(capsys, apiserver, target)
    assert (code, err) == (0, "")
    assert out.startswith(f"wrote bundle {target} (")
    collected = timeline_json(capsys, "--bundle", str(target))
    source = timeline_json(capsys, "--bundle", str(SOURCE))
    assert collected["spec"]["capturedAt"] != source["spec"]["capturedAt"]
    assert any(ARCHIVE_TOP.match(i["evidence"] or "") for i in collected["items"])
    assert normalised(collected) == normalised(source)


def test_live_timeline_equals_the_source_bundle(apiserver, capsys):
    live = timeline_json(capsys, "--kubeconfig", str(apiserver.kubeconfig))
    source = timeline_json(capsys, "--bundle", str(SOURCE))
    assert live["spec"]["source"]["origin"] == "live cluster test"
    assert normalised(live) == normalised(source)


def test_live_check_equals_offline_check(apiserver, capsys):
    code_live, live, _ = kvtrace(
        capsys, "check", "-o", "json", "-q", "--kubeconfig", str(apiserver.kubeconfig)
    )
    code_offline, offline, _ = kvtrace(capsys, "check", "-o", "json", "--bundle", str(SOURCE))
    assert code_live == code_offline
    assert json.loads(live)["items"] == json.loads(offline)["items"]


def test_manifest_records_versions_scope_and_every_kind(apiserver, tmp_path, capsys):
    target = tmp_path / "bundle"
    assert collect(capsys, apiserver, target)[0] == 0
    manifest = manifest_of(target)
    source = json.loads((SOURCE / "manifest.json").read_text())
    assert manifest["kind"] == "BundleManifest" and manifest["formatVersion"] == 1
    assert (
        manifest["serverVersion"],
        manifest["kubevirtVersion"],
        manifest["kubevirtNamespace"],
    ) == ("v1.31.2", "v1.9.0", "kubevirt")
    assert manifest["scope"] == {"allNamespaces": False, "namespaces": ["default"], "vms": []}
    assert datetime.fromisoformat(manifest["capturedAt"].replace("Z", "+00:00")) <= datetime.now(
        timezone.utc
    )
    counts = {e["kind"]: e["count"] for e in manifest["collected"]}
    assert counts == {e["kind"]: e["count"] for e in source["collected"]} | {
        "VirtualMachineInstanceMigration": 0,
        "Endpoints": 0,
        "VirtualMachineInstanceReplicaSet": 0,
        "VirtualMachinePool": 0,
        "VirtualMachineSnapshot": 0,
        "VirtualMachineSnapshotContent": 0,
        "VirtualMachineRestore": 0,
    }
    assert manifest["collected"][0]["file"] == "objects/virtualmachines.json"
    by_file = sorted(source["logs"], key=lambda e: e["file"])
    assert sorted(manifest["logs"], key=lambda e: e["file"]) == by_file
    assert manifest["missing"] == []
    for entry in source["logs"]:
        assert (target / entry["file"]).read_bytes() == (SOURCE / entry["file"]).read_bytes()


def test_vm_filter_reads_one_vm_by_field_selector(apiserver, tmp_path, capsys):
    target = tmp_path / "one"
    assert collect(capsys, apiserver, target, "--vm", "testvm")[0] == 0
    files = bundle_files(target)
    names = {
        kind: [i["metadata"]["name"] for i in json.loads(files[f"objects/{kind}.json"])["items"]]
        for kind in ("virtualmachines", "controllerrevisions", "events")
    }
    assert names["virtualmachines"] == ["testvm"]
    testvm_uid = next(
        v["metadata"]["uid"]
        for v in objects("always-restart", "virtualmachines")
        if v["metadata"]["name"] == "testvm"
    )
    assert names["controllerrevisions"] == [
        r["metadata"]["name"]
        for r in objects("always-restart", "controllerrevisions")
        if testvm_uid in r["metadata"]["name"]
    ]
    lease_events = [
        e["metadata"]["name"]
        for e in objects("always-restart", "events")
        if e["involvedObject"]["kind"] == "Lease"
    ]
    assert not any(n.startswith("other-vm") for n in names["events"])
    assert lease_events and set(lease_events) <= set(names["events"])
    vm_lists = [r for r in apiserver.requests if r.path.endswith("/virtualmachines")]
    assert [r.param("fieldSelector") for r in vm_lists] == ["metadata.name=testvm"]
    assert manifest_of(target)["scope"]["vms"] == ["default/testvm"]


def test_lists_are_paged_with_continue_tokens(apiserver, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(live_api, "PAGE_SIZE", 1)
    target = tmp_path / "paged"
    assert collect(capsys, apiserver, target)[0] == 0
    events = [r for r in apiserver.requests if r.path == "/api/v1/namespaces/default/events"]
    sample = objects("always-restart", "events")
    in_default = sum(e["metadata"]["namespace"] == "default" for e in sample)
    assert len(events) == in_default and all(r.param("limit") == "1" for r in events)
    assert [bool(r.param("continue")) for r in events] == [False] + [True] * (in_default - 1)
    assert {e["kind"]: e["count"] for e in manifest_of(target)["collected"]}["Event"] == len(sample)


def test_all_namespaces_lists_cluster_wide(apiserver, tmp_path, capsys):
    assert collect(capsys, apiserver, tmp_path / "all", "-A")[0] == 0
    paths = {r.path for r in apiserver.requests}
    assert {"/apis/kubevirt.io/v1/virtualmachines", "/api/v1/pods", "/api/v1/events"} <= paths
    assert manifest_of(tmp_path / "all")["scope"]["allNamespaces"] is True


def test_since_and_previous_logs(apiserver, tmp_path, capsys):
    pod = apiserver.store.get("pods", "kubevirt", standby_pod())
    assert pod is not None
    pod["status"]["containerStatuses"][0]["restartCount"] = 1
    previous = tmp_path / "previous.log"
    previous.write_bytes(b"2026-11-28T00:40:00.000000001Z I1128 00:40:00.000000 1 old instance\n")
    apiserver.store.logs[("kubevirt", standby_pod(), "virt-controller", "previous")] = previous
    apiserver.set_now(datetime(2026, 11, 28, 0, 42, 0, tzinfo=timezone.utc))
    target = tmp_path / "since"
    assert collect(capsys, apiserver, target, "--since", "1m")[0] == 0
    logs = [r for r in apiserver.requests if r.path.endswith("/log")]
    assert {r.param("sinceSeconds") for r in logs} == {"60"} and sum(
        r.param("previous") == "true" for r in logs
    ) == 1
    kept = (target / log_file(leader_pod())).read_text().splitlines()
    assert kept and all(line >= "2026-11-28T00:41:00" for line in kept)
    entries = {(e["pod"], e["instance"]) for e in manifest_of(target)["logs"]}
    assert (standby_pod(), "previous") in entries
    assert not (target / log_file(standby_pod(), "previous")).read_bytes()


def test_kubevirt_namespace_found_from_pods_when_crs_are_forbidden_cluster_wide(
    apiserver, tmp_path, capsys
):
    roles = load_roles(RBAC)
    apiserver.restrict(roles.without("kubevirt.io", "kubevirts"))
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "not collected: KubeVirt in kubevirt: forbidden" in err
    manifest = manifest_of(tmp_path / "b")
    assert manifest["kubevirtNamespace"] == "kubevirt" and len(manifest["logs"]) == 2


def test_kubevirt_namespace_flag(apiserver, tmp_path, capsys):
    assert collect(capsys, apiserver, tmp_path / "b", "--kubevirt-namespace", "kubevirt")[0] == 0
    assert not any(r.path == "/apis/kubevirt.io/v1/kubevirts" for r in apiserver.requests)


def test_impersonation_headers(apiserver, tmp_path, capsys):
    assert (
        collect(
            capsys,
            apiserver,
            tmp_path / "b",
            "--as",
            "alice",
            "--as-group",
            "ops",
            "--as-group",
            "audit",
        )[0]
        == 0
    )
    first = apiserver.requests[0]
    assert first.headers["impersonate-user"] == ["alice"]
    assert first.headers["impersonate-group"] == ["ops", "audit"]


def test_context_flag_and_unknown_context(apiserver, tmp_path, capsys):
    assert collect(capsys, apiserver, tmp_path / "b", "--context", "test")[0] == 0
    code, _, err = collect(capsys, apiserver, tmp_path / "c", "--context", "nope")
    assert (code, err) == (
        2,
        f"error: no context 'nope' in kubeconfig {apiserver.kubeconfig} (contexts: test)\n",
    )


def test_kubeconfig_from_environment_list(apiserver, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{apiserver.kubeconfig}")
    code, _, err = kvtrace(capsys, "collect", "-f", str(tmp_path / "b"), "-q")
    assert (code, err) == (0, "")


def test_existing_destination_is_refused_before_any_request(apiserver, tmp_path, capsys):
    (tmp_path / "taken.tar.gz").write_bytes(b"mine")
    code, _, err = collect(capsys, apiserver, tmp_path / "taken.tar.gz")
    assert code == 2 and "already exists; remove it or choose another -f path" in err
    assert apiserver.requests == [] and (tmp_path / "taken.tar.gz").read_bytes() == b"mine"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_only():
    terminal, pipe = FakeTerminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = Progress(enabled=True, stream=stream)
        progress.set_phase("reading logs")
        progress.add_bytes(3 * 1024 * 1024)
        progress.close()
    assert "kvtrace collect: reading logs: 0 requests, 0.0 MiB of logs" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r") and pipe.getvalue() == ""
    quiet = FakeTerminal()
    Progress(enabled=False, stream=quiet).set_phase("x")
    assert quiet.getvalue() == ""


def test_collect_prints_no_progress_when_stderr_is_not_a_terminal(apiserver, tmp_path, capsys):
    code, out, err = collect(capsys, apiserver, tmp_path / "b")
    assert (code, err) == (0, "")

    def count(plural: str) -> int:
        return len(objects("always-restart", plural))

    assert out.splitlines()[1:] == [
        f"  objects: {count('virtualmachines')} VirtualMachine, "
        f"{count('virtualmachineinstances')} VirtualMachineInstance, "
        "0 VirtualMachineInstanceMigration, "
        f"{count('pods')} Pod, {count('controllerrevisions')} ControllerRevision, "
        f"{count('events')} Event, 1 Lease, 0 Endpoints, 1 KubeVirt, {count('nodes')} Node, "
        "0 VirtualMachineInstanceReplicaSet, 0 VirtualMachinePool, 0 VirtualMachineSnapshot, "
        "0 VirtualMachineSnapshotContent, 0 VirtualMachineRestore",
        "  logs: 2 file(s) from 2 virt-controller pod(s)",
        "  cluster: v1.31.2, KubeVirt v1.9.0 in kubevirt",
    ]
