"""Which bundles a fleet check reads: every ``--bundle`` value, a glob expanded (local, or an
fsspec URL pattern such as ``s3://cases/2026-12-*/bundle.tar.gz``), in the order given, each
bundle once. A local directory holding several bundles is one source per bundle
(:func:`kvtrace.sources.bundle.bundle_roots`); an archive is one source, whose task reads every
bundle in it (:func:`kvtrace.sources.bundle.open_bundles`)."""

from __future__ import annotations

import glob as local_glob
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from kvtrace.errors import InputError, KvtraceError
from kvtrace.fleet.remote import glob as remote_glob
from kvtrace.fleet.remote import is_url, local_path
from kvtrace.fleet.results import BundleSource
from kvtrace.sources.bundle import bundle_roots
from kvtrace.sources.safety import Limits
from kvtrace.sources.tarball import open_tree
from kvtrace.sources.walk import walk_directory

GLOB_CHARS = frozenset("*?[")
ONLY_FLEET = ("parquet",)  # -o values only the fleet report has (pandas writes them)


def is_pattern(value: str) -> bool:
    return any(c in GLOB_CHARS for c in value)


def is_fleet(bundles: Sequence[str], dask: str | None, output: str) -> bool:
    """Whether ``check`` runs as a fleet check: several bundles or a pattern, Dask, or an
    output only the fleet report has. One plain bundle keeps the single-bundle report."""
    several = len(bundles) > 1 or any(map(is_pattern, bundles))
    return several or bool(dask) or output in ONLY_FLEET or _holds_several(bundles)


def _holds_several(bundles: Sequence[str]) -> bool:
    """One local directory holding several bundles (an archive is known only once unpacked: its
    task reads each of its bundles, and a single one says which it holds)."""
    return len(bundles) == 1 and len(_directory_bundles(bundles[0])) > 1


def holds_several(location: str) -> bool:
    """Whether a local archive holds several bundles (unpacked to see: asked only once the
    single-bundle check has refused it)."""
    path = Path(local_path(location))
    if is_url(location) or not path.is_file():
        return False
    try:
        with open_tree(path, Limits.from_env()) as tree:
            return len(bundle_roots(tree)) > 1
    except KvtraceError:
        return False


def discover(values: Sequence[str]) -> list[BundleSource]:
    """The bundles the values name, each once, in the order given."""
    found: dict[BundleSource, None] = {}
    for value in values:
        found.update(dict.fromkeys(_expand(value)))
    return list(found)


def _expand(value: str) -> list[BundleSource]:
    if not is_pattern(value):
        return _bundles_in(value)
    matches = remote_glob(value) if is_url(value) else sorted(local_glob.glob(local_path(value)))
    if not matches:
        raise InputError(
            f"--bundle {value}: the pattern matches no file or directory; check it, and quote "
            "it so that the shell does not expand it first"
        )
    return [source for match in matches for source in _bundles_in(match)]


def _bundles_in(location: str) -> list[BundleSource]:
    roots = _directory_bundles(location)
    if len(roots) <= 1:
        return [BundleSource(location)]
    return [BundleSource(location, root) for root in roots]


@lru_cache(maxsize=16)
def _directory_bundles(location: str) -> tuple[str, ...]:
    """The bundle roots of a local directory (listed, nothing read but the files that mark a
    layout); none for anything else. Cached: ``is_fleet`` and ``discover`` ask for the same
    directory, and walking a big must-gather twice is work for nothing."""
    if is_url(location) or not Path(local_path(location)).is_dir():
        return ()
    tree = walk_directory(Path(local_path(location)), Limits.from_env().max_depth)
    return tuple(bundle_roots(tree))
