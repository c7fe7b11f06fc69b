"""kubectl's connection flags against the test API server: ``--server``, ``--token``,
``--certificate-authority``, ``--insecure-skip-tls-verify``, ``--cluster``, ``--user``, ``--as``,
``--as-group``, ``--as-uid``, and ``-l`` sent as the VM list's ``labelSelector``. Every request
stays a GET."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvtrace.sources.live import client as live
from tests.apiserver import ApiServer
from tests.apiserver.fixture import apiserver, kvtrace

__all__ = ["apiserver"]


@pytest.fixture
def no_kubeconfig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(live, "DEFAULT_KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def _only_gets(server: ApiServer) -> None:
    assert server.requests and {r.method for r in server.requests} == {"GET"}


def test_server_token_and_ca_reach_the_cluster_without_a_kubeconfig(
    apiserver, capsys, no_kubeconfig
):
    flags = ["--server", apiserver.url, "--token", apiserver.token]
    code, out, err = kvtrace(
        capsys,
        "timeline",
        "default/testvm",
        "-q",
        *flags,
        "--certificate-authority",
        str(apiserver.ca),
    )
    assert code == 0, err
    assert "Starting VM due to runStrategy: Always" in out and apiserver.token not in out + err
    _only_gets(apiserver)


def test_a_token_flag_replaces_the_kubeconfigs(apiserver, capsys):
    code, _, err = kvtrace(
        capsys, "check", "-q", "--kubeconfig", str(apiserver.kubeconfig), "--token", "kvt-wrong"
    )
    assert code == 1 and "kvt-wrong" not in err
    assert {r.status for r in apiserver.requests} == {401}


def test_without_a_ca_the_servers_certificate_is_refused(apiserver, capsys, no_kubeconfig):
    code, _, err = kvtrace(
        capsys, "check", "-q", "--server", apiserver.url, "--token", apiserver.token
    )
    assert code == 1 and f"TLS with 127.0.0.1:{apiserver.port} failed" in err, err


def test_insecure_skip_tls_verify_connects_and_warns(apiserver, capsys, no_kubeconfig):
    code, _, err = kvtrace(
        capsys,
        "check",
        "-q",
        "--server",
        apiserver.url,
        "--token",
        apiserver.token,
        "--insecure-skip-tls-verify",
    )
    assert code == 0, err
    assert "warning: --insecure-skip-tls-verify" in err and "InsecureRequestWarning" not in err
    _only_gets(apiserver)


def test_insecure_and_a_ca_together_are_a_usage_error(apiserver, capsys):
    code, _, err = kvtrace(
        capsys,
        "check",
        "--kubeconfig",
        str(apiserver.kubeconfig),
        "--insecure-skip-tls-verify",
        "--certificate-authority",
        str(apiserver.ca),
    )
    assert code == 2 and "exclude each other" in err and apiserver.requests == []


def _two_of_each(server: ApiServer, tmp_path: Path) -> Path:
    """The current context names a cluster on a closed port and a user with a wrong token;
    ``good`` and ``reader`` are the working ones."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    good_cluster, good_user = config["clusters"][0], config["users"][0]
    config["clusters"] = [
        {
            "name": "broken",
            "cluster": {"server": "https://127.0.0.1:1", "certificate-authority": str(server.ca)},
        },
        {**good_cluster, "name": "good"},
    ]
    config["users"] = [
        {"name": "stale", "user": {"token": "kvt-stale"}},
        {**good_user, "name": "reader"},
    ]
    config["contexts"][0]["context"].update(cluster="broken", user="stale")
    path = tmp_path / "kubeconfig-two"
    path.write_text(yaml.safe_dump(config))
    return path


def test_cluster_and_user_choose_other_kubeconfig_entries(apiserver, capsys, tmp_path):
    kubeconfig = str(_two_of_each(apiserver, tmp_path))
    code, _, err = kvtrace(
        capsys,
        "check",
        "-q",
        "--request-timeout",
        "2s",
        "--kubeconfig",
        kubeconfig,
        "--cluster",
        "good",
    )
    assert code == 1 and {r.status for r in apiserver.requests} == {401}  # the stale token
    code, out, err = kvtrace(
        capsys, "check", "-q", "--kubeconfig", kubeconfig, "--cluster", "good", "--user", "reader"
    )
    assert code == 0, err
    assert "kvt-stale" not in out + err
    assert yaml.safe_load(Path(kubeconfig).read_text())["contexts"][0]["context"]["user"] == "stale"


def test_an_unknown_cluster_or_user_lists_the_known_ones(apiserver, capsys, tmp_path):
    kubeconfig = str(_two_of_each(apiserver, tmp_path))
    code, _, err = kvtrace(capsys, "check", "--kubeconfig", kubeconfig, "--cluster", "nope")
    assert (
        code == 2
        and "--cluster 'nope': no such cluster" in err
        and "(clusters: broken, good)" in err
    )
    code, _, err = kvtrace(capsys, "check", "--kubeconfig", kubeconfig, "--user", "nope")
    assert code == 2 and "(users: reader, stale)" in err
    assert apiserver.requests == []


def test_impersonation_headers_are_sent_on_every_request(apiserver, capsys):
    code, _, err = kvtrace(
        capsys,
        "check",
        "-q",
        "--kubeconfig",
        str(apiserver.kubeconfig),
        "--as",
        "alice",
        "--as-group",
        "sre",
        "--as-group",
        "oncall",
        "--as-uid",
        "1234",
    )
    assert code == 0, err
    for request in apiserver.requests:
        assert request.headers["impersonate-user"] == ["alice"]
        assert request.headers["impersonate-group"] == ["sre", "oncall"]
        assert request.headers["impersonate-uid"] == ["1234"]
    _only_gets(apiserver)


def test_group_or_uid_without_a_user_is_a_usage_error(apiserver, capsys):
    code, _, err = kvtrace(
        capsys, "check", "--kubeconfig", str(apiserver.kubeconfig), "--as-uid", "1234"
    )
    assert code == 2 and "give --as USER" in err and apiserver.requests == []


def test_a_selector_is_the_vm_lists_label_selector(apiserver, capsys):
    kubeconfig = str(apiserver.kubeconfig)
    code, _, err = kvtrace(
        capsys, "check", "-A", "-q", "-l", "team=storage", "--kubeconfig", kubeconfig
    )
    assert code == 1 and "labels team=storage" in err  # the sample's VMs have no such label
    lists = [r for r in apiserver.requests if r.path.endswith("/virtualmachines")]
    assert lists and all(r.param("labelSelector") == "team=storage" for r in lists)
    _only_gets(apiserver)


def test_collect_with_a_selector_writes_only_matching_vms(apiserver, capsys, tmp_path):
    target = tmp_path / "bundle"
    code, _, err = kvtrace(
        capsys,
        "collect",
        "-q",
        "-l",
        "kubevirt.io/vm",
        "-f",
        str(target),
        "--kubeconfig",
        str(apiserver.kubeconfig),
    )
    assert code in (0, 3), err
    lists = [r for r in apiserver.requests if r.path.endswith("/virtualmachines")]
    assert lists and all(r.param("labelSelector") == "kubevirt.io/vm" for r in lists)
