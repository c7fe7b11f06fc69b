"""Inside a pod: no kubeconfig, the service account's token, CA and namespace files instead.

The files the Kubernetes client reads in a pod (``/var/run/secrets/kubernetes.io/serviceaccount``)
are pointed at temp files holding the test server's token and CA; ``KUBERNETES_SERVICE_HOST`` and
``KUBERNETES_SERVICE_PORT`` point at the server, as the kubelet sets them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes.config import incluster_config

from kvtrace.sources.live import client as live
from tests.apiserver import ApiServer
from tests.apiserver.fixture import SOURCE, apiserver, kvtrace

__all__ = ["apiserver"]


def in_a_pod(
    monkeypatch: pytest.MonkeyPatch, server: ApiServer, tmp_path: Path, namespace: str
) -> Path:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(server.token)
    (account / "ca.crt").write_bytes(server.ca.read_bytes())
    (account / "namespace").write_text(namespace + "\n")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(account / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(account / "ca.crt"))
    monkeypatch.setattr(live, "SA_NAMESPACE", account / "namespace")
    monkeypatch.setattr(live, "DEFAULT_KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.port))
    return account


def test_in_cluster_timeline_equals_the_bundle_timeline(apiserver, tmp_path, capsys, monkeypatch):
    in_a_pod(monkeypatch, apiserver, tmp_path, "default")
    live_code, live_out, live_err = kvtrace(capsys, "timeline", "testvm", "-o", "json")
    assert (live_code, live_err) == (0, "")
    assert apiserver.requests and {r.method for r in apiserver.requests} == {"GET"}
    assert {r.status for r in apiserver.requests} <= {200, 404}  # the bearer token was accepted
    code, out, _ = kvtrace(
        capsys, "timeline", "default/testvm", "--bundle", str(SOURCE), "-o", "json"
    )
    assert code == 0
    assert _rows(live_out) == _rows(out)


def test_the_service_account_namespace_is_the_default_namespace(
    apiserver, tmp_path, capsys, monkeypatch
):
    in_a_pod(monkeypatch, apiserver, tmp_path, "team-x")
    code, out, err = kvtrace(capsys, "timeline", "testvm")
    assert (code, out) == (1, "")
    assert "team-x/testvm" in err and "close names: default/testvm" in err
    code, out, err = kvtrace(capsys, "check", "testvm")  # check reads a bare name the same way
    assert (code, out) == (1, "")
    assert "VirtualMachine team-x/testvm" in err


def test_an_unreadable_service_account_token_is_a_clear_error(
    apiserver, tmp_path, capsys, monkeypatch
):
    account = in_a_pod(monkeypatch, apiserver, tmp_path, "default")
    (account / "token").unlink()
    code, out, err = kvtrace(capsys, "timeline", "testvm")
    assert code == 1 and out == ""
    assert err.startswith("error: in-cluster configuration:") and "Traceback" not in err
    assert apiserver.requests == []


def test_a_rejected_service_account_token_names_the_service_account(
    apiserver, tmp_path, capsys, monkeypatch
):
    account = in_a_pod(monkeypatch, apiserver, tmp_path, "default")
    (account / "token").write_text("expired-token")
    code, out, err = kvtrace(capsys, "timeline", "testvm")
    assert code == 1 and out == ""
    assert "401 Unauthorized" in err and "service account token" in err
    assert "kubeconfig" not in err


def _rows(text: str) -> list[tuple[str, str]]:
    import json

    body = json.loads(text)
    return [(row["time"], row["what"]) for row in body["items"]]
