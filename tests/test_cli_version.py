"""``kvtrace version`` (kvtrace, Python, and the KubeVirt release of a bundle or a cluster) and the
program name: ``kubectl kvtrace`` when run as the kubectl plugin."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest
import yaml

from kvtrace import __version__
from kvtrace.cli import prog_name
from kvtrace.sources.live import client as live
from tests.apiserver.fixture import apiserver, kvtrace
from tests.conftest import ROOT, SAMPLES

__all__ = ["apiserver"]

ALWAYS = str(SAMPLES / "always-restart")


@pytest.fixture
def no_cluster(monkeypatch, tmp_path):
    monkeypatch.setattr(live, "DEFAULT_KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def test_without_evidence_or_cluster_it_shows_kvtrace_and_python(capsys, no_cluster):
    code, out, err = kvtrace(capsys, "version")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"kvtrace version: {__version__}",
        f"Python version: {platform.python_version()} ({platform.python_implementation()})",
    ]


def test_a_bundles_kubevirt_release(capsys):
    code, out, _ = kvtrace(capsys, "version", "-b", ALWAYS)
    assert code == 0
    assert (
        f"KubeVirt version: v1.9.0 (KubeVirt kubevirt/kubevirt in {ALWAYS}; log lines fit v1.9.0)"
        in out
    )


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_structured(capsys, output):
    code, out, _ = kvtrace(capsys, "version", "-b", ALWAYS, "-o", output)
    document = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert code == 0 and document["kvtraceVersion"] == __version__
    assert document["pythonVersion"]["version"] == platform.python_version()
    assert document["kubevirtVersion"]["version"] == "v1.9.0"


def test_a_log_file_alone_gives_the_band_its_call_sites_fit(capsys):
    log = next((SAMPLES / "always-restart" / "logs").rglob("current.log"))
    code, out, _ = kvtrace(capsys, "version", "--log", str(log), "-o", "json")
    kubevirt = json.loads(out)["kubevirtVersion"]
    assert code == 0 and kubevirt["version"] is None and kubevirt["logLinesFit"]


def test_a_live_cluster_is_asked_with_two_gets(apiserver, capsys):
    code, out, err = kvtrace(
        capsys, "version", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json"
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["kubevirtVersion"]["version"] == "v1.9.0"
    assert (
        document["kubevirtVersion"]["source"] == "KubeVirt kubevirt/kubevirt in live cluster test"
    )
    assert document["kubernetesVersion"]["version"] == "v1.31.2"
    assert [(r.method, r.path) for r in apiserver.requests] == [
        ("GET", "/version"),
        ("GET", "/apis/kubevirt.io/v1/kubevirts"),
    ]


def test_client_asks_nothing(apiserver, capsys):
    code, out, _ = kvtrace(capsys, "version", "--client", "--kubeconfig", str(apiserver.kubeconfig))
    assert code == 0 and "KubeVirt" not in out and apiserver.requests == []


def test_an_unreachable_cluster_prints_the_client_then_fails(apiserver, capsys):
    kubeconfig = str(apiserver.kubeconfig)
    apiserver.stop()
    code, out, err = kvtrace(
        capsys, "version", "--kubeconfig", kubeconfig, "--request-timeout", "2s"
    )
    assert code == 1 and out.startswith("kvtrace version:") and "cannot reach the cluster" in err


@pytest.mark.parametrize(
    ("argv0", "shown"),
    [
        ("/usr/local/bin/kvtrace", "kvtrace"),
        ("/home/u/.krew/bin/kubectl-kvtrace", "kubectl kvtrace"),
        ("kubectl-kvtrace", "kubectl kvtrace"),
    ],
)
def test_the_program_name_is_what_the_user_typed(argv0, shown):
    assert prog_name(argv0) == shown


def test_run_as_the_kubectl_plugin_usage_says_kubectl_kvtrace():
    script = (
        "import sys; sys.argv[0] = '/x/kubectl-kvtrace'; from kvtrace.entry import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "timeline", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout.startswith("Usage: kubectl kvtrace timeline ")
    bad = subprocess.run(
        [sys.executable, "-c", script, "nonsense"], cwd=ROOT, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "Try 'kubectl kvtrace --help' for help" in bad.stderr
