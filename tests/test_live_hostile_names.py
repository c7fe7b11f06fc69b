"""Names from a hostile API server never become paths or URLs (security review, issue 14).

A container or pod name is a path component in the bundle (``logs/<ns>/<pod>/<container>/``) and
a URL segment; a node name from a VMI's status is a URL segment. Names the API server's own
validation would refuse are reported in ``missing[]`` (which pod, which container, why), never
used; and the one HTTP choke point checks the decoded, normalised path against the reads of
docs/collect.md, so an encoded or dot-segment path cannot reach another resource.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtrace.errors import ReadOnlyViolation, UnsafeResponse
from kvtrace.sources.live.client import check_path
from kvtrace.sources.live.writer import BundleWriter
from tests.apiserver.fixture import apiserver, bundle_files, kvtrace
from tests.sample_names import leader_pod, standby_pod

__all__ = ["apiserver"]


def escape_to(target: Path) -> str:
    """A name that, joined under any bundle directory, lands on ``target``."""
    return "../" * 24 + str(target).lstrip("/")


def add_container(server, pod_name: str, container: str) -> None:
    pod = server.store.get("pods", "kubevirt", pod_name)
    pod["spec"]["containers"].append({"name": container, "image": "x"})


def live(server, *args: str) -> list[str]:
    return [*args, "--kubeconfig", str(server.kubeconfig)]


@pytest.mark.parametrize("target_name", ["bundle.tar.gz", "dir"])
def test_a_container_name_that_climbs_out_is_refused_and_reported(
    apiserver, tmp_path, capsys, target_name
):
    escaped = tmp_path / "escaped"
    hostile = escape_to(escaped)
    add_container(apiserver, leader_pod(), hostile)
    target = tmp_path / target_name
    code, _, err = kvtrace(capsys, "collect", "-f", str(target), *live(apiserver))
    assert code == 3 and "Traceback" not in err
    assert not escaped.exists() and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["apiserver", target_name]
    )
    manifest = json.loads(bundle_files(target)["manifest.json"])
    (entry,) = manifest["missing"]
    assert entry["kind"] == "Pod" and entry["namespace"] == "kubevirt"
    assert "container name '../../" in entry["reason"] and leader_pod() in entry["reason"]
    assert "DNS-1123 label" in entry["reason"]
    assert len(manifest["logs"]) == 2  # the valid containers' logs are still read
    asked = [r.param("container") for r in apiserver.requests if r.path.endswith("/log")]
    assert sorted(asked) == ["virt-controller", "virt-controller"]
    assert "warning: not collected: Pod in kubevirt: container name" in err


def test_live_timeline_with_a_climbing_container_name_writes_nothing_outside(
    apiserver, tmp_path, capsys
):
    escaped = tmp_path / "escaped"
    add_container(apiserver, standby_pod(), escape_to(escaped))
    code, out, err = kvtrace(capsys, "timeline", "default/testvm", "-q", *live(apiserver))
    assert code in (0, 3) and "Traceback" not in err and out
    assert not escaped.exists()


def test_a_pod_name_that_is_not_a_kubernetes_name_is_never_requested(apiserver, tmp_path, capsys):
    pod = apiserver.store.get("pods", "kubevirt", standby_pod())
    pod["metadata"]["name"] = "../secrets/s0"
    code, _, err = kvtrace(capsys, "collect", "-f", str(tmp_path / "b"), *live(apiserver))
    assert code == 3 and "Traceback" not in err
    (entry,) = json.loads((tmp_path / "b" / "manifest.json").read_text())["missing"]
    assert "pod name '../secrets/s0' is not a valid Kubernetes name" in entry["reason"]
    assert not [r for r in apiserver.requests if "secrets" in r.path or ".." in r.path]


@pytest.mark.parametrize(
    "node",
    [
        "../namespaces/default/configmaps/cm0",
        "..%2F..%2Fapi%2Fv1%2Fnamespaces%2Fdefault%2Fsecrets%2Fs0",
        "node-1/../../namespaces/default/secrets/s0",
    ],
)
def test_a_hostile_node_name_in_vmi_status_is_skipped_and_reported(
    apiserver, tmp_path, capsys, node
):
    (vmi,) = apiserver.store.items("virtualmachineinstances", "default")
    real = vmi["status"]["nodeName"]
    vmi["status"]["nodeName"] = node
    code, _, err = kvtrace(capsys, "collect", "-f", str(tmp_path / "b"), *live(apiserver))
    assert code == 3 and "Traceback" not in err
    paths = [r.path for r in apiserver.requests]
    assert not [p for p in paths if "configmaps" in p or "secrets" in p or "%" in p or ".." in p]
    assert [p for p in paths if p.startswith("/api/v1/nodes/")] == [f"/api/v1/nodes/{real}"]
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    (entry,) = manifest["missing"]
    assert entry["kind"] == "Node" and "is not a valid Kubernetes name" in entry["reason"]
    assert {e["kind"]: e["count"] for e in manifest["collected"]}["Node"] == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nodes/../namespaces/default/configmaps/cm0",
        "/api/v1/nodes/..%2F..%2Fapi%2Fv1%2Fnamespaces%2Fdefault%2Fsecrets%2Fs0",
        "/api/v1/nodes/%2e%2e/namespaces/default/secrets",
        "/api/v1/namespaces/default/configmaps/cm0",
        "/api/v1/namespaces/default/pods/p/exec",
        "/api/v1//namespaces/default/pods",
        "/api/v1/namespaces/Default/pods",
        "/api/v1/nodes/n1/log",
        "/api/v1/namespaces/default/nodes",
        "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm/console",
        "api/v1/pods",
    ],
)
def test_the_choke_point_checks_the_decoded_normalised_path(apiserver, path):
    with pytest.raises(ReadOnlyViolation):
        check_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "/version",
        "/api/v1/pods",
        "/api/v1/nodes/node-1",
        "/api/v1/namespaces/kubevirt/pods/virt-controller-abc/log",
        "/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/virt-controller",
        "/apis/kubevirt.io/v1/virtualmachines",
    ],
)
def test_the_choke_point_lets_every_documented_read_through(path):
    check_path(path)


def test_the_writer_never_writes_outside_its_root(tmp_path):
    writer = BundleWriter(tmp_path / "bundle")
    for pod, container in (("p", "../../../x"), ("..", "c"), ("p/../../..", "c")):
        with pytest.raises(UnsafeResponse, match="would leave the bundle directory"):
            writer.log_path("kubevirt", pod, container, "current")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bundle", "objects"]


@pytest.mark.parametrize(
    ("flag", "value"), [("-n", "../kube-system"), ("--kubevirt-namespace", "a/b")]
)
def test_a_bad_namespace_flag_is_a_usage_error_before_any_list(
    apiserver, tmp_path, capsys, flag, value
):
    code, _, err = kvtrace(
        capsys, "collect", "-f", str(tmp_path / "b"), flag, value, *live(apiserver)
    )
    assert code == 2 and f"{flag}: namespace name" in err
    assert not [r for r in apiserver.requests if r.path != "/version"]
