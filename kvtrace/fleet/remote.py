"""Open a bundle where it is: a local path, or an fsspec URL (``s3://``, ``gs://``, ``abfs://``,
``http(s)://``, …) the process can reach — the one module that imports fsspec.

A remote bundle (an archive, or a directory of a bundle's files) is copied into kvtrace's own
temp space first, after its size is checked against the bundle cap (docs/safety.md), and then
read by the same bundle reader as a local one. The protocol's own package (s3fs, gcsfs, adlfs)
must be installed where the task runs; fsspec names it when it is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kvtrace.errors import InputError, SizeCapExceeded
from kvtrace.evidence import Evidence
from kvtrace.fleet.results import BundleSource
from kvtrace.sources.bundle import open_bundle, open_bundles
from kvtrace.sources.safety import Limits, temp_space
from kvtrace.sources.walk import walk_directory


def is_url(location: str) -> bool:
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.isidentifier() and scheme != "file"


def local_path(location: str) -> str:
    return location.removeprefix("file://")


@contextmanager
def open_source(source: BundleSource) -> Iterator[Evidence]:
    """The evidence of one bundle (its temp space removed on exit)."""
    with open_sources(source) as bundles:
        for _, evidence in bundles:
            yield evidence
            return
        raise InputError(f"{source.name}: no bundle in it")


@contextmanager
def open_sources(source: BundleSource) -> Iterator[Iterator[tuple[str, Evidence]]]:
    """Every bundle of a source, one at a time, labelled by its root (``.``: the source itself);
    a member of a directory is that one bundle."""
    limits = Limits.from_env()
    if not is_url(source.location):
        with open_local(Path(local_path(source.location)), source.member, limits) as bundles:
            yield bundles
        return
    with temp_space() as scratch:
        copy = fetch(source.location, scratch / "bundle", limits)
        with open_local(copy, source.member, limits) as bundles:
            yield _renamed(bundles, source.location)


def _renamed(
    bundles: Iterator[tuple[str, Evidence]], origin: str
) -> Iterator[tuple[str, Evidence]]:
    for label, evidence in bundles:
        evidence.origin = origin if label == "." else f"{origin}#{label}"
        yield label, evidence


@contextmanager
def open_local(path: Path, member: str, limits: Limits) -> Iterator[Iterator[tuple[str, Evidence]]]:
    """A directory's member is opened alone; an archive's is found among its bundles."""
    if member and path.is_dir():
        with open_bundle(path / member, limits) as evidence:
            yield iter([(".", evidence)])
        return
    with open_bundles(path, limits) as bundles:
        yield bundles if not member else _only(bundles, member)


def _only(bundles: Iterator[tuple[str, Evidence]], member: str) -> Iterator[tuple[str, Evidence]]:
    for label, evidence in bundles:
        if label == member:
            yield label, evidence


def fetch(url: str, dest: Path, limits: Limits) -> Path:
    """Copy the bundle at ``url`` (a file or a directory tree) to ``dest``."""
    fs, path = _filesystem(url)
    try:
        size = int(fs.du(path, total=True))
        if size > limits.max_total_bytes:
            raise SizeCapExceeded(
                f"{url}: {size} bytes, more than the bundle cap of {limits.max_total_bytes}; "
                "raise KVTRACE_MAX_BUNDLE_BYTES for a bundle you trust (docs/safety.md)"
            )
        if fs.isdir(path):
            fs.get(path.rstrip("/") + "/", str(dest), recursive=True)
            return dest
        fs.get(path, str(dest))
        return dest
    except FileNotFoundError:
        raise InputError(f"{url}: no such bundle; check the URL and the bucket") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{url}: cannot be read: {exc}") from None


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise InputError(
            f"{url}: reading bundles from URLs needs fsspec: pip install 'kvtrace[fleet]'"
        ) from None
    try:
        return url_to_fs(url)  # type: ignore[no-any-return]
    except (ImportError, ValueError) as exc:
        raise InputError(f"{url}: {exc} (install the protocol's package, e.g. s3fs)") from None


def size(location: str) -> int | None:
    """Bytes of a bundle (a file, or a directory's files), None when unknown."""
    if not is_url(location):
        return _local_size(Path(local_path(location)))
    fs, path = _filesystem(location)
    try:
        return int(fs.du(path, total=True))
    except (OSError, ValueError):
        return None


def _local_size(path: Path) -> int | None:
    try:
        if not path.is_dir():
            return path.stat().st_size
        tree = walk_directory(path)  # no recursion, no links followed
        return sum((path / name).stat().st_size for name in tree.files)
    except OSError:
        return None


def glob(pattern: str) -> list[str]:
    """The URLs a remote glob matches, sorted, with their protocol."""
    fs, path = _filesystem(pattern)
    return sorted(str(fs.unstrip_protocol(found)) for found in fs.glob(path))
