"""``kubectl cluster-info dump --output-directory=D``: ``nodes.json``, ``<ns>/*.json`` Lists and
``<ns>/<pod>/logs.txt`` (no CRDs, so no VM, VMI or ControllerRevision objects)."""

from __future__ import annotations

from kvtrace.evidence import EVENT, NODE, POD, Evidence
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.layouts.inspect import files_under
from kvtrace.sources.walk import BundleTree
from parsers.paths import source_from_path

MAX_DEPTH = 2
_LISTS = {"events.json": EVENT, "pods.json": POD}

CLUSTER_DUMP_GAPS = (
    "kubectl cluster-info dump holds no VirtualMachine, VirtualMachineInstance, migration or "
    "ControllerRevision objects (it does not dump custom resources)",
    "kubectl cluster-info dump holds no Lease objects",
    "logs.txt has no capture-time prefix and no previous container instances",
)
NO_CONTROLLER_LOGS = (
    "no virt-controller logs in this dump: dump the KubeVirt namespace too "
    "(--namespaces kubevirt,<vm-ns> or -A)"
)


def find_root(tree: BundleTree) -> str | None:
    """The first directory holding ``nodes.json`` next to at least one ``<ns>/pods.json``."""
    roots = find_roots(tree)
    return roots[0] if roots else None


def find_roots(tree: BundleTree) -> list[str]:
    """Every directory (depth ≤ 2) holding ``nodes.json`` next to a ``<ns>/pods.json``."""
    pods_dirs = {
        f.rsplit("/", 2)[0] if f.count("/") >= 2 else ""
        for f in tree.files
        if f.endswith("/pods.json")
    }
    roots = []
    for relative in tree.files:
        if relative.rsplit("/", 1)[-1] != "nodes.json" or relative.count("/") > MAX_DEPTH:
            continue
        root = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if root in pods_dirs:
            roots.append(root)
    return roots


def read_cluster_dump(builder: EvidenceBuilder, root: str) -> Evidence:
    for relative, parts in files_under(builder, root):
        if parts == ["nodes.json"]:
            builder.add_manifest(relative, NODE, from_list=True)
        elif len(parts) == 2 and parts[1] in _LISTS:
            builder.add_manifest(relative, _LISTS[parts[1]], from_list=True)
        elif len(parts) == 3 and parts[2] == "logs.txt":
            builder.add_log(relative, source_from_path(relative), prefixed=False)
    builder.missing.extend(CLUSTER_DUMP_GAPS)
    if not any((log.info.pod or "").startswith("virt-controller") for log in builder.logs):
        builder.missing.append(NO_CONTROLLER_LOGS)
    return builder.build("cluster-info-dump", "low")
