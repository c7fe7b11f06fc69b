"""Opening a bundle as a tree of files: a directory as it is, a tar archive extracted member by
member into kvtrace's own temp space.

Nothing is ever written outside that space: absolute names and ``..`` are refused, links,
devices and FIFOs are reported and never created, members nested deeper than
``Limits.max_depth`` are reported and not written. Each member's declared size (its tar header
comes before its data) is checked against the member cap, the running total, and the free space
of the temp directory before a byte of it is written; the copy itself stops at the declared size.
"""

from __future__ import annotations

import io
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from kvtrace.errors import InputError, UnsafeBundleError
from kvtrace.sources.safety import (
    DECODE_ERRORS,
    ENV_MAX_BUNDLE_BYTES,
    ENV_MAX_MEMBER_BYTES,
    ENV_MAX_MEMBERS,
    CappedReader,
    Limits,
    compression_of,
    decompressed,
    is_tar,
    probe_readable,
    spool_file,
    temp_space,
    unreadable,
)
from kvtrace.sources.walk import BundleTree, is_inside, too_deep_reason, walk_directory

if TYPE_CHECKING:
    import tarfile  # imported where an archive is read: a directory bundle never needs it

_CHUNK = 256 * 1024
_TAR_BLOCK = 512
# Extraction never takes the temp directory's last tenth: the machine keeps working.
_FREE_SHARE = 0.9
Skipped = list[tuple[str, str]]
# Deflate expands at most 1032:1 and a plain tar not at all; bzip2 and xz have no such bound.
_MAX_RATIO: dict[str | None, int] = {None: 1, "gzip": 1032}


@contextmanager
def open_tree(path: Path, limits: Limits | None = None) -> Iterator[BundleTree]:
    """The files of a directory, an archive (extracted to temp space) or a single file."""
    limits = limits or Limits.from_env()
    if path.is_dir():
        _check_listable(path)
        yield walk_directory(path, limits.max_depth)
        return
    if not path.is_file():
        raise InputError(f"{path}: not a file or directory; pass a bundle directory or archive")
    _check_readable(path)
    kind = compression_of(path)
    if kind == "zip":
        raise InputError(f"{path}: zip archives are not read; unzip it and pass the directory")
    if not is_tar(path):
        with _single_file(path, limits) as tree:
            yield tree
        return
    with temp_space() as scratch:
        skipped = extract_tar(path, scratch, limits)
        tree = walk_directory(scratch, limits.max_depth)
        tree.origin, tree.archive = str(path), kind or "tar"
        tree.skipped[:0] = skipped
        yield tree


def _check_readable(path: Path) -> None:
    try:
        probe_readable(path)
    except OSError as exc:
        raise unreadable(str(path), exc) from None


def _check_listable(path: Path) -> None:
    try:
        with os.scandir(path):
            pass
    except OSError as exc:
        raise unreadable(str(path), exc) from None


@contextmanager
def _single_file(path: Path, limits: Limits) -> Iterator[BundleTree]:
    """One file as a tree; a file reporting 0 bytes (empty, or a ``/proc`` file that does not
    know its size) is first copied into temp space through the log cap, so it has a real one."""
    if path.stat().st_size > 0:
        yield BundleTree(root=path.parent, origin=str(path), files=[path.name])
        return
    with temp_space() as scratch:
        try:
            spool_file(path, scratch / path.name, limits.max_log_bytes)
        except OSError as exc:
            raise unreadable(str(path), exc) from None
        yield BundleTree(root=scratch, origin=str(path), files=[path.name])


def extract_tar(archive: Path, dest: Path, limits: Limits) -> Skipped:
    """Extract regular files and directories of ``archive`` under ``dest``; report the rest."""
    import tarfile

    survey_tar(archive, dest, limits)
    skipped: Skipped = []
    budget = _Budget(archive, dest, limits)
    try:
        with _tar_stream(archive, budget) as tar:
            for member in tar:
                _extract_member(tar, member, dest, budget, skipped)
    except (tarfile.TarError, *DECODE_ERRORS) as exc:
        _damaged(archive, budget.members, exc, skipped)
    skipped.extend(budget.too_deep_skips())
    return skipped


def survey_tar(archive: Path, dest: Path, limits: Limits) -> None:
    """Read every header, writing nothing, when ``archive`` could unpack past the caps: a bomb
    is refused from the header of the member that crosses a cap, before any data is written,
    and so is a bundle the temp directory has no room for. Archives too small to reach the
    total cap are not surveyed (the extraction's own checks suffice)."""
    import tarfile

    ratio = _MAX_RATIO.get(compression_of(archive))
    if ratio is not None and archive.stat().st_size * ratio <= limits.max_total_bytes:
        return
    budget = _Budget(archive, dest, limits)
    writes = 0
    try:
        with _tar_stream(archive, budget) as tar:
            for member in tar:
                budget.admit(member)
                parts, reason = _admissible(member)
                if reason is None and member.isreg() and len(parts) <= limits.max_depth:
                    writes += member.size
    except (tarfile.TarError, *DECODE_ERRORS):
        pass  # damaged: the extraction keeps and reports what can be read
    budget.check_room(f"unpacks to {writes} bytes", writes)


@contextmanager
def _tar_stream(archive: Path, budget: _Budget) -> Iterator[tarfile.TarFile]:
    import tarfile

    with decompressed(archive) as stream:
        counted = CappedReader(stream, budget.stream_cap(), str(archive), ENV_MAX_BUNDLE_BYTES)
        with tarfile.open(fileobj=io.BufferedReader(counted, _CHUNK), mode="r|") as tar:
            yield tar


def _damaged(archive: Path, members: int, exc: Exception, skipped: Skipped) -> None:
    if members == 0:
        raise InputError(
            f"{archive}: not a readable tar archive ({exc}); re-download or re-pack it"
        )
    skipped.append((archive.name, f"archive damaged after {members} member(s): {exc}"))


class _Budget:
    """Running member count and byte total of one archive, checked against the caps before a
    member is written; members nested too deep are counted per directory where they were cut."""

    def __init__(self, archive: Path, dest: Path, limits: Limits) -> None:
        self.archive, self.dest, self.limits = archive, dest, limits
        self.members = 0
        self.total = 0
        self.too_deep: Counter[str] = Counter()

    def stream_cap(self) -> int:
        # Headers and padding on top of the content: bounds pax headers and trailing junk too.
        return self.limits.max_total_bytes + 3 * _TAR_BLOCK * (self.limits.max_members + 2)

    def admit(self, member: tarfile.TarInfo) -> None:
        """Count ``member`` (its data is read from the stream even when it is not written)."""
        self.members += 1
        if self.members > self.limits.max_members:
            self._refuse(f"has more than {self.limits.max_members} members", ENV_MAX_MEMBERS)
        if member.size > self.limits.max_member_bytes:
            what = f"member {member.name} declares {member.size} bytes"
            self._refuse(
                f"{what}, over the per-member cap of {self.limits.max_member_bytes}",
                ENV_MAX_MEMBER_BYTES,
            )
        self.total += member.size
        if self.total > self.limits.max_total_bytes:
            what = (
                f"member {member.name} ({member.size} bytes) brings the total to {self.total} "
                f"bytes, over the cap of {self.limits.max_total_bytes}"
            )
            self._refuse(what, ENV_MAX_BUNDLE_BYTES)

    def check_room(self, what: str, size: int) -> None:
        """Refuse ``size`` bytes the temp directory has no room for, before writing any."""
        free = shutil.disk_usage(self.dest).free
        if size > free * _FREE_SHARE:
            raise UnsafeBundleError(
                f"bundle {self.archive} {what} but only {free} bytes are free in the temp "
                f"directory {self.dest.parent}; point TMPDIR at a disk with more room, or unpack "
                "the archive yourself and pass the directory"
            )

    def cut_if_too_deep(self, member: tarfile.TarInfo, parts: list[str]) -> bool:
        """True when a member lies more than ``max_depth`` levels down; files are counted (a
        directory that deep holds nothing kvtrace could read)."""
        depth = self.limits.max_depth
        if len(parts) <= depth:
            return False
        if not member.isdir():
            self.too_deep["/".join(parts[:depth])] += 1
        return True

    def too_deep_skips(self) -> Skipped:
        depth = self.limits.max_depth
        return [(cut, too_deep_reason(n, depth)) for cut, n in sorted(self.too_deep.items())]

    def _refuse(self, what: str, env: str) -> None:
        raise UnsafeBundleError(
            f"bundle {self.archive} {what}; if you trust this bundle, raise the cap with {env}=<n>"
        )


def _extract_member(
    tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, budget: _Budget, skipped: Skipped
) -> None:
    budget.admit(member)
    parts, reason = _admissible(member)
    if reason is not None:
        skipped.append((member.name, reason))
        return
    if budget.cut_if_too_deep(member, parts):
        return
    try:
        if member.isdir():
            make_directories(dest, parts)
        else:
            budget.check_room(f"member {member.name} declares {member.size} bytes", member.size)
            _write_member(tar, member, dest, parts)
    except OSError as exc:
        skipped.append((member.name, f"could not extract: {exc.strerror or exc}"))


def _admissible(member: tarfile.TarInfo) -> tuple[list[str], str | None]:
    """The member's path components, or why it is not created."""
    parts, reason = safe_parts(member.name)
    return parts, reason if reason is not None else _refused_type(member)


def safe_parts(name: str) -> tuple[list[str], str | None]:
    """Path components of an archive member name, or the reason it would leave the bundle."""
    if name.startswith("/"):
        return [], "absolute name refused (would write outside the bundle)"
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        return [], "'..' in name refused (would write outside the bundle)"
    if not parts:
        return [], "empty member name"
    return parts, None


def _refused_type(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return f"symlink to {member.linkname!r} not created"
    if member.islnk():
        return f"hardlink to {member.linkname!r} not created"
    if member.ischr() or member.isblk():
        return "device file not created"
    if member.isfifo():
        return "FIFO not created"
    if not (member.isreg() or member.isdir()):
        return f"unsupported member type {member.type!r}"
    return None


def make_directories(dest: Path, parts: list[str]) -> Path:
    """Create ``dest/parts…`` one level at a time (``Path.mkdir(parents=True)`` recurses once
    per missing level); refuses a level that resolves outside ``dest``."""
    here = dest
    for part in parts:
        here = here / part
        if not here.is_dir():
            here.mkdir(mode=0o700)
    if not is_inside(here, dest):
        raise OSError(f"{here} resolves outside the extraction directory")
    return here


def _write_member(
    tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, parts: list[str]
) -> None:
    target = make_directories(dest, parts[:-1]) / parts[-1]
    source = tar.extractfile(member)
    if source is None:
        raise OSError("no data for a regular file")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with source, os.fdopen(os.open(target, flags, 0o600), "wb") as out:
        _copy_at_most(source, out, member.size)


def _copy_at_most(source: IO[bytes], out: IO[bytes], size: int) -> None:
    """Copy the member's data, never more than its declared (and admitted) size."""
    left = size
    while left > 0 and (chunk := source.read(min(_CHUNK, left))):
        out.write(chunk)
        left -= len(chunk)
