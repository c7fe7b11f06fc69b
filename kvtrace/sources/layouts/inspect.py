"""The ``oc adm inspect`` tree, the KubeVirt must-gather collectors and the extras of
``--vm-incident``: what each path under a root is.

Only resources kvtrace uses are loaded (``PLURAL_KINDS``); configmaps, secrets, OLM files and the
like are not opened at all, which keeps large must-gathers fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kvtrace.evidence import POD, VM
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.events_table import EVENTS_TABLE, table_event_body
from kvtrace.sources.layouts.rotated import instance_of
from kvtrace.sources.objects import PLURAL_KINDS
from parsers.manifests import parse_events_table
from parsers.paths import source_from_path
from parsers.records import SourceInfo

_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_INSPECT_LOG = re.compile(r"^(current|previous)(\.insecure)?\.log(\.gz)?$")
# kubelet rotation: <restart>.log.<YYYYMMDD-hhmmss>, <restart>.log.<n>, either gzipped
_ROTATED_LOG = re.compile(r"^\d+\.log(\.\d{8}-\d{6}|\.\d+)?(\.gz)?$")
_INCIDENT_LOG = re.compile(r"^.+-(current|previous)\.log(\.gz)?$")


@dataclass(frozen=True)
class Route:
    """What a file is: ``list``/``single`` objects of ``kind``, a ``log``, an ``events`` table."""

    what: str
    kind: str | None = None
    prefixed: bool | None = None
    replaces: str | None = None  # for .insecure logs: the normal file this one stands in for
    rotated: bool = False  # a kubelet-rotated part of a container's log (layouts.rotated)


def files_under(builder: EvidenceBuilder, root: str) -> list[tuple[str, list[str]]]:
    """``(bundle-relative path, parts relative to root)`` of every file under ``root``."""
    prefix = f"{root}/" if root else ""
    return [
        (relative, relative[len(prefix) :].split("/"))
        for relative in builder.tree.files
        if relative.startswith(prefix)
    ]


def read_inspect_root(builder: EvidenceBuilder, root: str) -> None:
    """Load the objects, logs and events tables under one inspect-style root."""
    routed = [
        (rel, route) for rel, parts in files_under(builder, root) if (route := classify(parts))
    ]
    replaced = {_sibling(rel, r.replaces) for rel, r in routed if r.replaces}
    for relative, route in routed:
        if relative in replaced:
            builder.skip(relative, "replaced by its .insecure.log copy (fetched without TLS)")
        elif route.what == "log":
            builder.add_log(relative, _log_source(builder, relative, route), route.prefixed)
        elif route.what == "events":
            add_events_table(builder, relative, namespace=relative.split("/")[-2])
        else:
            builder.add_manifest(relative, route.kind, from_list=route.what == "list")


def _log_source(builder: EvidenceBuilder, relative: str, route: Route) -> SourceInfo:
    info = source_from_path(relative)
    if not route.rotated:
        return info
    return replace(info, instance=instance_of(builder.path(relative), builder.limits.max_log_bytes))


def _sibling(relative: str, name: str | None) -> str:
    return f"{relative.rsplit('/', 1)[0]}/{name}"


def classify(parts: list[str]) -> Route | None:
    """Route a path (split, relative to an inspect root); None for files kvtrace does not read."""
    if len(parts) >= 3 and parts[0] == "namespaces":
        return _log_route(parts) or _namespaced_route(parts)
    if len(parts) >= 3 and parts[0] == "cluster-scoped-resources":
        return _cluster_route(parts)
    return None


def _log_route(parts: list[str]) -> Route | None:
    name = parts[-1]
    if len(parts) == 8 and parts[2] == "pods" and parts[6] == "logs":
        match = _INSPECT_LOG.match(name)
        if match:
            replaces = name.replace(".insecure", "") if match.group(2) else None
            return Route("log", prefixed=True, replaces=replaces)
    if len(parts) == 9 and parts[2] == "pods" and parts[6:8] == ["logs", "rotated"]:
        return Route("log", prefixed=True, rotated=True) if _ROTATED_LOG.match(name) else None
    if len(parts) == 6 and parts[2:4] == ["core", "pods"] and _INCIDENT_LOG.match(name):
        return Route("log", prefixed=False)
    return None


def _namespaced_route(parts: list[str]) -> Route | None:
    if len(parts) == 3 and parts[2] == "events":
        return Route("events")
    stem = _manifest_stem(parts[-1])
    if stem is None:
        return None
    if len(parts) == 4:
        return _kind_route("list", stem)
    if len(parts) == 5 and parts[2] == "crs":
        return _kind_route("single", parts[3].split(".", 1)[0])
    if len(parts) == 5 and parts[2] == "pods":
        return Route("single", POD) if stem == parts[3] else None
    if len(parts) == 5:
        return _kind_route("single", parts[3])
    if len(parts) == 6 and parts[2:4] == ["kubevirt.io", "virtualmachines"]:
        return Route("single", VM)
    return None


def _cluster_route(parts: list[str]) -> Route | None:
    stem = _manifest_stem(parts[-1])
    if stem is None:
        return None
    if len(parts) == 3 and stem in PLURAL_KINDS:
        return Route("list", PLURAL_KINDS[stem])
    if len(parts) == 3 and "." in parts[1]:
        return _kind_route("single", parts[1].split(".", 1)[0])
    if len(parts) == 4:
        return _kind_route("single", parts[2])
    return None


def _kind_route(what: str, plural: str) -> Route | None:
    kind = PLURAL_KINDS.get(plural)
    return Route(what, kind) if kind else None


def _manifest_stem(name: str) -> str | None:
    for suffix in _MANIFEST_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


def add_events_table(builder: EvidenceBuilder, relative: str, namespace: str | None) -> None:
    """Turn a text events table into Event objects flagged ``events_table``
    (:mod:`kvtrace.sources.events_table`)."""
    data = builder.read(relative)
    if data is None:
        return
    table = parse_events_table(data.decode("utf-8", errors="replace"), relative)
    for error in table.errors:
        builder.skip(relative, f"events table line not understood: {error}")
    bodies = [table_event_body(r, namespace, builder.captured_at, relative) for r in table.rows]
    builder.add_objects(bodies, relative, from_list=True, flags=(EVENTS_TABLE,))
    if table.rows and builder.captured_at is None:
        builder.missing.append(
            f"{relative}: no collection time, so the events table's relative ages give no times"
        )
