"""No credentials in kvtrace's output (security review, issue 14).

A password in the kubeconfig's server URL (``https://user:password@host``) is never shown, in
no message; a failing exec credential plugin is reported as such, but its stderr (which may
hold a token) never reaches the terminal, neither in kvtrace's error nor through the kubernetes
library's logging.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import yaml

from tests.apiserver.certs import make_tls
from tests.apiserver.fixture import ROOT, apiserver, kvtrace

__all__ = ["apiserver"]

PASSWORD = "s3cret-pw"
TOKEN = "SECRET-TOKEN-123"


def kubeconfig_with(server, tmp_path: Path, **changes: object) -> Path:
    """The server's kubeconfig with its cluster (``server``, ``ca``) or user changed."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]
    if "url" in changes:
        cluster["server"] = changes["url"]
    if "ca" in changes:
        cluster["certificate-authority"] = str(changes["ca"])
    if "user" in changes:
        user["user"] = changes["user"]
    path = tmp_path / "kubeconfig-changed"
    path.write_text(yaml.safe_dump(config))
    return path


def with_password(port: int) -> str:
    return f"https://alice:{PASSWORD}@127.0.0.1:{port}"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def collect(capsys, kubeconfig: Path, target: Path, *args: str) -> tuple[int, str, str]:
    return kvtrace(capsys, "collect", "--kubeconfig", str(kubeconfig), "-f", str(target), *args)


def test_a_password_in_the_server_url_is_not_in_the_unreachable_error(apiserver, tmp_path, capsys):
    port = closed_port()
    config = kubeconfig_with(apiserver, tmp_path, url=with_password(port))
    code, out, err = collect(capsys, config, tmp_path / "b", "--request-timeout", "1s")
    assert code == 1 and f"cannot reach the API server 127.0.0.1:{port}" in err
    assert PASSWORD not in out + err and "alice" not in err


def test_a_password_in_the_server_url_is_not_in_the_tls_error(apiserver, tmp_path, capsys):
    other = tmp_path / "other-ca"
    other.mkdir()
    config = kubeconfig_with(
        apiserver, tmp_path, url=with_password(apiserver.port), ca=make_tls(other).ca
    )
    code, out, err = collect(capsys, config, tmp_path / "b")
    assert code == 1 and f"TLS with 127.0.0.1:{apiserver.port} failed" in err
    assert PASSWORD not in out + err


def test_a_password_in_the_server_url_is_never_shown_on_success(apiserver, tmp_path, capsys):
    config = kubeconfig_with(apiserver, tmp_path, url=with_password(apiserver.port))
    code, out, err = collect(capsys, config, tmp_path / "b", "-v")
    assert code == 0 and "GET /version 200" in err
    assert PASSWORD not in out + err
    assert all(PASSWORD not in r.path for r in apiserver.requests)


def failing_plugin() -> dict[str, object]:
    script = f"import sys; sys.stderr.write('token: {TOKEN}\\n'); sys.exit(3)"
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": ["-c", script],
            "interactiveMode": "Never",
        }
    }


def test_a_failing_exec_plugin_is_named_and_its_stderr_never_shown(apiserver, tmp_path):
    config = kubeconfig_with(apiserver, tmp_path, user=failing_plugin())
    command = ["collect", "--kubeconfig", str(config), "-f", str(tmp_path / "b")]
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert "ERROR:root" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr == (
        f"error: kubeconfig {config}: the exec credential plugin of user 'kvtrace-reader' "
        "failed: it exited with status 3; run its command yourself to see why (kvtrace does not "
        "show what it printed: it may hold a token)\n"
    )
    assert apiserver.requests == []


def test_the_kubernetes_library_never_logs_to_the_terminal(apiserver):
    script = """
import logging
import kvtrace.sources.live.client
logging.getLogger("kubernetes.client.rest").error("LEAKED-FROM-A-LIBRARY-LOGGER")
print("done")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout == "done\n" and done.stderr == ""


def refresh_failing_plugin(server, marker: Path) -> dict[str, object]:
    """Gives a token that has already expired the first time, then fails (stderr: a token)."""
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": server.token, "expirationTimestamp": "2000-01-01T00:00:00Z"},
    }
    script = (
        "import json, pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        f"if marker.exists(): sys.stderr.write('token: {TOKEN}\\n'); sys.exit(4)\n"
        "marker.write_text('ran')\n"
        f"print(json.dumps({credential!r}))\n"
    )
    plugin = failing_plugin()
    plugin["exec"]["args"] = ["-c", script]  # type: ignore[index]
    return plugin


def test_an_exec_plugin_failing_at_token_refresh_is_named_too(apiserver, tmp_path):
    marker = tmp_path / "plugin-ran"
    config = kubeconfig_with(apiserver, tmp_path, user=refresh_failing_plugin(apiserver, marker))
    command = ["collect", "--kubeconfig", str(config), "-f", str(tmp_path / "b")]
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert marker.exists() and done.returncode == 1, done.stderr
    assert TOKEN not in done.stdout + done.stderr and "ERROR:root" not in done.stderr
    assert done.stderr == (
        "error: the kubeconfig's exec credential plugin failed to refresh the token: it exited "
        "with status 4; run its command yourself to see why (kvtrace does not show what it "
        "printed: it may hold a token)\n"
    )
    assert apiserver.requests == []
