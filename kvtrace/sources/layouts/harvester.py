"""Harvester support bundles (rancher/support-bundle-kit): ``metadata.yaml``, ``yamls/`` and
``logs/``.

Objects are Lists, one file per resource: ``yamls/namespaced/<ns>/<group>/<version>/<res>.yaml``
(the core group as ``v1/<res>.yaml``; older bundles ``<ns>/kubernetes/pods.yaml`` and
``<ns>/kubevirt/virtualmachines.yaml``) and ``yamls/cluster/.../<res>.yaml``. Logs are
``logs/<ns>/<pod>/<container>.log``: one file per container, the current instance only, and no
timestamp prefix unless the collector asked for one (sniffed per line).
"""

from __future__ import annotations

from kvtrace.evidence import LEASE, REVISION, Evidence
from kvtrace.sources.builder import EvidenceBuilder, parse_instant
from kvtrace.sources.layouts.inspect import files_under
from kvtrace.sources.layouts.mustgather import note_missing_controller_logs
from kvtrace.sources.objects import PLURAL_KINDS
from kvtrace.sources.walk import BundleTree
from parsers.manifests import load_manifests
from parsers.paths import source_from_path

MAX_DEPTH = 3  # levels above ``yamls/`` a bundle root may sit
METADATA = "metadata.yaml"
_SCOPES = ("namespaced", "cluster")
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

HARVESTER_GAP = (
    "a Harvester support bundle holds each container's current log only (no previous instance)"
)


def find_roots(tree: BundleTree) -> list[str]:
    """Directories holding ``yamls/namespaced/`` or ``yamls/cluster/``."""
    roots: set[str] = set()
    for relative in tree.files:
        parts = relative.split("/")
        for at in range(min(len(parts) - 2, MAX_DEPTH + 1)):
            if parts[at] == "yamls" and parts[at + 1] in _SCOPES:
                roots.add("/".join(parts[:at]))
                break
    return sorted(roots)


def read_harvester(builder: EvidenceBuilder, root: str) -> Evidence:
    _read_metadata(builder, f"{root}/{METADATA}" if root else METADATA)
    for relative, parts in files_under(builder, root):
        if parts[0] == "yamls" and len(parts) >= 3 and parts[1] in _SCOPES:
            _add_yaml(builder, relative, parts[-1])
        elif parts[0] == "logs" and len(parts) == 4 and parts[3].endswith(".log"):
            builder.add_log(relative, source_from_path(relative), prefixed=None)
    present = builder.index.by_kind()
    for kind in (LEASE, REVISION):
        if not present.get(kind):
            builder.missing.append(f"this Harvester support bundle holds no {kind} objects")
    builder.missing.append(HARVESTER_GAP)
    note_missing_controller_logs(builder)
    return builder.build("harvester", "full")


def _add_yaml(builder: EvidenceBuilder, relative: str, name: str) -> None:
    """A resource's List; resources kvtrace does not use are not opened."""
    stem = next((name[: -len(s)] for s in _MANIFEST_SUFFIXES if name.endswith(s)), None)
    kind = PLURAL_KINDS.get(stem or "")
    if kind is not None:
        builder.add_manifest(relative, kind, from_list=True)


def _read_metadata(builder: EvidenceBuilder, relative: str) -> None:
    """``bundleCreatedAt`` is the collection time (the support-bundle-kit's BundleMeta)."""
    if relative not in set(builder.tree.files):
        builder.missing.append(f"{relative} absent: no collection time for this bundle")
        return
    loaded = load_manifests(builder.read(relative) or b"", relative)
    meta = loaded.objects[0] if loaded.objects else {}
    builder.captured_at = parse_instant(meta.get("bundleCreatedAt"))
    if builder.captured_at is None:
        builder.missing.append(f"{relative}: no bundleCreatedAt, so no collection time")
