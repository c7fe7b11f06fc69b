"""``kvtrace collect`` end to end: connect, collect into a staged bundle, publish, summarise."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kvtrace.errors import UsageError
from kvtrace.sources.live.collect import CollectResult, collect_bundle
from kvtrace.sources.live.progress import Progress
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.live.writer import check_destination, staged_bundle
from kvtrace.timefmt import parse_window_bound

_DURATION = re.compile(r"^(\d+[dhms])+$")


@dataclass
class Published:
    """A finished collection: the manifest, where it went, how long it took, its size."""

    result: CollectResult
    path: Path
    seconds: float
    size: int


def collect_to(final: Path, settings: ClusterSettings, scope: CollectScope) -> Published:
    """Collect ``scope`` into ``final`` (a directory, or ``.tar.gz``/``.tgz``/``.tar``)."""
    from kvtrace.sources.live.client import connect

    check_destination(final)
    started = time.monotonic()
    connection = connect(settings)
    progress = Progress(enabled=not (settings.quiet or settings.verbose))
    try:
        with staged_bundle(final) as root:
            result = collect_bundle(connection, scope, settings, root, progress)
            progress.set_phase("writing the bundle")
    finally:
        progress.close()
        connection.close()
    return Published(result, final, time.monotonic() - started, _size(final))


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def scope_from_flags(
    namespace: str | None, all_namespaces: bool, vms: tuple[str, ...], since: str | None
) -> CollectScope:
    """``-n``/``-A``/``--vm``/``--since`` as a :class:`CollectScope` (usage errors named)."""
    if namespace and all_namespaces:
        raise UsageError("-n and -A exclude each other")
    named = tuple(_vm_key(text, all_namespaces) for text in vms)
    namespaces = None if all_namespaces else ((namespace,) if namespace else ())
    seconds, instant = _since(since)
    return CollectScope(namespaces, named, seconds, instant)


def _vm_key(text: str, all_namespaces: bool) -> tuple[str, str]:
    parts = text.split("/")
    if len(parts) == 1 and parts[0] and not all_namespaces:
        return "", parts[0]  # the -n namespace, else the context's
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    if all_namespaces and len(parts) == 1:
        raise UsageError(f"--vm {text!r} with -A: give NAMESPACE/NAME (for example default/web)")
    raise UsageError(f"cannot read --vm {text!r} as [NAMESPACE/]NAME (for example default/web)")


def _since(text: str | None) -> tuple[int | None, str | None]:
    """A duration becomes ``sinceSeconds``; an RFC 3339 time becomes ``sinceTime``."""
    if not text:
        return None, None
    now = datetime.now(timezone.utc)
    bound = parse_window_bound(text, now)
    assert bound is not None
    if _DURATION.match(text):
        return max(1, int((now - bound).total_seconds())), None
    return None, bound.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def summary_lines(published: Published) -> list[str]:
    """What was written, counted by kind, for the end of ``kvtrace collect``."""
    manifest = published.result.manifest
    counts = ", ".join(f"{e['count']} {e['kind']}" for e in manifest["collected"])
    logs = manifest["logs"]
    state = "partial bundle" if published.result.partial else "bundle"
    return [
        f"wrote {state} {published.path} ({_human(published.size)}) in {published.seconds:.1f}s",
        f"  objects: {counts or 'none'}",
        f"  logs: {len(logs)} file(s) from {len({e['pod'] for e in logs})} virt-controller pod(s)",
        f"  cluster: {manifest.get('serverVersion') or 'version unknown'}, KubeVirt "
        f"{manifest.get('kubevirtVersion') or 'version unknown'} in "
        f"{manifest.get('kubevirtNamespace') or 'an unknown namespace'}",
    ]


def missing_lines(published: Published, not_served: bool = False) -> list[str]:
    """One line per ``missing[]`` entry: what was not collected and why; with ``not_served``,
    the kinds the cluster does not serve instead."""
    lines = []
    for entry in published.result.manifest["missing"]:
        if bool(entry.get("notServed")) != not_served:
            continue
        what = entry.get("file") or entry.get("kind")
        where = f" in {entry['namespace']}" if entry.get("namespace") else ""
        lines.append(f"not collected: {what}{where}: {entry['reason']}")
    return lines


def _human(size: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"
