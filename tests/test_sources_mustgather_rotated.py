"""must-gather variants: rotated kubelet files under ``logs/rotated/`` (``0.log.<stamp>``,
``.log.N``, gzipped) read as earlier parts of the same container's log, and
``previous.insecure.log`` standing in for ``previous.log`` (issue 17)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from kvtrace.sources.bundle import open_bundle
from tests.conftest import SAMPLES
from tests.helpers import run_cli

SAMPLE = SAMPLES / "must-gather-always-restart"


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "mg"))


def _controller_logs(root: Path) -> list[Path]:
    return sorted(root.rglob("virt-controller/virt-controller/logs/current.log"))


def _rotate(log: Path, names: tuple[str, ...]) -> None:
    """Cut ``log`` into ``len(names) + 1`` parts: the oldest parts become the rotated files
    (``.gz`` names compressed), the newest stays the live file, as the kubelet leaves them."""
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    size = len(lines) // (len(names) + 1)
    rotated = log.parent / "rotated"
    rotated.mkdir()
    for index, name in enumerate(names):
        part = "".join(lines[index * size : (index + 1) * size]).encode()
        (rotated / name).write_bytes(gzip.compress(part) if name.endswith(".gz") else part)
    log.write_text("".join(lines[len(names) * size :]), encoding="utf-8")


def _rows(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines()]


ROTATIONS = [
    ("0.log.20261128-004000.gz", "0.log.20261128-004200"),
    ("0.log.2.gz", "0.log.1"),
]


@pytest.mark.parametrize("names", ROTATIONS, ids=["stamped", "numbered"])
def test_rotated_files_give_the_timeline_of_the_whole_log(capsys, tmp_path, names):
    expected = run_cli(capsys, "timeline", "default/testvm", "--bundle", str(SAMPLE))
    root = _copy(tmp_path)
    for log in _controller_logs(root):
        _rotate(log, names)
    got = run_cli(capsys, "timeline", "default/testvm", "--bundle", str(root))
    assert got[0] == expected[0] and got[2] == ""
    # the same lines, from three files per replica instead of one
    assert "· 6 log sources, 71 lines" in got[1] and "· 2 log sources, 71 lines" in expected[1]
    assert _rows(got[1].replace("6 log sources", "2 log sources")) == _rows(expected[1])


def test_rotated_files_are_the_same_pod_and_container(tmp_path):
    root = _copy(tmp_path)
    (log,) = _controller_logs(root)[:1]
    _rotate(log, ROTATIONS[0])
    with open_bundle(root) as evidence:
        mine = [s for s in evidence.logs if s.info.pod == log.parents[3].name]
        assert len(mine) == 3 and {s.info.container for s in mine} == {"virt-controller"}
        # no previous.log: the container had one instance, which the rotated files continue
        assert [s.info.instance for s in mine] == ["current"] * 3
        assert not any("rotated" in path for path, _ in evidence.skipped)


def test_files_in_rotated_that_are_no_kubelet_rotation_are_not_read(tmp_path):
    root = _copy(tmp_path)
    (log,) = _controller_logs(root)[:1]
    (log.parent / "rotated").mkdir()
    (log.parent / "rotated" / "notes.txt").write_text("not a log\n")
    with open_bundle(root) as evidence:
        assert not any(s.info.source_id.endswith("notes.txt") for s in evidence.logs)


def test_previous_insecure_log_stands_in_for_previous_log(tmp_path):
    root = _copy(tmp_path)
    (log,) = _controller_logs(root)[:1]
    shutil.copy(log, log.parent / "previous.log")
    shutil.copy(log, log.parent / "previous.insecure.log")
    with open_bundle(root) as evidence:
        previous = [s for s in evidence.logs if s.info.instance == "previous"]
        assert [Path(s.info.source_id).name for s in previous] == ["previous.insecure.log"]
        skipped = dict(evidence.skipped)
    replaced = [p for p in skipped if p.endswith("logs/previous.log")]
    assert replaced and "insecure" in skipped[replaced[0]]


def test_rotated_files_of_the_previous_instance_are_named_previous(tmp_path):
    """Both instances' files rotated: each rotated file joins the instance its times fall in."""
    root = _copy(tmp_path)
    (log,) = _controller_logs(root)[:1]
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    quarter = len(lines) // 4
    rotated = log.parent / "rotated"
    rotated.mkdir()
    (rotated / "0.log.20261128-004000.gz").write_bytes(
        gzip.compress("".join(lines[:quarter]).encode())
    )
    (log.parent / "previous.log").write_text("".join(lines[quarter : 2 * quarter]))
    (rotated / "1.log.20261128-004300").write_text("".join(lines[2 * quarter : 3 * quarter]))
    log.write_text("".join(lines[3 * quarter :]))
    with open_bundle(root) as evidence:
        named = {
            Path(s.info.source_id).name: s.info.instance
            for s in evidence.logs
            if s.info.pod == log.parents[3].name
        }
    assert named == {
        "0.log.20261128-004000.gz": "previous",
        "previous.log": "previous",
        "1.log.20261128-004300": "current",
        "current.log": "current",
    }
