"""Reading stranger-supplied bundles without trusting them.

Archives are sniffed by magic bytes and extracted member by member
(:mod:`kvtrace.sources.tarball`) into kvtrace's own temp directory (``kvtrace-*``, removed on
close, whatever went wrong). Directories are walked without following symlinks
(:mod:`kvtrace.sources.walk`). Compressed logs are read through a size-capped reader, so a gzip
bomb stops at the cap.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from kvtrace.errors import InputError, SizeCapExceeded

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
ENV_MAX_DEPTH = "KVTRACE_MAX_DEPTH"
DEFAULT_MAX_DEPTH = 64  # must-gathers nest about 12 levels; a thousand is an attack


@dataclass(frozen=True)
class Limits:
    """Caps applied to one bundle. Raise them (environment or CLI) only for trusted bundles."""

    max_members: int = 100_000
    max_total_bytes: int = 8 * GiB
    max_member_bytes: int = 2 * GiB
    max_log_bytes: int = 2 * GiB  # decompressed size of one .gz file, or of stdin
    max_depth: int = DEFAULT_MAX_DEPTH  # directory levels below the bundle root that are read

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
            max_depth=_env_int(env, ENV_MAX_DEPTH, defaults.max_depth),
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
        with decompressed(path) as stream:
            block = stream.read(_TAR_BLOCK)
    except DECODE_ERRORS:
        return False
    return len(block) == _TAR_BLOCK and block[257:262] == b"ustar"


@contextmanager
def decompressed(path: Path) -> Iterator[IO[bytes]]:
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
        remove_tree(path)


def remove_tree(root: Path) -> None:
    """Delete ``root`` and everything below it, deepest first, with an explicit stack: no
    recursion limit to hit however deep a hostile archive nested its directories. Links are
    removed, never followed; an entry that cannot be removed does not stop the rest."""
    pending: list[tuple[str, bool]] = [(str(root), False)]
    while pending:
        path, emptied = pending.pop()
        if emptied:
            _quietly(os.rmdir, path)
            continue
        pending.append((path, True))
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((entry.path, False))
                    else:
                        _quietly(os.unlink, entry.path)
        except OSError:
            continue


def _quietly(remove: Callable[[str], None], path: str) -> None:
    # Already gone, or not ours to remove: the rest of the tree still goes.
    with contextlib.suppress(OSError):
        remove(path)


def spool(stream: IO[bytes], dest: Path, cap: int, name: str) -> Path:
    """Copy ``stream`` (e.g. stdin) to ``dest`` inside temp space, at most ``cap`` bytes."""
    with dest.open("xb") as out:
        _copy_capped(stream.read, out, cap, name)
    return dest


def spool_file(source: Path, dest: Path, cap: int) -> Path:
    """Copy a file whose size the kernel does not report (a ``/proc`` file says 0 bytes) to
    ``dest``, at most ``cap`` bytes. Opened non-blocking: a file that would wait for data (such
    as ``/proc/kmsg``) raises :class:`BlockingIOError` instead of hanging."""
    with _read_without_waiting(source) as read, dest.open("xb") as out:
        _copy_capped(read, out, cap, str(source))
    return dest


def probe_readable(source: Path) -> None:
    """Read the first byte of ``source`` without waiting for it: the :class:`OSError` it
    raises (permission, ``EIO``, ``BlockingIOError``) before any real reading starts."""
    with _read_without_waiting(source) as read:
        read(1)


def unreadable(name: str, exc: OSError) -> InputError:
    """The :class:`InputError` for a file that cannot be opened or read: its name and why."""
    if isinstance(exc, BlockingIOError):
        return InputError(
            f"{name}: waits for data that may never come; save what you need to a file first"
        )
    why = exc.strerror or str(exc)
    return InputError(f"{name}: cannot be read ({why}); check the file and its permissions")


@contextmanager
def _read_without_waiting(source: Path) -> Iterator[Callable[[int], bytes]]:
    descriptor = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    try:
        yield lambda size: os.read(descriptor, size)
    finally:
        os.close(descriptor)


def _copy_capped(read: Callable[[int], bytes], out: IO[bytes], cap: int, name: str) -> None:
    copied = 0
    while chunk := read(_CHUNK):
        copied += len(chunk)
        if copied > cap:
            raise SizeCapExceeded(
                f"{name} is larger than {cap} bytes; if you trust it, "
                f"raise the cap with {ENV_MAX_LOG_BYTES}=<bytes>"
            )
        out.write(chunk)
