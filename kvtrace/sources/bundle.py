"""Open offline evidence: a bundle (directory or archive), or several, or plain log files.

``open_bundle`` sniffs the layout, in this order: kvtrace's own bundle (``manifest.json`` of kind
BundleManifest), KubeVirt must-gather roots (``version`` file), ``--vm-incident`` roots
(``incident-summary.yaml``), ``kubectl cluster-info dump``, a Harvester support bundle
(``yamls/namespaced/``), a plain ``oc adm inspect`` tree, and finally a plain directory whose
files are sniffed one by one. Archives are extracted into a private temp directory that exists
exactly as long as the context.

A directory or archive holding several bundles (:func:`kvtrace.sources.roots.bundle_roots`) is
never read as its first one: :func:`open_bundles` hands them out one at a time, and
``open_bundle`` reads the one bundle holding the VM asked for, or says which to pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kvtrace.errors import InputError
from kvtrace.evidence import POD, VM, VMI, Evidence
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.layouts import (
    cluster_dump,
    harvester,
    kvtrace_bundle,
    mustgather,
    plain,
    vm_incident,
)
from kvtrace.sources.logfiles import NO_OBJECTS, STDIN, open_logs
from kvtrace.sources.object_filter import ObjectFilter
from kvtrace.sources.roots import bundle_roots, outermost, outside, subtree
from kvtrace.sources.safety import Limits
from kvtrace.sources.spool import SpoolSpace, spool_space
from kvtrace.sources.tarball import open_tree
from kvtrace.sources.walk import BundleTree

__all__ = [
    "NO_OBJECTS",
    "STDIN",
    "VMKey",
    "bundle_roots",
    "open_bundle",
    "open_bundles",
    "open_logs",
    "read_tree",
]

VMKey = tuple[str, str]
LAUNCHER_VM_LABEL = "vm.kubevirt.io/name"  # virt-controller labels every launcher pod so
_NAMED = 5  # bundles named in an error before "and N more"


@contextmanager
def open_bundle(
    path: Path, limits: Limits | None = None, only: VMKey | None = None
) -> Iterator[Evidence]:
    """The evidence in a bundle directory, archive (tar, tar.gz, …) or single file.

    ``only`` (namespace, name): decode only the objects that VM's timeline can use
    (:mod:`kvtrace.sources.object_filter`); its timeline is the same, other VMs are absent. When
    ``path`` holds several bundles, ``only`` picks the one holding that VM; without ``only``, or
    when none or several hold it, an error names the bundles found."""
    limits = limits or Limits.from_env()
    with open_tree(_existing(path), limits) as tree, spool_space() as spool:
        roots = bundle_roots(tree)
        if len(roots) <= 1:
            yield _read_one(tree, roots, limits, only, spool)
        elif only is None:
            raise InputError(_several_bundles(tree, roots))
        else:
            yield _the_bundle_holding(tree, roots, limits, only, spool)


@contextmanager
def open_bundles(
    path: Path, limits: Limits | None = None, only: VMKey | None = None
) -> Iterator[Iterator[tuple[str, Evidence]]]:
    """Every bundle under a directory or archive, one :class:`Evidence` at a time, labelled by its
    root relative to ``path`` (``.`` when ``path`` is the bundle); each Evidence's ``origin``
    names it. A tree with no bundle layout is one plain bundle. Files outside every bundle are
    reported as skipped on the first one, never read as logs."""
    limits = limits or Limits.from_env()
    with open_tree(_existing(path), limits) as tree:
        yield _each_bundle(tree, limits, only)


def _existing(path: Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise InputError(
            f"{path}: no such file or directory; pass a must-gather directory or archive, "
            "a kvtrace bundle, or log files with --log"
        )
    return path


def _vm_filter(only: VMKey | None) -> ObjectFilter | None:
    return ObjectFilter.for_vm(*only) if only else None


def _read_one(
    tree: BundleTree, roots: list[str], limits: Limits, only: VMKey | None, spool: SpoolSpace
) -> Evidence:
    """A tree holding at most one bundle: read whole, as it always was, unless the bundle sits
    more than one level down (its layout is sniffed from its own root then)."""
    if roots and "/" in roots[0]:
        tree = subtree(tree, roots[0])
    return read_tree(tree, limits, _vm_filter(only), spool)


def _each_bundle(
    tree: BundleTree, limits: Limits, only: VMKey | None
) -> Iterator[tuple[str, Evidence]]:
    """Each bundle with its own temp space for split exports, removed when the next is read."""
    roots = bundle_roots(tree)
    if len(roots) <= 1:
        with spool_space() as spool:
            label = roots[0] if roots and roots[0] else "."
            yield label, _read_one(tree, roots, limits, only, spool)
        return
    for index, root in enumerate(roots):
        with spool_space() as spool:
            evidence = read_tree(subtree(tree, root), limits, _vm_filter(only), spool)
            if index == 0:
                evidence.skipped.extend(_outside_every_bundle(tree, roots))
            yield root, evidence


def _outside_every_bundle(tree: BundleTree, roots: list[str]) -> list[tuple[str, str]]:
    reason = (
        f"outside the {len(roots)} bundles found in {tree.origin}: not read "
        "(pass a log file on its own with --log)"
    )
    skipped = [(relative, reason) for relative in outside(tree, roots)]
    kept = {relative for relative, _ in skipped}
    return skipped + [
        (p, why) for p, why in tree.skipped if p not in kept and not _under_any(p, roots)
    ]


def _under_any(relative: str, roots: list[str]) -> bool:
    return any(relative.startswith(f"{root}/") for root in roots)


def _the_bundle_holding(
    tree: BundleTree, roots: list[str], limits: Limits, only: VMKey, spool: SpoolSpace
) -> Evidence:
    """Of several bundles, the one whose objects hold the VM (its VM, a VMI or a launcher pod)."""
    chosen: Evidence | None = None
    holders: list[str] = []
    for root in roots:
        evidence = read_tree(subtree(tree, root), limits, _vm_filter(only), spool)
        if holds(evidence, only):
            holders.append(root)
            chosen = chosen or evidence
    if chosen is not None and len(holders) == 1:
        return chosen
    namespace, name = only
    if not holders:  # InputError: a NotFoundError would send timeline to read every bundle
        raise InputError(
            f"no VirtualMachine, VMI or launcher pod {namespace}/{name} in any of the "
            f"{_count_and_names(roots)} in {tree.origin}; list the VMs of every bundle with "
            f"kvtrace check -A --bundle {tree.origin}"
        )
    raise InputError(
        f"{namespace}/{name} is in {_count_and_names(holders)} in {tree.origin}; a timeline reads "
        f"one bundle: pass the one you mean, {_pass_one(tree, holders[0])}"
    )


def holds(evidence: Evidence, only: VMKey) -> bool:
    """The evidence has the VM's objects: the VM, a VMI of its name, or a launcher pod of it."""
    namespace, name = only
    for kind in (VM, VMI):
        if any(o.namespace == namespace and o.name == name for o in evidence.of_kind(kind)):
            return True
    return any(
        pod.namespace == namespace and _labels(pod.body).get(LAUNCHER_VM_LABEL) == name
        for pod in evidence.of_kind(POD)
    )


def _labels(body: dict[str, object]) -> dict[str, object]:
    metadata = body.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}


def _several_bundles(tree: BundleTree, roots: list[str]) -> str:
    return (
        f"{tree.origin} holds {_count_and_names(roots)}; this command reads one bundle: pass one, "
        f"{_pass_one(tree, roots[0])} (kvtrace check reads them all)"
    )


def _count_and_names(roots: list[str]) -> str:
    names = ", ".join(roots[:_NAMED])
    more = f" and {len(roots) - _NAMED} more" if len(roots) > _NAMED else ""
    return f"{len(roots)} bundles ({names}{more})"


def _pass_one(tree: BundleTree, root: str) -> str:
    if tree.archive:
        return f"after extracting the archive: --bundle <extracted>/{root}"
    return f"--bundle {tree.origin.rstrip('/')}/{root}"


def read_tree(
    tree: BundleTree,
    limits: Limits,
    only: ObjectFilter | None = None,
    spool: SpoolSpace | None = None,
) -> Evidence:
    """Sniff the layout of ``tree`` (in the order of the module docstring) and read it with that
    layout's rules; log-store exports among plain files are split per pod into ``spool``."""
    builder = EvidenceBuilder(tree, limits, only, spool)
    own = kvtrace_bundle.find_manifest(tree)
    if own is not None:
        return kvtrace_bundle.read_kvtrace_bundle(builder, *own)
    gather_roots = outermost(mustgather.find_roots(tree))
    incident_roots = outermost(vm_incident.find_roots(tree))
    if incident_roots and set(gather_roots) <= set(incident_roots):
        return vm_incident.read_vm_incident(builder, incident_roots)
    if gather_roots:
        return mustgather.read_must_gather(builder, outermost(gather_roots + incident_roots))
    dump_root = cluster_dump.find_root(tree)
    if dump_root is not None:
        return cluster_dump.read_cluster_dump(builder, dump_root)
    harvester_roots = harvester.find_roots(tree)
    if harvester_roots:
        return harvester.read_harvester(builder, harvester_roots[0])
    inspect_roots = outermost(mustgather.find_inspect_roots(tree))
    if inspect_roots:
        return mustgather.read_inspect(builder, inspect_roots)
    return plain.read_plain(builder)
