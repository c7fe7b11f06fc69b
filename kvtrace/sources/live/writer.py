"""Writing a kvtrace bundle (docs/bundle-format.md, formatVersion 1), atomically.

A bundle is built in a staging directory next to the final name (``.<name>.partial-*``), so the
final rename never crosses file systems; only a complete bundle is renamed (directory) or
``os.replace``d (archive) to the final name. An interrupt or a crash leaves nothing under the
final name, and the staging directory is removed on every exit Python gets to run.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from kvtrace.errors import UnsafeResponse, UsageError
from kvtrace.sources.live.names import shown

FORMAT_VERSION = 1
MANIFEST_API_VERSION = "kvtrace.io/v1alpha1"
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


class BundleWriter:
    """Object lists, log files and the manifest of one bundle under ``root``; thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "objects").mkdir(parents=True, exist_ok=True)
        self.collected: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.missing: list[dict[str, Any]] = []
        self.log_bytes = 0
        self._lock = threading.Lock()

    def write_objects(self, kind: str, plural: str, api_version: str, items: list[Any]) -> None:
        """``objects/<plural>.json``: one List; items get ``kind``/``apiVersion`` if the API
        left them out (it does for built-in kinds in typed lists)."""
        for item in items:
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        document = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
        relative = f"objects/{plural}.json"
        self._inside(relative).write_bytes(orjson.dumps(document) + b"\n")
        with self._lock:
            self.collected.append({"kind": kind, "file": relative, "count": len(items)})

    def log_path(self, namespace: str, pod: str, container: str, instance: str) -> str:
        relative = f"logs/{namespace}/{pod}/{container}/{instance}.log"
        self._inside(relative).parent.mkdir(parents=True, exist_ok=True)
        return relative

    def _inside(self, relative: str) -> Path:
        """``root / relative``, refused unless it stays inside the bundle (names come from the
        API server; collect checks them first, this is the last line)."""
        parts = relative.split("/")
        target = (self.root / relative).resolve()
        if ".." in parts or "" in parts or not target.is_relative_to(self.root.resolve()):
            raise UnsafeResponse(
                f"refused to write {shown(relative)}: it would leave the bundle directory"
            )
        return self.root / relative

    def add_log(
        self, namespace: str, pod: str, container: str, instance: str, file: str, size: int
    ) -> None:
        entry = {
            "namespace": namespace,
            "pod": pod,
            "container": container,
            "instance": instance,
            "file": file,
            "timestamps": True,
        }
        with self._lock:
            self.logs.append(entry)
            self.log_bytes += size

    def add_missing(self, reason: str, **where: str | None) -> None:
        """One ``missing[]`` entry: ``kind`` (+ ``namespace``) or ``file``, and the reason."""
        entry: dict[str, Any] = {k: v for k, v in where.items() if v}
        entry["reason"] = reason
        with self._lock:
            if entry not in self.missing:
                self.missing.append(entry)

    def add_not_served(self, reason: str, kind: str) -> None:
        """A ``missing[]`` entry marked ``notServed``: the cluster has no such API, so nothing
        of it exists to collect (the bundle is still complete)."""
        entry: dict[str, Any] = {"kind": kind, "reason": reason, "notServed": True}
        with self._lock:
            if entry not in self.missing:
                self.missing.append(entry)

    def write_manifest(self, header: dict[str, Any]) -> dict[str, Any]:
        manifest = {
            "apiVersion": MANIFEST_API_VERSION,
            "kind": "BundleManifest",
            "formatVersion": FORMAT_VERSION,
            **header,
            "collected": self.collected,
            "logs": sorted(self.logs, key=lambda e: str(e["file"])),
            "missing": self.missing,
        }
        raw = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
        (self.root / "manifest.json").write_bytes(raw)
        return manifest


def is_archive(path: Path) -> bool:
    return path.name.endswith(_ARCHIVE_SUFFIXES)


def check_destination(final: Path) -> None:
    """Refuse to overwrite, and fail before collecting when the directory is not writable."""
    if final.exists() or final.is_symlink():
        raise UsageError(f"{final} already exists; remove it or choose another -f path")
    parent = final.parent
    if not parent.is_dir():
        raise UsageError(f"{parent}: no such directory for -f {final}; create it first")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{parent}: not writable; choose another -f path")


@contextmanager
def staged_bundle(final: Path) -> Iterator[Path]:
    """A directory to fill; on normal exit it becomes ``final`` (a directory or an archive)."""
    check_destination(final)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    try:
        root = staging / "bundle"
        root.mkdir()
        yield root
        _publish(root, staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _publish(root: Path, staging: Path, final: Path) -> None:
    check_destination(final)  # someone may have created it meanwhile
    if not is_archive(final):
        root.rename(final)
        return
    archive = staging / "bundle.archive"
    mode = "w" if final.name.endswith(".tar") else "w:gz"
    top = f"kvtrace-bundle-{datetime.now().strftime('%Y%m%dT%H%M%S')}"
    options: dict[str, Any] = {} if mode == "w" else {"compresslevel": 6}
    with tarfile.open(archive, mode, **options) as tar:  # type: ignore[call-overload]
        tar.add(root, arcname=top)
    os.replace(archive, final)
