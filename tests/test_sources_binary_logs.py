"""A binary file given with --log, or met in a plain directory, is a reported skip, never a log
source counted without a word (issue 17)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from kvtrace.sources.bundle import open_bundle, open_logs
from kvtrace.sources.layouts.plain import looks_binary
from tests.conftest import SAMPLES
from tests.helpers import run_cli

LOG = next((SAMPLES / "always-restart" / "logs").rglob("current.log"))


def _noise(size: int = 4096, seed: int = 3) -> bytes:
    """Bytes with no NUL and no newline: no text, but nothing a NUL check alone catches."""
    rng = random.Random(seed)
    return bytes(rng.choice([b for b in range(1, 256) if b != 10]) for _ in range(size))


def _elf() -> bytes:
    return b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + _noise(2000)


@pytest.mark.parametrize("content", [_elf(), _noise()], ids=["nul-bytes", "not-text"])
def test_binary_log_file_is_skipped_with_its_reason(tmp_path, content):
    binary = tmp_path / "core.log"
    binary.write_bytes(content)
    with open_logs([str(binary), str(LOG)]) as evidence:
        assert [s.info.source_id for s in evidence.logs] == [str(LOG)]
        ((path, reason),) = evidence.skipped
    assert path == str(binary) and reason.startswith("binary file")


def test_compressed_binary_is_judged_by_its_content(tmp_path):
    packed = tmp_path / "dump.gz"
    packed.write_bytes(gzip.compress(_elf()))
    with open_logs([str(packed)]) as evidence:
        assert evidence.logs == [] and evidence.skipped[0][1].startswith("binary file")


def test_binary_from_stdin_is_skipped(tmp_path):
    stdin = (tmp_path / "in").open("w+b")
    stdin.write(_noise())
    stdin.seek(0)
    with open_logs(["-"], stdin=stdin) as evidence:
        assert evidence.logs == [] and evidence.skipped[0][0] == "stdin"


def test_binary_in_a_plain_directory_is_skipped(tmp_path):
    (tmp_path / "virt-controller.log").write_bytes(LOG.read_bytes())
    (tmp_path / "strace.out").write_bytes(_noise())
    with open_bundle(tmp_path) as evidence:
        assert [Path(s.info.source_id).name for s in evidence.logs] == ["virt-controller.log"]
        assert dict(evidence.skipped)["strace.out"].startswith("binary file")


def test_text_with_a_few_damaged_bytes_stays_a_log():
    text = LOG.read_bytes()[:2048]
    damaged = text[:100] + b"\xff\xfe" + text[100:500] + b"\x1b[0m" + text[500:]
    assert not looks_binary(damaged)
    assert looks_binary(_noise()) and looks_binary(_elf())


def test_cli_names_the_skipped_binary(capsys, tmp_path):
    binary = tmp_path / "core.log"
    binary.write_bytes(_elf())
    code, out, err = run_cli(capsys, "timeline", "default/testvm", "--log", str(binary))
    assert code == 1 and out == ""
    assert f"{binary}: binary file" in err and "--log reads text logs" in err


def test_text_lines_before_a_nul_run_are_a_log_with_a_damaged_tail(tmp_path):
    """A node that lost power leaves zeros after the last line written: the lines are evidence."""
    lines = LOG.read_bytes().splitlines(keepends=True)[:2]
    damaged = tmp_path / "current.log"
    damaged.write_bytes(b"".join(lines) + bytes(16384))
    assert not looks_binary(damaged.read_bytes()[:65536])
    with open_logs([str(damaged)]) as evidence:
        assert [s.info.source_id for s in evidence.logs] == [str(damaged)]
        assert evidence.skipped == []


def test_a_nul_in_the_first_line_is_binary():
    assert looks_binary(b'{"level":"info"\x00}\n' + b"x" * 100)
