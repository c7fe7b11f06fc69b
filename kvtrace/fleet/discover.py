"""Which bundles a fleet check reads: every ``--bundle`` value, a glob expanded (local, or an
fsspec URL pattern such as ``s3://cases/2026-12-*/bundle.tar.gz``), in the order given, each
bundle once."""

from __future__ import annotations

import glob as local_glob
from collections.abc import Sequence

from kvtrace.errors import InputError
from kvtrace.fleet.remote import glob as remote_glob
from kvtrace.fleet.remote import is_url, local_path
from kvtrace.fleet.results import BundleSource

GLOB_CHARS = frozenset("*?[")
ONLY_FLEET = ("parquet",)  # -o values only the fleet report has (pandas writes them)


def is_pattern(value: str) -> bool:
    return any(c in GLOB_CHARS for c in value)


def is_fleet(bundles: Sequence[str], dask: str | None, output: str) -> bool:
    """Whether ``check`` runs as a fleet check: several bundles or a pattern, Dask, or an
    output only the fleet report has. One plain bundle keeps the single-bundle report."""
    several = len(bundles) > 1 or any(map(is_pattern, bundles))
    return several or bool(dask) or output in ONLY_FLEET


def discover(values: Sequence[str]) -> list[BundleSource]:
    """The bundles the values name, each once, in the order given."""
    found: dict[BundleSource, None] = {}
    for value in values:
        found.update(dict.fromkeys(_expand(value)))
    return list(found)


def _expand(value: str) -> list[BundleSource]:
    if not is_pattern(value):
        return [BundleSource(value)]
    matches = remote_glob(value) if is_url(value) else sorted(local_glob.glob(local_path(value)))
    if not matches:
        raise InputError(
            f"--bundle {value}: the pattern matches no file or directory; check it, and quote "
            "it so that the shell does not expand it first"
        )
    return [BundleSource(match) for match in matches]
