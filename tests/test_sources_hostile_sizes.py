"""Archives that declare huge members: refused from their tar headers, before their data is
written, and never more than the caps (or the temp directory's room) written."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from kvtrace.errors import UnsafeBundleError
from kvtrace.sources import tarball
from kvtrace.sources.safety import Limits
from kvtrace.sources.tarball import open_tree

MiB = 1024 * 1024


def _zeros_tar(path: Path, members: int, size: int) -> Path:
    """Like the review's 10 MB tar.gz of 5 x 2 GiB members, scaled down."""
    with tarfile.open(path, "w:gz") as tar:
        for index in range(members):
            info = tarfile.TarInfo(f"bundle/part{index}.log")
            info.size = size
            tar.addfile(info, io.BytesIO(b"\0" * size))
    return path


class _Written:
    """Counts the bytes extraction writes into temp space."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.total = 0
        copy = tarball._copy_at_most

        def counting(source: io.BufferedReader, out: io.BufferedWriter, size: int) -> None:
            copy(source, out, size)
            self.total += out.tell()

        monkeypatch.setattr(tarball, "_copy_at_most", counting)


def test_a_bomb_is_refused_from_its_headers_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zeros_tar(tmp_path / "bomb.tgz", members=5, size=2 * MiB)
    written = _Written(monkeypatch)
    limits = Limits(max_total_bytes=8 * MiB - 1, max_member_bytes=2 * MiB)
    with pytest.raises(UnsafeBundleError) as caught, open_tree(archive, limits):
        pass
    message = str(caught.value)
    assert "member bundle/part3.log" in message and str(8 * MiB - 1) in message
    assert "KVTRACE_MAX_BUNDLE_BYTES" in message
    assert written.total == 0


def test_the_running_total_is_checked_before_each_member_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zeros_tar(tmp_path / "bomb.tgz", members=5, size=2 * MiB)
    monkeypatch.setattr(tarball, "survey_tar", lambda archive, dest, limits: None)
    written = _Written(monkeypatch)
    limits = Limits(max_total_bytes=8 * MiB - 1, max_member_bytes=2 * MiB)
    with pytest.raises(UnsafeBundleError, match=r"part3\.log"), open_tree(archive, limits):
        pass
    assert written.total == 3 * 2 * MiB <= limits.max_total_bytes


def test_an_oversized_member_is_refused_before_any_of_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zeros_tar(tmp_path / "one.tgz", members=1, size=3 * MiB)
    written = _Written(monkeypatch)
    with (
        pytest.raises(UnsafeBundleError, match=r"bundle/part0\.log.*KVTRACE_MAX_MEMBER_BYTES"),
        open_tree(archive, Limits(max_member_bytes=2 * MiB)),
    ):
        pass
    assert written.total == 0


@pytest.mark.parametrize(("survey", "what"), [(True, "unpacks to 4194304 bytes"), (False, "part0")])
def test_a_bundle_the_temp_directory_has_no_room_for_is_refused_unwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, survey: bool, what: str
) -> None:
    archive = _zeros_tar(tmp_path / "fill.tgz", members=2, size=2 * MiB)
    if not survey:
        monkeypatch.setattr(tarball, "survey_tar", lambda archive, dest, limits: None)
    written = _Written(monkeypatch)
    real = tarball.shutil.disk_usage
    monkeypatch.setattr(
        tarball.shutil, "disk_usage", lambda path: real(path)._replace(free=2 * MiB)
    )
    # Just above the bundle's 4 MiB: the cap passes it; the survey runs (gzip could hold more).
    limits = Limits(max_total_bytes=4 * MiB + 1)
    with pytest.raises(UnsafeBundleError) as caught, open_tree(archive, limits):
        pass
    message = str(caught.value)
    assert what in message and "TMPDIR" in message and f"only {2 * MiB} bytes are free" in message
    assert written.total == 0


def test_only_an_archive_that_could_pass_the_cap_is_surveyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: list[str] = []
    stream = tarball._tar_stream

    def counted(archive: Path, budget: object) -> object:
        passes.append(archive.name)
        return stream(archive, budget)  # type: ignore[arg-type]

    monkeypatch.setattr(tarball, "_tar_stream", counted)
    small = _zeros_tar(tmp_path / "small.tgz", members=2, size=1000)
    with open_tree(small, Limits(max_total_bytes=10 * MiB)) as tree:
        assert len(tree.files) == 2
    assert passes == ["small.tgz"]
    with open_tree(small, Limits(max_total_bytes=100_000)):
        pass
    assert passes == ["small.tgz", "small.tgz", "small.tgz"]
