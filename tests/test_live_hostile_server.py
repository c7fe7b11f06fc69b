"""A hostile API server cannot exhaust kvtrace's memory, disk or time (security review, issue 14).

Every body read is capped (``KVTRACE_MAX_RESPONSE_BYTES``), every container log too
(``KVTRACE_MAX_LOG_STREAM_BYTES``, what was read is kept), every request has a total deadline
(``--request-timeout``, body included), a list that repeats its continue token or pages past
``KVTRACE_MAX_LIST_PAGES`` is incomplete, ``Retry-After`` is honoured up to 10 s and all retries
of a collection share ``KVTRACE_MAX_RETRIES``. Each ends in a partial bundle whose ``missing[]``
names the cap, never in a crash. The hostile answers are modes of the test API server
(tests/apiserver/hostile.py).
"""

from __future__ import annotations

import json
import time

import pytest

from kvtrace.sources.live import api as live_api
from tests.apiserver.fixture import SOURCE, apiserver, bundle_files, kvtrace, waits
from tests.apiserver.hostile import DripProxy
from tests.sample_names import leader_pod, log_file

__all__ = ["apiserver", "waits"]

VMS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachines"
VMIS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances"
EVENTS = "/api/v1/namespaces/default/events"
LOG = f"/api/v1/namespaces/kubevirt/pods/{leader_pod()}/log"
MiB = 1024 * 1024


def collect(capsys, server, target, *args: str) -> tuple[int, str, str]:
    return kvtrace(
        capsys, "collect", "--kubeconfig", str(server.kubeconfig), "-f", str(target), *args
    )


def missing_of(target) -> list[dict[str, str]]:
    return list(json.loads(bundle_files(target)["manifest.json"])["missing"])


@pytest.mark.parametrize("declare_length", [False, True], ids=["chunked", "content-length"])
def test_a_huge_list_body_is_capped_and_reported(
    apiserver, tmp_path, capsys, monkeypatch, declare_length
):
    monkeypatch.setenv("KVTRACE_MAX_RESPONSE_BYTES", str(1 * MiB))
    apiserver.fault(VMIS, body_bytes=64 * MiB, declare_length=declare_length, times=None)
    started = time.monotonic()
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "Traceback" not in err
    assert time.monotonic() - started < 15
    (entry,) = missing_of(tmp_path / "b")
    assert (entry["kind"], entry["namespace"]) == ("VirtualMachineInstance", "default")
    assert f"larger than {MiB} bytes" in entry["reason"]
    assert "KVTRACE_MAX_RESPONSE_BYTES" in entry["reason"]
    assert len([r for r in apiserver.requests if r.path == VMIS]) == 1  # not retried


def test_an_endless_log_is_cut_at_the_cap_and_the_cut_recorded(
    apiserver, tmp_path, capsys, monkeypatch
):
    cap = 300_000
    monkeypatch.setenv("KVTRACE_MAX_LOG_STREAM_BYTES", str(cap))
    apiserver.fault(LOG, log_bytes=64 * MiB, times=None)
    target = tmp_path / "b"
    code, _, err = collect(capsys, apiserver, target)
    assert code == 3 and "Traceback" not in err
    kept = (target / log_file(leader_pod())).read_bytes()
    assert len(kept) == cap and kept.startswith(b"2026-11-28T00:41:00.000000001Z I1128")
    (entry,) = missing_of(target)
    assert entry["file"] == log_file(leader_pod())
    assert entry["reason"].startswith(f"truncated: the log is longer than {cap} bytes")
    assert "KVTRACE_MAX_LOG_STREAM_BYTES" in entry["reason"]
    manifest = json.loads((target / "manifest.json").read_text())
    assert log_file(leader_pod()) in {e["file"] for e in manifest["logs"]}
    assert manifest["missing"] == [entry]


def test_a_log_under_the_cap_is_whole(apiserver, tmp_path, capsys, monkeypatch):
    size = len((SOURCE / log_file(leader_pod())).read_bytes())
    monkeypatch.setenv("KVTRACE_MAX_LOG_STREAM_BYTES", str(size))
    assert collect(capsys, apiserver, tmp_path / "b")[0] == 0


def test_a_dripping_server_hits_the_total_deadline(apiserver, waits, tmp_path, capsys):
    apiserver.fault(VMIS, drip=0.1, times=None)  # every byte well within the read timeout
    started = time.monotonic()
    code, _, err = collect(capsys, apiserver, tmp_path / "b", "--request-timeout", "0.5s")
    elapsed = time.monotonic() - started
    assert code == 3 and "Traceback" not in err
    assert len([r for r in apiserver.requests if r.path == VMIS]) == 1  # a body is not re-read
    assert elapsed < 5
    (entry,) = missing_of(tmp_path / "b")
    assert entry["kind"] == "VirtualMachineInstance"
    assert "the whole response took more than 0.5s" in entry["reason"]


def test_a_server_dripping_its_headers_hits_the_total_deadline(apiserver, waits, tmp_path, capsys):
    apiserver.fault(VMIS, drip_head=0.1, times=None)
    started = time.monotonic()
    code, _, err = collect(capsys, apiserver, tmp_path / "b", "--request-timeout", "0.5s")
    assert code == 3 and "Traceback" not in err
    attempts = len([r for r in apiserver.requests if r.path == VMIS])
    assert attempts == live_api.RetryPolicy().attempts  # a cut request is retried, each bounded
    assert time.monotonic() - started < attempts * 0.5 + 5
    (entry,) = missing_of(tmp_path / "b")
    assert entry["kind"] == "VirtualMachineInstance"
    assert "the whole response took more than 0.5s" in entry["reason"]


def test_a_dripped_tls_handshake_hits_the_total_deadline(apiserver, waits, tmp_path, capsys):
    proxy = DripProxy(apiserver.port, every=0.05)
    config = tmp_path / "kubeconfig-proxy"
    config.write_text(
        apiserver.kubeconfig.read_text().replace(str(apiserver.port), str(proxy.port))
    )
    started = time.monotonic()
    try:
        code, _, err = kvtrace(
            capsys,
            "collect",
            "--kubeconfig",
            str(config),
            "-f",
            str(tmp_path / "b"),
            "--request-timeout",
            "0.5s",
        )
    finally:
        proxy.close()
    assert code == 1 and "Traceback" not in err
    assert "cannot reach the API server" in err and "took more than 0.5s" in err
    assert time.monotonic() - started < live_api.RetryPolicy().attempts * 0.5 + 5


def test_a_constant_continue_token_ends_the_list_as_incomplete(apiserver, tmp_path, capsys):
    apiserver.fault(f"{VMS}$", continue_token="same-every-time", times=None)
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "Traceback" not in err
    assert len([r for r in apiserver.requests if r.path == VMS]) == 2
    (entry,) = missing_of(tmp_path / "b")
    assert entry["kind"] == "VirtualMachine"
    assert entry["reason"].startswith("incomplete list: the server sent the same continue token")


def test_pages_per_list_are_capped(apiserver, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(live_api, "PAGE_SIZE", 1)
    monkeypatch.setenv("KVTRACE_MAX_LIST_PAGES", "3")
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "Traceback" not in err
    assert len([r for r in apiserver.requests if r.path == EVENTS]) == 3
    reasons = {(e["kind"], e["namespace"]): e["reason"] for e in missing_of(tmp_path / "b")}
    assert reasons[("Event", "default")].startswith("incomplete list: more than 3 pages")
    assert "KVTRACE_MAX_LIST_PAGES" in reasons[("Event", "default")]


def test_bytes_per_list_are_capped(apiserver, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(live_api, "PAGE_SIZE", 1)
    monkeypatch.setenv("KVTRACE_MAX_LIST_BYTES", "3000")  # a few Events, each under a KiB
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "Traceback" not in err
    reasons = {(e["kind"], e["namespace"]): e["reason"] for e in missing_of(tmp_path / "b")}
    assert reasons[("Event", "default")].startswith(
        "incomplete list: its pages add up to more than 3000 bytes"
    )
    assert "KVTRACE_MAX_LIST_BYTES" in reasons[("Event", "default")]
    pages = len([r for r in apiserver.requests if r.path == EVENTS])
    assert 1 < pages < 9  # stopped before the last of the 9 Events


def test_a_huge_retry_after_is_waited_for_10_seconds_at_most(apiserver, waits, tmp_path, capsys):
    apiserver.fault(VMS, status=429, times=2, retry_after="999999")
    assert collect(capsys, apiserver, tmp_path / "b")[0] == 0
    assert waits == [10.0, 10.0]


def test_retries_of_a_collection_share_one_budget(apiserver, waits, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KVTRACE_MAX_RETRIES", "3")
    apiserver.fault("^/apis/", status=429, times=None, retry_after="999999")
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 3 and "Traceback" not in err
    assert waits == [10.0, 10.0, 10.0]
    reasons = [e["reason"] for e in missing_of(tmp_path / "b")]
    assert any("no retries left for this collection: KVTRACE_MAX_RETRIES" in r for r in reasons)


@pytest.mark.parametrize(
    "variable",
    [
        "KVTRACE_MAX_RESPONSE_BYTES",
        "KVTRACE_MAX_LOG_STREAM_BYTES",
        "KVTRACE_MAX_LIST_PAGES",
        "KVTRACE_MAX_LIST_BYTES",
        "KVTRACE_MAX_RETRIES",
    ],
)
def test_a_bad_cap_is_a_usage_error(apiserver, tmp_path, capsys, monkeypatch, variable):
    monkeypatch.setenv(variable, "lots")
    code, _, err = collect(capsys, apiserver, tmp_path / "b")
    assert code == 2 and f"{variable}='lots' is not a positive whole number" in err
