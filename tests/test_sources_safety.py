"""kvtrace.sources.safety: archives from strangers never write outside kvtrace's temp dir."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvtrace.errors import InputError, SizeCapExceeded, UnsafeBundleError
from kvtrace.sources.bundle import open_bundle
from kvtrace.sources.safety import Limits, check_decompressed_size, open_capped
from kvtrace.sources.tarball import open_tree, safe_parts
from kvtrace.sources.walk import walk_directory


def _add(
    tar: tarfile.TarFile,
    name: str,
    data: bytes = b"x\n",
    kind: bytes = tarfile.REGTYPE,
    link: str = "",
) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def _hostile_tar(path: Path, mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        _add(tar, "../evil", b"escaped\n")
        _add(tar, "ok/../../evil2", b"escaped\n")
        _add(tar, "/tmp/kvtrace-abs-evil", b"escaped\n")
        _add(tar, "./bundle/app.log", b'{"level":"info","msg":"hello"}\n')
        _add(tar, "bundle/passwd", kind=tarfile.SYMTYPE, link="/etc/passwd")
        _add(tar, "bundle/hard", kind=tarfile.LNKTYPE, link="bundle/app.log")
        _add(tar, "bundle/dev", kind=tarfile.CHRTYPE)
        _add(tar, "bundle/fifo", kind=tarfile.FIFOTYPE)
    return path


def _listing(path: Path) -> set[str]:
    return {str(p) for p in path.rglob("*")}


def _kvtrace_temp_dirs() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("kvtrace-")}


@pytest.mark.parametrize("mode", ["w:gz", "w", "w:bz2", "w:xz"])
def test_hostile_tar_is_contained_and_reported(tmp_path: Path, mode: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = _hostile_tar(work / "bundle.dat", mode)  # no telling extension: sniffed by magic
    before_parent, before_temp = _listing(tmp_path), _kvtrace_temp_dirs()
    with open_tree(archive) as tree:
        assert tree.files == ["bundle/app.log"]
        reasons = dict(tree.skipped)
        root = tree.root
        assert root.name.startswith("kvtrace-")
        assert (root / "bundle/app.log").read_bytes().startswith(b'{"level"')
    assert "'..'" in reasons["../evil"] and "'..'" in reasons["ok/../../evil2"]
    assert "absolute" in reasons["/tmp/kvtrace-abs-evil"]
    assert "symlink" in reasons["bundle/passwd"] and "hardlink" in reasons["bundle/hard"]
    assert "device" in reasons["bundle/dev"] and "FIFO" in reasons["bundle/fifo"]
    assert _listing(tmp_path) == before_parent
    assert not Path("/tmp/kvtrace-abs-evil").exists()
    assert not root.exists()
    assert _kvtrace_temp_dirs() == before_temp


def test_temp_dir_is_removed_when_the_reader_raises(tmp_path: Path) -> None:
    archive = _hostile_tar(tmp_path / "b.tgz")
    with pytest.raises(RuntimeError), open_tree(archive) as tree:
        root = tree.root
        raise RuntimeError("reader failed")
    assert not root.exists()


def test_member_count_cap_raises_naming_bundle_cap_and_fix(tmp_path: Path) -> None:
    archive = tmp_path / "many.tar"
    with tarfile.open(archive, "w") as tar:
        for index in range(12):
            _add(tar, f"f{index}.log")
    with pytest.raises(UnsafeBundleError) as caught, open_tree(archive, Limits(max_members=10)):
        pass
    message = str(caught.value)
    assert str(archive) in message and "10 members" in message and "KVTRACE_MAX_MEMBERS" in message


def test_total_size_cap(tmp_path: Path) -> None:
    archive = tmp_path / "big.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for index in range(4):
            _add(tar, f"f{index}.log", b"a" * 4000)
    limits = Limits(max_total_bytes=10_000)
    with (
        pytest.raises(UnsafeBundleError, match="KVTRACE_MAX_BUNDLE_BYTES"),
        open_tree(archive, limits),
    ):
        pass


def test_per_member_size_cap(tmp_path: Path) -> None:
    archive = tmp_path / "member.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        _add(tar, "huge.log", b"z" * 50_000)
    limits = Limits(max_member_bytes=1000)
    pattern = r"huge\.log.*KVTRACE_MAX_MEMBER_BYTES"
    with pytest.raises(UnsafeBundleError, match=pattern), open_tree(archive, limits):
        pass


def test_nested_gzip_bomb_is_a_reported_skip(tmp_path: Path) -> None:
    bundle = tmp_path / "dir"
    bundle.mkdir()
    (bundle / "bomb.log.gz").write_bytes(gzip.compress(b"\0" * 5_000_000))
    (bundle / "fine.log").write_text("I0307 09:13:58.100214       1 hello\n")
    limits = Limits(max_log_bytes=100_000)
    reason = check_decompressed_size(bundle / "bomb.log.gz", limits.max_log_bytes, "bomb.log.gz")
    assert reason is not None and "KVTRACE_MAX_LOG_BYTES" in reason
    with open_bundle(bundle, limits) as evidence:
        assert [log.info.source_id for log in evidence.logs] == ["fine.log"]
        assert any(p == "bomb.log.gz" and "100000" in r for p, r in evidence.skipped)


def test_capped_reader_stops_early_instead_of_decompressing_everything(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"\0" * 2_000_000))
    with open_capped(bomb, 10_000) as stream, pytest.raises(SizeCapExceeded):
        stream.read()


def test_bare_gz_is_a_single_file_not_an_archive(tmp_path: Path) -> None:
    single = tmp_path / "controller.log.gz"
    single.write_bytes(gzip.compress(b'{"component":"virt-controller","msg":"x"}\n'))
    with open_tree(single) as tree:
        assert tree.files == ["controller.log.gz"] and tree.archive is None
    with open_bundle(single) as evidence:
        (log,) = evidence.logs
        with log.open() as stream:
            assert stream.read().startswith(b'{"component"')
        assert log.path is None  # compressed: not splittable by byte ranges


def test_directory_symlink_outside_root_is_skipped(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_text("password\n")
    bundle = tmp_path / "bundle"
    (bundle / "sub").mkdir(parents=True)
    (bundle / "a.log").write_text("line\n")
    (bundle / "leak.log").symlink_to(outside)
    (bundle / "inner.log").symlink_to(bundle / "a.log")
    (bundle / "linkdir").symlink_to(tmp_path)
    os.mkfifo(bundle / "pipe")
    tree = walk_directory(bundle)
    assert tree.files == ["a.log", "inner.log"]
    reasons = dict(tree.skipped)
    assert "outside" in reasons["leak.log"]
    assert "not followed" in reasons["linkdir"]
    assert "not a regular file" in reasons["pipe"]


def test_zip_is_refused_with_a_fix(tmp_path: Path) -> None:
    archive = tmp_path / "b.zip"
    archive.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(InputError, match="unzip"), open_tree(archive):
        pass


def test_truncated_archive_keeps_what_was_read(tmp_path: Path) -> None:
    archive = tmp_path / "cut.tar"
    with tarfile.open(archive, "w") as tar:
        _add(tar, "a.log", b"a\n" * 100)
        _add(tar, "b.log", b"b\n" * 5000)
    archive.write_bytes(archive.read_bytes()[:3000])
    with open_tree(archive) as tree:
        assert "a.log" in tree.files
        assert any("damaged" in reason for _, reason in tree.skipped)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("a/b.log", True),
        ("./a/./b", True),
        ("../x", False),
        ("a/../../x", False),
        ("/etc/x", False),
        ("", False),
    ],
)
def test_safe_parts(name: str, ok: bool) -> None:
    _, reason = safe_parts(name)
    assert (reason is None) == ok


def test_limits_from_env() -> None:
    limits = Limits.from_env({"KVTRACE_MAX_MEMBERS": "5", "KVTRACE_MAX_BUNDLE_BYTES": "1000"})
    assert (limits.max_members, limits.max_total_bytes) == (5, 1000)
    with pytest.raises(InputError, match="KVTRACE_MAX_MEMBERS"):
        Limits.from_env({"KVTRACE_MAX_MEMBERS": "lots"})


@settings(max_examples=60, deadline=None)
@given(
    magic=st.sampled_from([b"", b"\x1f\x8b", b"\x1f\x8b\x08\x00", b"BZh9", b"\xfd7zXZ\x00"]),
    tail=st.binary(max_size=600),
)
def test_damaged_single_files_never_crash(magic: bytes, tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "blob"
        target.write_bytes(magic + tail)
        try:
            with open_bundle(target) as evidence:
                assert evidence.logs or evidence.skipped or evidence.objects  # never silent
        except InputError as exc:
            assert str(target) in str(exc)


def test_damaged_gzip_log_inside_a_bundle_is_skipped(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    good = gzip.compress(b"line\n" * 1000)
    (bundle / "cut.log.gz").write_bytes(good[: len(good) // 2])
    (bundle / "ok.log").write_text("line\n")
    with open_bundle(bundle) as evidence:
        assert [log.info.source_id for log in evidence.logs] == ["ok.log"]
        assert any(p == "cut.log.gz" for p, _ in evidence.skipped)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    locked = bundle / "locked.log"
    locked.write_text("x\n")
    locked.chmod(0)
    with open_bundle(bundle) as evidence:
        assert any(p == "locked.log" and "unreadable" in r for p, r in evidence.skipped)
