"""Bundles nested far deeper than any real one: read without recursion, cut at a counted depth,
and kvtrace's temp space removed whatever happened."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvtrace.errors import UnsafeBundleError
from kvtrace.sources.bundle import open_bundle
from kvtrace.sources.safety import Limits, remove_tree, temp_space
from kvtrace.sources.tarball import open_tree
from kvtrace.sources.walk import walk_directory

DEEP = 1200  # past Python's default recursion limit of 1000
LOG = b'{"component":"virt-controller","level":"info","msg":"hello"}\n'


def _kvtrace_temp_dirs() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("kvtrace-")}


def _deep_tar(path: Path, levels: int, with_dirs: bool) -> Path:
    """A tar with ``levels`` nested ``d`` directories and a log at the bottom and at the top."""
    with tarfile.open(path, "w:gz") as tar:
        if with_dirs:
            for depth in range(1, levels + 1):
                info = tarfile.TarInfo("/".join(["d"] * depth))
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
        for name in ("top.log", "/".join(["d"] * levels) + "/bottom.log"):
            info = tarfile.TarInfo(name)
            info.size = len(LOG)
            tar.addfile(info, io.BytesIO(LOG))
    return path


def _deep_directory(root: Path, levels: int) -> Path:
    here = root
    for _ in range(levels):
        here = here / "d"
        here.mkdir()
    (here / "bottom.log").write_bytes(LOG)
    (root / "top.log").write_bytes(LOG)
    return root


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path``, emptied without recursion afterwards (pytest's own cleanup recurses)."""
    yield tmp_path
    for child in tmp_path.iterdir():
        if child.is_dir():
            remove_tree(child)


@pytest.mark.parametrize("with_dirs", [False, True])
def test_deep_tar_reads_the_shallow_files_and_counts_the_deep_ones(
    scratch: Path, with_dirs: bool
) -> None:
    archive = _deep_tar(scratch / "deep.tgz", DEEP, with_dirs)
    before = _kvtrace_temp_dirs()
    with open_bundle(archive) as evidence:
        assert [log.info.source_id for log in evidence.logs] == ["top.log"]
        deep = [(path, reason) for path, reason in evidence.skipped if "levels deep" in reason]
    ((cut, reason),) = deep
    assert cut == "/".join(["d"] * 64)
    assert (
        reason.startswith("1 file(s) nested more than 64 levels") and "KVTRACE_MAX_DEPTH" in reason
    )
    assert _kvtrace_temp_dirs() == before


def test_deep_directory_bundle_is_walked_without_recursion(scratch: Path) -> None:
    (scratch / "bundle").mkdir()
    tree = walk_directory(_deep_directory(scratch / "bundle", DEEP))
    assert tree.files == ["top.log"]
    assert [(cut.count("/"), reason[:9]) for cut, reason in tree.skipped] == [(63, "1 file(s)")]


def test_the_depth_cap_is_a_limit(scratch: Path) -> None:
    archive = _deep_tar(scratch / "deep.tgz", 5, with_dirs=False)
    with open_tree(archive, Limits(max_depth=3)) as tree:
        assert tree.files == ["top.log"]
        assert [cut for cut, _ in tree.skipped] == ["d/d/d"]
    assert Limits.from_env({"KVTRACE_MAX_DEPTH": "200"}).max_depth == 200


def test_a_raised_cap_still_extracts_and_removes_a_very_deep_tree(scratch: Path) -> None:
    archive = _deep_tar(scratch / "deep.tgz", DEEP, with_dirs=True)
    before = _kvtrace_temp_dirs()
    with open_tree(archive, Limits(max_depth=DEEP + 1)) as tree:
        assert tree.files == ["/".join(["d"] * DEEP) + "/bottom.log", "top.log"]
        root = tree.root
    assert not root.exists() and _kvtrace_temp_dirs() == before


def test_temp_space_is_removed_when_the_reader_fails_inside_a_deep_tree() -> None:
    with pytest.raises(UnsafeBundleError), temp_space() as space:
        here = space
        for _ in range(DEEP):
            here = here / "d"
            here.mkdir()
        raise UnsafeBundleError("reader refused the bundle")
    assert not space.exists()
