"""`kvtrace verify-overhead` from the command line: outputs, exit codes, error messages."""

from __future__ import annotations

import json

import pytest
import yaml

from kvtrace.cli import run
from tests.apiserver.fixture import SOURCE, apiserver
from tests.conftest import SAMPLES
from tests.sample_names import launcher_pod, leader_pod, objects

__all__ = ["apiserver"]  # a fixture, used by name

BUNDLE = str(SAMPLES / "always-restart")
POD = f"default/{launcher_pod()}"
OVERHEAD = SAMPLES / "overhead"


def kvtrace(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["verify-overhead", *args])
    out, err = capsys.readouterr()
    return code, out, err


def files(case: str, pod: str | None = None, vmi: str | None = None) -> list[str]:
    kubevirt = "kubevirt-ratio.yaml" if case == "vm-ratio" else "kubevirt.yaml"
    return [
        "--pod-file",
        str(pod or OVERHEAD / f"{case}-pod.yaml"),
        "--vmi-file",
        str(vmi or OVERHEAD / f"{case}-vmi.yaml"),
        "--kubevirt-file",
        str(OVERHEAD / kubevirt),
    ]


def test_bundle_pod_verifies_clean(capsys):
    code, out, err = kvtrace(capsys, POD, "--bundle", BUNDLE)
    assert code == 0 and err == ""
    (vmi,) = objects("always-restart", "virtualmachineinstances")
    assert f"VMI: default/testvm (uid {vmi['metadata']['uid']})" in out
    assert "KubeVirt: v1.9.0 (launcher image quay.io/kubevirt/virt-launcher:v1.9.0)" in out
    assert "Checks: 15 ✓, 0 ✗, 0 not checked" in out
    total = [line for line in out.splitlines() if line.startswith("total")]
    assert total[0].split() == ["total", "285212672", "272Mi"]


def test_namespace_flag_is_the_same_as_ns_slash_pod(capsys):
    _, slash, _ = kvtrace(capsys, POD, "--bundle", BUNDLE)
    code, flag, _ = kvtrace(capsys, "-n", "default", launcher_pod(), "--bundle", BUNDLE)
    assert code == 0 and flag == slash


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_structured_output_is_a_kubectl_shaped_report(capsys, output):
    code, out, _ = kvtrace(capsys, *files("vm-2cpu-2gi"), "-o", output)
    doc = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert code == 0
    assert doc["apiVersion"] == "kvtrace.io/v1alpha1" and doc["kind"] == "OverheadReport"
    assert doc["metadata"]["namespace"] == "default"
    spec, status = doc["spec"], doc["status"]
    assert status["overhead"]["totalBytes"] == 293601280 and status["overhead"]["total"] == "280Mi"
    assert len(status["overhead"]["terms"]) == 21
    assert {c["status"] for c in status["checks"]} == {"pass"}
    assert status["summary"] == {"pass": 15, "fail": 0, "unchecked": 0}
    assert spec["kubevirtVersion"]["constants"] == "v1.9"
    ratio = next(s for s in spec["settings"] if s["name"] == "cpuAllocationRatio")
    assert ratio == {
        "name": "cpuAllocationRatio",
        "value": 10,
        "source": "default, unset in KubeVirt CR kubevirt/kubevirt",
    }


def test_table_and_json_hold_the_same_checks(capsys):
    _, table, _ = kvtrace(capsys, *files("vm-hugepages"))
    _, raw, _ = kvtrace(capsys, *files("vm-hugepages"), "-o", "json")
    titles = [c["title"] for c in json.loads(raw)["status"]["checks"]]
    assert all(title in table for title in titles) and len(titles) == 17


def test_mismatch_exits_3_and_marks_the_check(capsys):
    code, out, err = kvtrace(
        capsys, *files("vm-2cpu-2gi", pod=str(OVERHEAD / "mutated" / "memory-request-pod.yaml"))
    )
    assert code == 3 and err == ""
    row = next(line for line in out.splitlines() if "compute requests.memory" in line)
    assert row.startswith("✗") and "-1048576 bytes (-1Mi)" in row
    assert "Checks: 14 ✓, 1 ✗, 0 not checked" in out


def test_kubevirt_version_flag_switches_constants(capsys):
    code, out, _ = kvtrace(
        capsys, *files("vm-2cpu-2gi"), "--kubevirt-version", "v1.5.0", "-o", "json"
    )
    doc = json.loads(out)
    assert code == 3 and doc["status"]["overhead"]["totalBytes"] == 264 * 1024 * 1024
    assert doc["spec"]["kubevirtVersion"]["source"] == "--kubevirt-version"


def test_a_version_that_names_no_release_is_refused(capsys):
    code, out, err = kvtrace(capsys, *files("vm-2cpu-2gi"), "--kubevirt-version", "v1.12.0")
    assert code == 2 and not out
    assert "Invalid value for '--kubevirt-version': 'v1.12.0' names no KubeVirt release" in err
    assert "v0.53.0 … v1.9.0" in err and "Traceback" not in err


def test_ratio_flag_without_a_cr(capsys):
    args = [
        "--pod-file",
        str(OVERHEAD / "vm-ratio-pod.yaml"),
        "--vmi-file",
        str(OVERHEAD / "vm-ratio-vmi.yaml"),
    ]
    code, out, _ = kvtrace(capsys, *args, "--overhead-ratio", "1.5", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"]["overhead"]["totalBytes"] == 440402280
    ratio = next(
        s for s in doc["spec"]["settings"] if s["name"] == "additionalGuestMemoryOverheadRatio"
    )
    assert ratio["source"] == "flag"


def test_not_a_launcher_pod_exits_1_with_a_clear_message(capsys):
    code, out, err = kvtrace(capsys, f"kubevirt/{leader_pod()}", "--bundle", BUNDLE)
    assert code == 1 and out == ""
    assert err == (
        f"error: pod kubevirt/{leader_pod()} is not a virt-launcher pod "
        "(label kubevirt.io=virt-controller): nothing was checked; pass the virt-launcher-<vmi>-… "
        "pod of the VM\n"
    )


def test_unknown_pod_exits_1(capsys):
    code, _, err = kvtrace(capsys, "default/nope", "--bundle", BUNDLE)
    assert code == 1 and err.startswith("error: no pod default/nope in ")
    assert "3 pod(s) there" in err


def test_missing_vmi_prints_pod_only_checks_and_exits_1(capsys):
    code, out, err = kvtrace(capsys, "--pod-file", str(OVERHEAD / "vm-2cpu-2gi-pod.yaml"))
    assert code == 1
    assert "VMI: none (looked for uid 5e0a1c2d-0000-4000-8000-000000000001" in out
    assert "Checks: 2 ✓, 0 ✗, 0 not checked" in out
    assert err.startswith(
        "error: not everything could be checked: no VMI: could check only qemuTimeout, readinessGate; not checked: overhead terms"
    )


def test_unparseable_quantity_exits_1_naming_the_field(capsys, tmp_path):
    vmi = yaml.safe_load((OVERHEAD / "vm-2cpu-2gi-vmi.yaml").read_text())
    vmi["spec"]["domain"]["resources"]["requests"]["memory"] = "2GB"
    bad = tmp_path / "vmi.json"
    bad.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [vmi]}))
    code, out, err = kvtrace(capsys, *files("vm-2cpu-2gi", vmi=str(bad)))
    assert code == 1 and "Traceback" not in out + err
    assert (
        "cannot compute the overhead: spec.domain.resources.requests.memory: '2GB' is not a quantity"
        in err
    )


def test_unreadable_file_exits_1(capsys, tmp_path):
    bad = tmp_path / "pod.yaml"
    bad.write_text("kind: Pod\nmetadata: [unclosed\n")
    code, _, err = kvtrace(capsys, "--pod-file", str(bad))
    assert code == 1 and err.startswith(f"error: {bad}:")
    code, _, err = kvtrace(capsys, "--pod-file", str(tmp_path / "absent.yaml"))
    assert code == 1 and "cannot read" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a POD"),
        (
            ["--vmi-file", "x.yaml", "default/p", "--bundle", BUNDLE],
            "--vmi-file and --kubevirt-file go with --pod-file",
        ),
        (["-n", "default", "default/p", "--bundle", BUNDLE], "not both"),
        (["--pod-file", "x.yaml", "--bundle", BUNDLE], "exclude each other"),
    ],
)
def test_usage_errors_exit_2(capsys, args, message):
    code, _, err = kvtrace(capsys, *args)
    assert code == 2 and message in err


def test_no_evidence_is_an_error_not_a_traceback(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # live reads (once they land) fail
    code, _, err = kvtrace(capsys, "default/p")
    assert code in (1, 2) and err.startswith("error:") and "Traceback" not in err


def test_help_lists_the_file_flags(capsys):
    code, out, _ = kvtrace(capsys, "--help")
    assert code == 0 and "--pod-file" in out and "--kubevirt-version" in out


def test_live_cluster_gives_the_same_report_as_the_bundle(apiserver, capsys):
    """The test API server serves sample-logs/always-restart over HTTPS with docs/rbac.yaml."""
    code_live, live, err = kvtrace(
        capsys, POD, "-o", "json", "-q", "--kubeconfig", str(apiserver.kubeconfig)
    )
    code_offline, offline, _ = kvtrace(capsys, POD, "-o", "json", "--bundle", str(SOURCE))
    assert code_live == code_offline == 0, err
    assert json.loads(live) == json.loads(offline)


def _digest_pod(tmp_path, case: str, request_delta_mi: int = 0):  # type: ignore[no-untyped-def]
    """The sample pod as OpenShift Virtualization names its images: by digest, no tag."""
    pod = yaml.safe_load((OVERHEAD / f"{case}-pod.yaml").read_text())
    digest = "@sha256:" + "0123456789abcdef" * 4
    for container in pod["spec"].get("containers", []) + pod["spec"].get("initContainers", []):
        container["image"] = container["image"].rsplit(":", 1)[0] + digest
    if request_delta_mi:
        compute = next(c for c in pod["spec"]["containers"] if c["name"] == "compute")
        request = compute["resources"]["requests"]["memory"]
        assert request.endswith("Mi"), request
        compute["resources"]["requests"]["memory"] = f"{int(request[:-2]) + request_delta_mi}Mi"
    path = tmp_path / f"{case}-digest-pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    return path


def test_without_a_version_the_releases_whose_formula_gives_the_request_are_named(tmp_path, capsys):
    pod = _digest_pod(tmp_path, "vm-2cpu-2gi")
    vmi = OVERHEAD / "vm-2cpu-2gi-vmi.yaml"
    code, out, _ = kvtrace(capsys, "--pod-file", str(pod), "--vmi-file", str(vmi))
    assert code == 0
    named = "v1.6.0–v1.6.3, v1.6.4+, v1.7, v1.8, v1.9"
    assert f"the request 2328Mi is what {named} compute; checked against v1.9" in out
    assert "--kubevirt-version decides between them" in out


def test_a_request_no_release_computes_is_said_so(tmp_path, capsys):
    pod = _digest_pod(tmp_path, "vm-2cpu-2gi", request_delta_mi=2)
    vmi = OVERHEAD / "vm-2cpu-2gi-vmi.yaml"
    code, out, _ = kvtrace(capsys, "--pod-file", str(pod), "--vmi-file", str(vmi))
    assert code == 3
    assert "no release v0.53–v1.9 gives the request 2330Mi: checked against v1.9" in out
