"""Ctrl-C or SIGTERM during a partitioned ``kvtrace check``: the workers are terminated rather
than waited for, the exit code says which signal, and no process or bucket file is left behind.
The progress line is never written into a pipe."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvsim.histories import legitimate
from kvtrace.check.progress import CheckProgress

ROOT = Path(__file__).resolve().parent.parent
BIG = 12 << 20  # above kvtrace.check.run.PARTITION_MIN_BYTES: the workers run


def _big_log(path: Path) -> Path:
    """kvsim's lines of one replica, given again and again until the file is large (a log
    given many times over: every copy is read, parsed and routed before it counts as one)."""
    capture = legitimate(3, vm_count=3, minutes=20).capture()
    text = max((log.render() for log, _ in capture.logs), key=len).encode()
    with path.open("wb") as sink:
        for _ in range(BIG // len(text) + 1):
            sink.write(text)
    return path


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in found]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(
    ("how", "code", "word"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")]
)
def test_a_signal_stops_the_workers_and_leaves_nothing(tmp_path, how, code, word):
    log = _big_log(tmp_path / "virt-controller.log")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "kvtrace", "check", "-A", "--log", str(log), "-o", "json"],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell gives a foreground job
    )
    deadline = time.monotonic() + 120
    while len(_children(child.pid)) < 2 or not any(tmpdir.rglob("*.*")):
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    workers = _children(child.pid)
    if how == "SIGINT":
        os.killpg(child.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    else:
        child.send_signal(signal.SIGTERM)  # kill(1) reaches the parent alone
    out, err = child.communicate(timeout=60)
    assert child.returncode == code, err
    assert err.decode().strip().splitlines()[-1] == word and b"Traceback" not in err
    assert out == b""
    assert not [pid for pid in workers if _alive(pid)]
    assert list(tmpdir.iterdir()) == []


def test_progress_is_drawn_on_a_terminal_only():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, drawn in ((Terminal(), True), (io.StringIO(), False)):
        progress = CheckProgress(True, stream)
        progress.start("checking VMs", 2)
        progress.step()
        progress.step()
        progress.close()
        text = stream.getvalue()
        assert ("kvtrace check: checking VMs 2/2" in text) is drawn
        assert text.endswith("\r") if drawn else text == ""
    quiet = Terminal()
    CheckProgress(False, quiet).start("reading logs", 3)
    assert quiet.getvalue() == ""
