"""Signals and I/O errors at the entry point (kvtrace/entry.py, kvtrace/cli.py, render/outputs.py):
a SIGTERM unwinds like Ctrl-C and leaves nothing behind, a Ctrl-C during the start-up imports
prints no traceback, and a failed write names the file and the fix."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.apiserver.fixture import ROOT, apiserver  # noqa: F401  (the fixture)
from tests.helpers import run_cli

SAMPLE = ROOT / "sample-logs" / "always-restart"


def _kubeconfig_with_data(server, path: Path) -> Path:
    """The test server's kubeconfig with the CA inlined: the kubernetes client then writes it
    to a temp file of its own (removed by its exit handler), as it does for client-key-data."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    ca = Path(cluster.pop("certificate-authority")).read_bytes()
    cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    path.write_text(yaml.safe_dump(config))
    return path


def _start(args: list[str], tmpdir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    command = [sys.executable, "-m", "kvtrace", *args]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _wait_for_log_request(server) -> None:
    deadline = time.monotonic() + 30
    while not any(r.path.endswith("/log") for r in server.requests):
        assert time.monotonic() < deadline, "the collection never reached a log"
        time.sleep(0.05)


@pytest.mark.parametrize("command", ["collect", "timeline"])
def test_sigterm_leaves_no_temp_staging_or_credential_file(apiserver, tmp_path, command):  # noqa: F811
    apiserver.fault(r"/log$", delay=5.0, times=None)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    kubeconfig = _kubeconfig_with_data(apiserver, tmp_path / "kubeconfig")
    out = tmp_path / "out"
    out.mkdir()
    args = {
        "collect": ["collect", "--kubeconfig", str(kubeconfig), "-f", str(out / "b.tar.gz"), "-q"],
        "timeline": ["timeline", "default/testvm", "--kubeconfig", str(kubeconfig)],
    }[command]
    child = _start(args, tmpdir)
    _wait_for_log_request(apiserver)
    assert list(tmpdir.iterdir()), "the client wrote its CA file and kvtrace its temp space"
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 143, err
    assert err.decode().strip().endswith("terminated") and b"Traceback" not in err
    assert list(tmpdir.iterdir()) == []
    assert list(out.iterdir()) == []


def test_ctrl_c_during_the_start_up_imports_prints_no_traceback(monkeypatch, capsys):
    """A KeyboardInterrupt raised while kvtrace.cli is being imported (the heavy imports)."""
    from kvtrace import entry

    class Interrupting:
        def find_spec(self, name: str, *args: object) -> None:
            if name == "kvtrace.cli":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "kvtrace.cli", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    monkeypatch.setattr(sys, "argv", ["kvtrace", "--help"])
    with pytest.raises(SystemExit) as exited:
        entry.main()
    assert exited.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_output_file_in_a_missing_directory_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "no-such-dir" / "t.json"
    args = ["timeline", "default/testvm", "--bundle", str(SAMPLE), "-o", "json"]
    code, out, err = run_cli(capsys, *args, "--output-file", str(target))
    assert (code, out) == (1, "")
    assert err == (
        f"error: cannot write --output-file {target}: its directory does not exist; "
        "create it or choose another path\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_disk_on_stdout_is_a_clear_error():
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "kvtrace",
                "timeline",
                "default/testvm",
                "--bundle",
                str(SAMPLE),
            ],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "error: cannot write the output to stdout: no space left on the device; "
        "free some or write elsewhere\n"
    )
