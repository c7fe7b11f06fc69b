"""docs/rbac.yaml is exactly enough: collect succeeds with it, and every permission in it is used.

The test server enforces the ClusterRole and Role of docs/rbac.yaml as the real authorizer
would (tests/apiserver/rbac.py). Removing any one resource from the roles must leave a clean
partial bundle whose manifest names what could not be read.
"""

from __future__ import annotations

import json

import pytest

from tests.apiserver import load_roles
from tests.apiserver.fixture import RBAC, apiserver, bundle_files, kvtrace, waits
from tests.sample_names import leader_pod, log_file

__all__ = ["apiserver", "waits"]

ROLES = load_roles(RBAC)
# What a collection without each permission reports as missing (kind, or a log file).
EXPECTED_MISSING = {
    ("", "events"): "Event",
    ("", "nodes"): "Node",
    ("", "pods"): "Pod",
    ("", "pods/log"): log_file(leader_pod()),
    ("", "endpoints"): "Endpoints",
    ("apps", "controllerrevisions"): "ControllerRevision",
    ("coordination.k8s.io", "leases"): "Lease",
    ("kubevirt.io", "kubevirts"): "KubeVirt",
    ("kubevirt.io", "virtualmachines"): "VirtualMachine",
    ("kubevirt.io", "virtualmachineinstances"): "VirtualMachineInstance",
    ("kubevirt.io", "virtualmachineinstancemigrations"): "VirtualMachineInstanceMigration",
    ("kubevirt.io", "virtualmachineinstancereplicasets"): "VirtualMachineInstanceReplicaSet",
    ("pool.kubevirt.io", "virtualmachinepools"): "VirtualMachinePool",
    ("snapshot.kubevirt.io", "virtualmachinesnapshots"): "VirtualMachineSnapshot",
    ("snapshot.kubevirt.io", "virtualmachinesnapshotcontents"): "VirtualMachineSnapshotContent",
    ("snapshot.kubevirt.io", "virtualmachinerestores"): "VirtualMachineRestore",
}


def test_the_roles_grant_only_reads_on_what_collect_reads():
    assert sorted(EXPECTED_MISSING) == ROLES.resources()
    assert {verb for rule in ROLES.rules for verb in rule.verbs} <= {"get", "list", "watch"}
    text = RBAC.read_text()
    for word in ("secrets", "exec", "portforward", "attach", "proxy", "create", "delete"):
        assert f"- {word}" not in text and f'"{word}"' not in text


def test_collect_succeeds_with_exactly_the_documented_roles(apiserver, tmp_path, capsys):
    code, _, err = kvtrace(
        capsys, "collect", "--kubeconfig", str(apiserver.kubeconfig), "-f", str(tmp_path / "b")
    )
    assert (code, err) == (0, "")
    assert {r.status for r in apiserver.requests} <= {200, 404}  # 404: no Endpoints lock (v1.3+)


@pytest.mark.parametrize(
    "removed", sorted(EXPECTED_MISSING), ids=lambda r: "/".join(filter(None, r))
)
def test_each_permission_is_needed_and_its_loss_is_reported(apiserver, tmp_path, capsys, removed):
    apiserver.restrict(ROLES.without(*removed))
    target = tmp_path / "b"
    code, out, err = kvtrace(
        capsys, "collect", "--kubeconfig", str(apiserver.kubeconfig), "-f", str(target)
    )
    assert code == 3 and out.startswith("wrote partial bundle")
    assert "Traceback" not in err and "error:" not in err
    manifest = json.loads(bundle_files(target)["manifest.json"])
    what = EXPECTED_MISSING[removed]
    failed = [m for m in manifest["missing"] if what in (m.get("kind"), m.get("file"))]
    assert failed and all("forbidden" in m["reason"] for m in failed), manifest["missing"]
    assert f"warning: not collected: {what}" in err
    group, resource = removed
    rule = f'apiGroups: ["{group}"], resources: ["{resource}"]'
    assert all(rule in m["reason"] and "(docs/rbac.yaml)" in m["reason"] for m in failed), failed


def test_rejected_credentials_fail_cleanly_and_write_nothing(apiserver, tmp_path, capsys):
    config = apiserver.kubeconfig.read_text().replace(apiserver.token, "kvt-wrong")
    (tmp_path / "kubeconfig").write_text(config)
    target = tmp_path / "b.tar.gz"
    code, out, err = kvtrace(
        capsys, "collect", "--kubeconfig", str(tmp_path / "kubeconfig"), "-f", str(target)
    )
    assert (code, out) == (1, "")
    assert err == (
        "error: the API server rejected the credentials (401 Unauthorized) for GET /version; "
        "log in again or check the user in the kubeconfig\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["apiserver", "kubeconfig"]


def test_an_unreachable_server_fails_cleanly(apiserver, waits, tmp_path, capsys):
    apiserver.stop()
    code, _, err = kvtrace(
        capsys, "collect", "--kubeconfig", str(apiserver.kubeconfig), "-f", str(tmp_path / "b")
    )
    assert code == 1 and err.startswith(
        f"error: cannot reach the API server 127.0.0.1:{apiserver.port}"
    )
    assert len(waits) == 4 and not (tmp_path / "b").exists()


def test_no_kubeconfig_is_a_usage_error_naming_the_alternatives(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code, _, err = kvtrace(capsys, "timeline", "default/testvm")
    assert code == 2 and err.startswith("error: no evidence given: use --bundle PATH")
    no_cluster = (
        "no kubeconfig at $KUBECONFIG and not running in a pod (or give --server URL --token T)"
    )
    assert err.rstrip().endswith(no_cluster)
    code, _, err = kvtrace(capsys, "collect", "-f", str(tmp_path / "b"))
    assert (code, err) == (2, f"error: {no_cluster}\n")
