"""Read-only and quiet about secrets: only GETs, never refused paths, no token anywhere.

Also: ``kvtrace --help`` and offline commands never import the Kubernetes client.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
import urllib.request

import pytest

from kvtrace.errors import ReadOnlyViolation
from kvtrace.sources.live.client import connect
from kvtrace.sources.live.settings import ClusterSettings
from tests.apiserver.fixture import ROOT, SOURCE, apiserver, bundle_files, kvtrace

__all__ = ["apiserver"]

LIVE_COMMANDS = [
    ("timeline", "default/testvm"),
    ("check",),
    ("check", "-A"),
    ("collect", "-f", "{tmp}/bundle.tar.gz"),
    ("collect", "-f", "{tmp}/dir", "--vm", "testvm", "--since", "2h"),
    ("rules",),
]


def run_everything(capsys, server, tmp_path, *extra: str) -> list[tuple[int, str, str]]:
    results = []
    for command in LIVE_COMMANDS:
        args = [a.format(tmp=tmp_path) for a in command]
        live = [] if args[0] == "rules" else ["--kubeconfig", str(server.kubeconfig), *extra]
        results.append(kvtrace(capsys, *args, *live))
    return results


def test_every_command_run_live_sends_only_gets(apiserver, tmp_path, capsys):
    results = run_everything(capsys, apiserver, tmp_path)
    assert [code for code, _, _ in results] == [0, 0, 0, 0, 0, 0]
    methods = {r.method for r in apiserver.requests}
    assert methods == {"GET"} and len(apiserver.requests) > 50


def test_the_recorder_would_see_a_write(apiserver):
    """The server records and refuses other methods, so the GET-only assertion has teeth."""
    context = ssl.create_default_context(cafile=str(apiserver.ca))
    request = urllib.request.Request(
        f"{apiserver.url}/api/v1/namespaces/default/pods", method="POST"
    )
    request.add_header("Authorization", f"Bearer {apiserver.token}")
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, context=context, timeout=5)
    assert raised.value.code == 405
    assert [(r.method, r.status) for r in apiserver.requests] == [("POST", 405)]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/namespaces/default/pods"),
        ("DELETE", "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/testvm"),
        ("GET", "/api/v1/namespaces/default/secrets"),
        ("GET", "/api/v1/namespaces/default/pods/p/exec"),
        ("GET", "/api/v1/namespaces/default/pods/p/portforward"),
        ("GET", "/api/v1/namespaces/default/pods/p/attach"),
        ("GET", "/api/v1/namespaces/default/services/s/proxy"),
    ],
)
def test_the_choke_point_refuses_before_sending(apiserver, method, path):
    connection = connect(ClusterSettings(kubeconfig=str(apiserver.kubeconfig)))
    try:
        with pytest.raises(ReadOnlyViolation):
            connection.send(method, path)
    finally:
        connection.close()
    assert apiserver.requests == []


def test_no_token_in_any_output_or_bundle_file(apiserver, tmp_path, capsys):
    results = run_everything(capsys, apiserver, tmp_path, "-v")
    token = apiserver.token
    verbose = "".join(err for _, _, err in results)
    assert "GET /version 200" in verbose and "Bearer" not in verbose
    for code, out, err in results:
        assert code == 0 and token not in out and token not in err
    for bundle in (tmp_path / "bundle.tar.gz", tmp_path / "dir"):
        files = bundle_files(bundle)
        assert "manifest.json" in files and len(files) > 5
        assert not [name for name, raw in files.items() if token.encode() in raw]
    assert token.encode() not in (tmp_path / "bundle.tar.gz").read_bytes()


def test_offline_commands_never_import_the_kubernetes_client():
    bundle = str(SOURCE)
    script = f"""
import sys
from kvtrace.cli import run
for argv in (["--help"], ["collect", "--help"], ["timeline", "default/testvm", "--bundle", {bundle!r}],
             ["check", "--bundle", {bundle!r}], ["rules"], ["timeline", "--help"]):
    run(argv)
print(sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes.")))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


def test_live_mode_imports_it_only_then(apiserver):
    script = f"""
import sys
from kvtrace.cli import run
run(["timeline", "default/testvm", "-q", "--kubeconfig", {str(apiserver.kubeconfig)!r}])
print("kubernetes" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "True"
