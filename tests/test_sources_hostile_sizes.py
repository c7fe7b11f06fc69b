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


def test_the_total_cap_is_checked_from_the_header_before_the_data(
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


def test_a_member_the_temp_directory_has_no_room_for_is_refused_unwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zeros_tar(tmp_path / "fill.tgz", members=2, size=2 * MiB)
    written = _Written(monkeypatch)
    real = tarball.shutil.disk_usage
    monkeypatch.setattr(
        tarball.shutil, "disk_usage", lambda path: real(path)._replace(free=2 * MiB)
    )
    with pytest.raises(UnsafeBundleError) as caught, open_tree(archive, Limits()):
        pass
    message = str(caught.value)
    assert "bundle/part0.log" in message and "TMPDIR" in message and str(2 * MiB) in message
    assert written.total == 0
