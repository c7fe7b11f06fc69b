"""Special files given as evidence (FIFOs, devices, /proc files, unreadable files): a clear
InputError naming the file, or the content read through the usual caps; never a hang, never an
internal error."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from kvtrace.errors import InputError, SizeCapExceeded
from kvtrace.sources.bundle import open_bundle, open_logs
from kvtrace.sources.safety import Limits
from tests.helpers import run_cli

PROC_STATUS = Path("/proc/self/status")  # a regular file that reports 0 bytes
PROC_MEM = Path("/proc/self/mem")  # reading offset 0 fails with EIO
linux_proc = pytest.mark.skipif(not PROC_STATUS.exists(), reason="needs Linux /proc")


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A reader that blocks on a FIFO or an endless device fails the test instead of hanging."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise AssertionError("reading blocked: a special file was opened as a log")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_fifo_given_as_log_is_an_input_error(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as caught, open_logs([str(fifo)]):
        pass
    message = str(caught.value)
    assert str(fifo) in message and "FIFO" in message and "--log -" in message


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_given_as_log_is_an_input_error(device: str) -> None:
    with pytest.raises(InputError, match=f"{device}: is a device"), open_logs([device]):
        pass


@linux_proc
def test_an_eio_file_given_as_log_names_the_file() -> None:
    pattern = r"/proc/self/mem: cannot be read \(Input/output error"
    with pytest.raises(InputError, match=pattern), open_logs([str(PROC_MEM)]):
        pass


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_an_unreadable_log_is_an_input_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked.log"
    locked.write_text("x\n")
    locked.chmod(0)
    pattern = r"locked\.log: cannot be read \(Permission denied"
    with pytest.raises(InputError, match=pattern), open_logs([str(locked)]):
        pass


@linux_proc
def test_a_proc_file_is_read_with_its_real_size() -> None:
    with open_logs([str(PROC_STATUS)]) as evidence:
        (log,) = evidence.logs
        assert log.info.source_id == str(PROC_STATUS)
        assert log.path is not None and log.path.stat().st_size > 0
        with log.open() as stream:
            assert stream.read().startswith(b"Name:")


@linux_proc
def test_a_proc_file_is_read_through_the_log_cap() -> None:
    with (
        pytest.raises(SizeCapExceeded, match=r"/proc/self/status.*KVTRACE_MAX_LOG_BYTES"),
        open_logs([str(PROC_STATUS)], Limits(max_log_bytes=100)),
    ):
        pass


@linux_proc
def test_a_proc_file_given_as_bundle() -> None:
    with open_bundle(PROC_STATUS) as evidence:
        assert evidence.layout == "plain" and evidence.origin == str(PROC_STATUS)
        assert [path for path, _ in evidence.skipped] + [
            log.info.source_id for log in evidence.logs
        ] == ["status"]
    with pytest.raises(InputError, match=r"/proc/self/mem: cannot be read"), open_bundle(PROC_MEM):
        pass


def test_the_cli_says_error_not_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    code, _, err = run_cli(capsys, "timeline", "default/web", "--log", str(fifo))
    assert code == 1 and err.startswith(f"error: {fifo}: is a FIFO") and "internal" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_an_unreadable_bundle_directory_is_an_input_error(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a.log").write_text("x\n")
    bundle.chmod(0)
    try:
        with pytest.raises(InputError, match=r"bundle: cannot be read"), open_bundle(bundle):
            pass
    finally:
        bundle.chmod(0o700)
