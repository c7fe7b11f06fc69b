"""Every fault class ends in a correct bundle: retried to completion, or partial with the reason.

A partial bundle is still a valid kvtrace bundle: the kvtrace reader opens it, every kind that
was read is there with the right count, and the failure is a ``missing[]`` entry (which the
reader turns into a coverage sentence). Retry waits are recorded, not slept (``waits``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvtrace.sources.bundle import open_bundle
from kvtrace.sources.live import api as live_api
from tests.apiserver.fixture import ROOT, SOURCE, apiserver, bundle_files, kvtrace, waits
from tests.sample_names import leader_pod, log_file

__all__ = ["apiserver", "waits"]

VMS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachines"
VMIS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances"
VMIMS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancemigrations"
EVENTS = "/api/v1/namespaces/default/events"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/virt-controller"
LOG = f"/api/v1/namespaces/kubevirt/pods/{leader_pod()}/log"
LOG_FILE = log_file(leader_pod())
SOURCE_COUNTS = {
    e["kind"]: e["count"] for e in json.loads((SOURCE / "manifest.json").read_text())["collected"]
}


def collect(capsys, server, target: Path, *args: str) -> tuple[int, str, str]:
    return kvtrace(
        capsys, "collect", "--kubeconfig", str(server.kubeconfig), "-f", str(target), *args
    )


def check_bundle(
    target: Path, missing: list[dict[str, str]], partly: dict[str, int] | None = None
) -> dict:
    """The bundle reads back; every kind not missing has the source's count.

    ``partly``: kinds read in one namespace but not in another, with the count that was read.
    """
    manifest = json.loads(bundle_files(target)["manifest.json"])
    assert manifest["missing"] == missing
    partly = partly or {}
    lost = {m.get("kind") for m in missing} - set(partly)
    counts = {e["kind"]: e["count"] for e in manifest["collected"]}
    expected = {k: v for k, v in SOURCE_COUNTS.items() if k not in lost} | partly
    assert expected == {k: v for k, v in counts.items() if k in SOURCE_COUNTS}
    assert not lost & set(counts)
    with open_bundle(target) as evidence:
        assert len(evidence.missing) == len(missing) and evidence.layout == "kvtrace"
    return manifest


@pytest.mark.parametrize(
    ("path", "fault", "missing"),
    [
        (
            VMIS,
            {"status": 403, "times": None},
            {
                "kind": "VirtualMachineInstance",
                "namespace": "default",
                "reason": "forbidden: injected fault; grant it in the ClusterRole "
                'kvtrace-collect (docs/rbac.yaml): {apiGroups: ["kubevirt.io"], '
                'resources: ["virtualmachineinstances"], verbs: ["list"]}',
            },
        ),
        (
            VMIMS,
            {"status": 404, "times": None},
            {
                "kind": "VirtualMachineInstanceMigration",
                "namespace": "default",
                "reason": "not found: injected fault",
            },
        ),
        (
            EVENTS,
            {"status": 500, "times": None},
            {
                "kind": "Event",
                "namespace": "default",
                "reason": "500: injected fault (after 5 attempts)",
            },
        ),
        (
            VMS,
            {"status": 429, "times": None, "retry_after": "1"},
            {
                "kind": "VirtualMachine",
                "namespace": "default",
                "reason": "429: injected fault (after 5 attempts)",
            },
        ),
        (
            LEASE,
            {"delay": 0.6, "times": None},
            {
                "kind": "Lease",
                "namespace": "kubevirt",
                "reason": "virt-controller: timed out waiting for the API server "
                "(the whole response took more than 0.2s)",
            },
        ),
        (
            LOG,
            {"drop": "midway", "times": None},
            {"file": LOG_FILE, "reason": "connection dropped by the API server"},
        ),
        (
            VMS,
            {"drop": "before", "times": None},
            {
                "kind": "VirtualMachine",
                "namespace": "default",
                "reason": "connection dropped by the API server",
            },
        ),
    ],
    ids=["403", "404", "500", "429", "slow", "drop-midway", "drop-before"],
)
def test_a_persistent_fault_ends_in_a_partial_bundle(
    apiserver, waits, tmp_path, capsys, path, fault, missing
):
    apiserver.fault(path, **fault)
    target = tmp_path / "partial.tar.gz"
    code, out, err = collect(capsys, apiserver, target, "--request-timeout", "0.2s")
    assert code == 3, err
    assert out.startswith(f"wrote partial bundle {target}")
    what = missing.get("file") or missing["kind"]
    assert f"warning: not collected: {what}" in err and "Traceback" not in err
    # Events of the install namespace (the Lease's LeaderElection Event) are still read.
    manifest = check_bundle(target, [missing], {"Event": 1} if path == EVENTS else None)
    if "file" in missing:
        assert missing["file"] not in bundle_files(target) and len(manifest["logs"]) == 1
    else:
        assert len(manifest["logs"]) == 2


@pytest.mark.parametrize(
    ("path", "fault", "expected_waits"),
    [
        (VMS, {"status": 429, "times": 2, "retry_after": "1"}, [1.0, 1.0]),
        (EVENTS, {"status": 503, "times": 2}, [0.2, 0.4]),
        (LEASE, {"delay": 0.6, "times": 1}, [0.2]),
        (VMIS, {"drop": "before", "times": 1}, [0.2]),
        (LOG, {"drop": "midway", "times": 1}, [0.2]),
    ],
    ids=["429-retry-after", "503-backoff", "slow", "drop-before", "drop-midway"],
)
def test_a_transient_fault_is_retried_to_a_complete_bundle(
    apiserver, waits, tmp_path, capsys, path, fault, expected_waits
):
    apiserver.fault(path, **fault)
    target = tmp_path / "complete"
    code, _, err = collect(capsys, apiserver, target, "--request-timeout", "0.2s")
    assert (code, err) == (0, "")
    assert waits == expected_waits
    check_bundle(target, [])
    assert (target / LOG_FILE).read_bytes() == (SOURCE / LOG_FILE).read_bytes()


def test_retry_after_is_capped(apiserver, waits, tmp_path, capsys):
    apiserver.fault(VMS, status=429, times=1, retry_after="3600")
    assert collect(capsys, apiserver, tmp_path / "b")[0] == 0
    assert waits == [live_api.RetryPolicy().max_retry_after]


def test_410_on_continue_restarts_the_list(apiserver, waits, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(live_api, "PAGE_SIZE", 1)
    apiserver.fault(VMS, status=410, times=1, on_continue=True)
    assert collect(capsys, apiserver, tmp_path / "b")[0] == 0
    starts = [r for r in apiserver.requests if r.path == VMS and not r.param("continue")]
    assert len(starts) == 2 and waits == []
    check_bundle(tmp_path / "b", [])


def test_410_on_every_continue_gives_up_after_three_restarts(
    apiserver, waits, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(live_api, "PAGE_SIZE", 1)
    apiserver.fault(VMS, status=410, times=None, on_continue=True)
    assert collect(capsys, apiserver, tmp_path / "b")[0] == 3
    reason = "gone: the list expired while paging, again and again; retry later"
    check_bundle(
        tmp_path / "b", [{"kind": "VirtualMachine", "namespace": "default", "reason": reason}]
    )
    assert len([r for r in apiserver.requests if r.path == VMS and not r.param("continue")]) == 3


def test_interrupted_collect_leaves_nothing_under_the_final_name(
    apiserver, tmp_path, capsys, monkeypatch
):
    from kvtrace.sources.live.progress import Progress

    def interrupt(self: Progress, count: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Progress, "add_bytes", interrupt)  # mid-way through streaming a log
    target = tmp_path / "out" / "bundle.tar.gz"
    target.parent.mkdir()
    with pytest.raises(KeyboardInterrupt):  # kvtrace.entry reports it (exit 130)
        collect(capsys, apiserver, target)
    assert capsys.readouterr().out == ""
    assert any(r.path.endswith("/log") for r in apiserver.requests)
    assert list(target.parent.iterdir()) == []


def test_sigint_during_a_slow_log_leaves_nothing(apiserver, tmp_path):
    apiserver.fault(LOG, delay=5.0, times=None)
    target = tmp_path / "bundle"
    command = [
        sys.executable,
        "-m",
        "kvtrace",
        "collect",
        "--kubeconfig",
        str(apiserver.kubeconfig),
        "-f",
        str(target),
        "-q",
    ]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not any(r.path == LOG for r in apiserver.requests) and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = child.communicate(timeout=20)
    assert time.monotonic() - started < 2.0  # prompt: in-flight requests are abandoned
    assert child.returncode == 130 and b"interrupted" in err and b"Traceback" not in err
    assert list(tmp_path.iterdir()) == [tmp_path / "apiserver"]
