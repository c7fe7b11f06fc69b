"""Collects objects, logs, skips and gaps from one bundle tree into an :class:`Evidence`.

Every layout reader feeds one :class:`EvidenceBuilder`; it owns the reading of files (size caps,
manifest errors → ``skipped``) so the readers only decide *what* each path is.
"""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from kvtrace.errors import UnsafeBundleError
from kvtrace.evidence import KUBEVIRT, Evidence, KubeObject, LogStream
from kvtrace.sources.object_filter import FilteredFile, ObjectFilter
from kvtrace.sources.objects import ObjectIndex
from kvtrace.sources.safety import (
    DECODE_ERRORS,
    Limits,
    check_decompressed_size,
    compression_of,
    open_capped,
    read_capped,
)
from kvtrace.sources.spool import SpoolSpace
from kvtrace.sources.walk import BundleTree
from parsers.manifests import ManifestError, load_manifests
from parsers.records import SourceInfo
from parsers.timestamps import parse_time


class EvidenceBuilder:
    """Accumulates one bundle's evidence; :meth:`build` hands out the :class:`Evidence`."""

    def __init__(
        self,
        tree: BundleTree,
        limits: Limits,
        only: ObjectFilter | None = None,
        spool: SpoolSpace | None = None,
    ) -> None:
        self.tree, self.limits, self.only = tree, limits, only
        self.spool = spool  # where log-store exports are split per pod (kvtrace.sources.logstores)
        self.index = ObjectIndex()
        self.logs: list[LogStream] = []
        self.skipped: list[tuple[str, str]] = list(tree.skipped)
        self.missing: list[str] = []
        self.captured_at: datetime | None = None
        self.capture_started: datetime | None = None
        self.kubevirt_version: str | None = None
        self.manifest: dict[str, Any] | None = None

    def path(self, relative: str) -> Path:
        return self.tree.root / relative

    def read(self, relative: str) -> bytes | None:
        """The (decompressed) bytes of a bundle file, or None with the reason in ``skipped``."""
        try:
            return read_capped(self.path(relative), self.limits.max_member_bytes, relative)
        except UnsafeBundleError as exc:
            self.skip(relative, str(exc))
        except DECODE_ERRORS as exc:
            self.skip(relative, f"unreadable: {_why(exc)}")
        return None

    def skip(self, relative: str, reason: str) -> None:
        self.skipped.append((relative, reason))

    def add_manifest(
        self, relative: str, default_kind: str | None = None, from_list: bool | None = None
    ) -> int:
        """Load a YAML/JSON file and index its objects; returns how many objects it held."""
        data = self.read(relative)
        if data is None:
            return 0
        if self.only is not None:
            record = FilteredFile(relative, default_kind, from_list is not False)
            selected = self.only.select(data, record)
            if selected is not None:
                listed = selected.count != 1 if from_list is None else from_list
                record.from_list = listed
                self.add_objects(selected.objects, relative, listed)
                return selected.count
        loaded = load_manifests(data, relative, default_kind)
        if loaded.error is not None:
            self.skip(
                relative,
                f"not a readable manifest{_position(loaded.error)}: {loaded.error.message}",
            )
            return 0
        listed = len(loaded.objects) != 1 if from_list is None else from_list
        self.add_objects(loaded.objects, relative, listed)
        return len(loaded.objects)

    def add_objects(
        self,
        bodies: list[dict[str, Any]],
        seen_in: str,
        from_list: bool,
        flags: tuple[str, ...] = (),
    ) -> None:
        for body in bodies:
            reason = self.index.add(body, seen_in, from_list, flags)
            if reason is not None:
                self.skip(seen_in, reason)

    def add_log(
        self, relative: str, info: SourceInfo, prefixed: bool | None, path: Path | None = None
    ) -> None:
        """Register a log file; compressed files are first checked against the size cap.

        ``path`` overrides ``root / relative`` for files outside any bundle (``--log``).
        """
        path = path or self.path(relative)
        try:
            reason = check_decompressed_size(path, self.limits.max_log_bytes, relative)
            plain = compression_of(path) is None
        except OSError as exc:
            reason = f"unreadable: {_why(exc)}"
        if reason is not None:
            self.skip(relative, reason)
            return
        opener = functools.partial(_open_log, path, self.limits.max_log_bytes, relative)
        self.logs.append(LogStream(info, opener, prefixed, path if plain else None))

    def _read_again(self) -> None:
        """Decode the items of filtered files that needles found after them match; when no
        version is stated, the pods whose image tags may tell it (kvtrace.model.version)."""
        assert self.only is not None
        if self.kubevirt_version is None and not kubevirt_version_of(
            self.index.by_kind().get(KUBEVIRT)
        ):
            self.only.search_images()
        while stale := self.only.stale():
            for record in stale:
                data = self.read(record.relative) or b""
                objects = self.only.reselect(data, record)
                if objects is None:
                    self.only.files.remove(record)
                    objects = load_manifests(data, record.relative, record.default_kind).objects
                self.add_objects(objects, record.relative, record.from_list)

    def build(self, layout: str, coverage: str) -> Evidence:
        if self.only is not None:
            self._read_again()
        objects = self.index.by_kind()
        return Evidence(
            layout=layout,
            coverage=coverage,
            objects=objects,
            logs=sorted(self.logs, key=lambda log: log.info.source_id),
            captured_at=self.captured_at,
            capture_started=self.capture_started,
            kubevirt_version=self.kubevirt_version or kubevirt_version_of(objects.get(KUBEVIRT)),
            manifest=self.manifest,
            missing=list(dict.fromkeys(self.missing)),
            skipped=self.skipped,
            origin=self.tree.origin,
        )


def _why(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def _position(error: ManifestError) -> str:
    if error.line is None:
        return ""
    return (
        f" (line {error.line}, column {error.column})" if error.column else f" (line {error.line})"
    )


def _open_log(path: Path, cap: int, name: str) -> IO[bytes]:
    return open_capped(path, cap, name)


def kubevirt_version_of(kubevirts: list[KubeObject] | None) -> str | None:
    """The deployed version from a KubeVirt CR's ``status.observedKubeVirtVersion``."""
    for kubevirt in kubevirts or []:
        status = kubevirt.body.get("status")
        version = status.get("observedKubeVirtVersion") if isinstance(status, dict) else None
        if isinstance(version, str) and version:
            return version
    return None


def parse_instant(text: Any) -> datetime | None:
    """A collection time from a manifest field or a must-gather ``timestamp`` file line (Go's
    ``time.String()`` format, ``m=+…`` suffix included)."""
    if not isinstance(text, str):
        return None
    parsed = parse_time(text)
    return parsed.at if parsed is not None else None


def collection_time(builder: EvidenceBuilder, start: str) -> datetime | None:
    """The must-gather wrapper's ``timestamp`` file at ``start`` or above: its last (end) line."""
    window = collection_window(builder, start)
    return window[1] if window else None


def collection_window(builder: EvidenceBuilder, start: str) -> tuple[datetime, datetime] | None:
    """The first and last lines of the must-gather wrapper's ``timestamp`` file at ``start`` or
    above: when the collection began and ended."""
    parts = start.split("/") if start else []
    files = set(builder.tree.files)
    for depth in range(len(parts), -1, -1):
        relative = "/".join([*parts[:depth], "timestamp"])
        if relative in files:
            data = builder.read(relative) or b""
            times = [parse_instant(line) for line in data.decode("utf-8", "replace").splitlines()]
            found = [t for t in times if t is not None]
            if found:
                return min(found), max(found)
    return None
