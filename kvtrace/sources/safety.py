"""Reading stranger-supplied bundles without trusting them.

Archives are sniffed by magic bytes and extracted member by member into kvtrace's own temp
directory (``kvtrace-*``, removed on close). Nothing is ever written elsewhere: absolute names and
``..`` are refused, links, devices and FIFOs are reported and never created, and member count,
member size and total size are capped. Directories are walked without following symlinks.
Compressed logs are read through a size-capped reader, so a gzip bomb stops at the cap.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from kvtrace.errors import InputError, SizeCapExceeded, UnsafeBundleError
from kvtrace.sources.walk import BundleTree, is_inside, walk_directory

KiB = 1024
GiB = 1024**3
_CHUNK = 256 * KiB
_TAR_BLOCK = 512

# What reading a damaged or unreadable (compressed) file can raise.
DECODE_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)

ENV_MAX_MEMBERS = "KVTRACE_MAX_MEMBERS"
ENV_MAX_BUNDLE_BYTES = "KVTRACE_MAX_BUNDLE_BYTES"
ENV_MAX_MEMBER_BYTES = "KVTRACE_MAX_MEMBER_BYTES"
ENV_MAX_LOG_BYTES = "KVTRACE_MAX_LOG_BYTES"


@dataclass(frozen=True)
class Limits:
    """Caps applied to one bundle. Raise them (environment or CLI) only for trusted bundles."""

    max_members: int = 100_000
    max_total_bytes: int = 8 * GiB
    max_member_bytes: int = 2 * GiB
    max_log_bytes: int = 2 * GiB  # decompressed size of one .gz file, or of stdin

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """Defaults overridden by ``KVTRACE_MAX_*`` variables (bad values are a usage error)."""
        env = os.environ if env is None else env
        defaults = cls()
        return cls(
            max_members=_env_int(env, ENV_MAX_MEMBERS, defaults.max_members),
            max_total_bytes=_env_int(env, ENV_MAX_BUNDLE_BYTES, defaults.max_total_bytes),
            max_member_bytes=_env_int(env, ENV_MAX_MEMBER_BYTES, defaults.max_member_bytes),
            max_log_bytes=_env_int(env, ENV_MAX_LOG_BYTES, defaults.max_log_bytes),
        )


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        raise InputError(
            f"{name}={text!r} is not a positive number of bytes/members; fix or unset it"
        )
    return int(text)


# --- sniffing -------------------------------------------------------------------------------

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"PK\x03\x04", "zip"))


def _decompressor(path: Path, kind: str | None) -> IO[bytes] | None:
    """A decompressing reader for ``kind``, or None when the file is not compressed."""
    if kind == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.open(path, "rb")
    if kind == "xz":
        return lzma.open(path, "rb")
    return None


def compression_of(path: Path) -> str | None:
    """``gzip``/``bzip2``/``xz``/``zip`` from the first bytes, ``None`` for anything else."""
    with path.open("rb") as handle:
        head = handle.read(8)
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def is_tar(path: Path) -> bool:
    """True for a tar archive, plain or compressed (``ustar`` at offset 257 of the tar stream)."""
    try:
        with _decompressed(path) as stream:
            block = stream.read(_TAR_BLOCK)
    except DECODE_ERRORS:
        return False
    return len(block) == _TAR_BLOCK and block[257:262] == b"ustar"


@contextmanager
def _decompressed(path: Path) -> Iterator[IO[bytes]]:
    stream = _decompressor(path, compression_of(path)) or path.open("rb")
    with stream:
        yield stream


# --- capped reading -------------------------------------------------------------------------


class CappedReader(io.RawIOBase):
    """Reads ``inner`` and raises :class:`SizeCapExceeded` once more than ``cap`` bytes came out."""

    def __init__(self, inner: IO[bytes], cap: int, name: str, cap_env: str) -> None:
        super().__init__()
        self._inner, self._cap, self._name, self._env = inner, cap, name, cap_env
        self._seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self._seen += len(data)
        if self._seen > self._cap:
            raise SizeCapExceeded(
                f"{self._name} decompresses to more than {self._cap} bytes; if you trust it, "
                f"raise the cap with {self._env}=<bytes>"
            )
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def open_capped(path: Path, cap: int, name: str | None = None) -> BinaryIO:
    """Open a file for reading; gzip/bzip2/xz content is decompressed, capped at ``cap`` bytes."""
    inner = _decompressor(path, compression_of(path))
    if inner is None:
        return path.open("rb")
    raw = CappedReader(inner, cap, name or str(path), ENV_MAX_LOG_BYTES)
    return io.BufferedReader(raw, _CHUNK)


def read_capped(path: Path, cap: int, name: str | None = None) -> bytes:
    """The whole (decompressed) content of ``path``; :class:`SizeCapExceeded` past ``cap``."""
    if compression_of(path) is None and path.stat().st_size > cap:
        raise SizeCapExceeded(
            f"{name or path} is larger than {cap} bytes; if you trust it, "
            f"raise the cap with {ENV_MAX_MEMBER_BYTES}=<bytes>"
        )
    with open_capped(path, cap, name) as stream:
        return stream.read()


def check_decompressed_size(path: Path, cap: int, name: str) -> str | None:
    """Decompress ``path`` once, stopping at ``cap``: a reason to skip it, or None when fine."""
    if compression_of(path) is None:
        return None
    try:
        with open_capped(path, cap, name) as stream:
            while stream.read(_CHUNK):
                pass
    except SizeCapExceeded as exc:
        return str(exc)
    except DECODE_ERRORS as exc:
        return f"damaged compressed file: {exc}"
    return None


# --- temp space -----------------------------------------------------------------------------


@contextmanager
def temp_space() -> Iterator[Path]:
    """A private ``kvtrace-*`` directory, removed with everything in it on exit."""
    path = Path(tempfile.mkdtemp(prefix="kvtrace-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def spool(stream: IO[bytes], dest: Path, cap: int, name: str) -> Path:
    """Copy ``stream`` (e.g. stdin) to ``dest`` inside temp space, at most ``cap`` bytes."""
    copied = 0
    with dest.open("xb") as out:
        while chunk := stream.read(_CHUNK):
            copied += len(chunk)
            if copied > cap:
                raise SizeCapExceeded(
                    f"{name} is larger than {cap} bytes; if you trust it, "
                    f"raise the cap with {ENV_MAX_LOG_BYTES}=<bytes>"
                )
            out.write(chunk)
    return dest


# --- opening a bundle as a tree of files ----------------------------------------------------


@contextmanager
def open_tree(path: Path, limits: Limits | None = None) -> Iterator[BundleTree]:
    """The files of a directory, an archive (extracted to temp space) or a single file."""
    limits = limits or Limits.from_env()
    if path.is_dir():
        yield walk_directory(path)
        return
    if not path.is_file():
        raise InputError(f"{path}: not a file or directory; pass a bundle directory or archive")
    kind = compression_of(path)
    if kind == "zip":
        raise InputError(f"{path}: zip archives are not read; unzip it and pass the directory")
    if not is_tar(path):
        yield BundleTree(root=path.parent, origin=str(path), files=[path.name])
        return
    with temp_space() as scratch:
        skipped = extract_tar(path, scratch, limits)
        tree = walk_directory(scratch)
        tree.origin, tree.archive = str(path), kind or "tar"
        tree.skipped[:0] = skipped
        yield tree


def extract_tar(archive: Path, dest: Path, limits: Limits) -> list[tuple[str, str]]:
    """Extract regular files and directories of ``archive`` under ``dest``; report the rest."""
    skipped: list[tuple[str, str]] = []
    budget = _Budget(archive, limits)
    with _decompressed(archive) as stream:
        counted = CappedReader(stream, budget.stream_cap(), str(archive), ENV_MAX_BUNDLE_BYTES)
        try:
            with tarfile.open(fileobj=io.BufferedReader(counted, _CHUNK), mode="r|") as tar:
                for member in tar:
                    _extract_member(tar, member, dest, budget, skipped)
        except (tarfile.TarError, *DECODE_ERRORS) as exc:
            _damaged(archive, budget.members, exc, skipped)
    return skipped


def _damaged(archive: Path, members: int, exc: Exception, skipped: list[tuple[str, str]]) -> None:
    if members == 0:
        raise InputError(
            f"{archive}: not a readable tar archive ({exc}); re-download or re-pack it"
        )
    skipped.append((archive.name, f"archive damaged after {members} member(s): {exc}"))


class _Budget:
    """Running member count and byte total of one archive, checked against the caps."""

    def __init__(self, archive: Path, limits: Limits) -> None:
        self.archive, self.limits = archive, limits
        self.members = 0
        self.total = 0

    def stream_cap(self) -> int:
        # Headers and padding on top of the content: bounds pax headers and trailing junk too.
        return self.limits.max_total_bytes + 3 * _TAR_BLOCK * (self.limits.max_members + 2)

    def admit(self, member: tarfile.TarInfo) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            self._refuse(f"has more than {self.limits.max_members} members", ENV_MAX_MEMBERS)
        if member.size > self.limits.max_member_bytes:
            what = f"member {member.name} is {member.size} bytes"
            self._refuse(
                f"{what}, over the per-member cap of {self.limits.max_member_bytes}",
                ENV_MAX_MEMBER_BYTES,
            )
        self.total += member.size
        if self.total > self.limits.max_total_bytes:
            what = f"unpacks to more than {self.limits.max_total_bytes} bytes"
            self._refuse(what, ENV_MAX_BUNDLE_BYTES)

    def _refuse(self, what: str, env: str) -> None:
        raise UnsafeBundleError(
            f"bundle {self.archive} {what}; if you trust this bundle, raise the cap with {env}=<n>"
        )


def _extract_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    dest: Path,
    budget: _Budget,
    skipped: list[tuple[str, str]],
) -> None:
    budget.admit(member)
    parts, reason = safe_parts(member.name)
    if reason is None:
        reason = _refused_type(member)
    if reason is not None:
        skipped.append((member.name, reason))
        return
    target = dest.joinpath(*parts)
    try:
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True, mode=0o700)
        else:
            _write_member(tar, member, target, dest)
    except OSError as exc:
        skipped.append((member.name, f"could not extract: {exc.strerror or exc}"))


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


def _write_member(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, dest: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not is_inside(target.parent, dest):
        raise OSError(f"{target.parent} resolves outside the extraction directory")
    source = tar.extractfile(member)
    if source is None:
        raise OSError("no data for a regular file")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with source, os.fdopen(os.open(target, flags, 0o600), "wb") as out:
        shutil.copyfileobj(source, out, _CHUNK)
