"""Where the bundles of a tree are: one directory may hold many bundles (a case directory, a tar of
several collections), and each is read on its own so no VM of one is taken for another's.

A bundle's root is the directory its layout hangs from: a kvtrace ``manifest.json``; a
must-gather's wrapper (the directory holding its ``timestamp`` file, or named
``must-gather.local.*``), else the common ancestor of its image roots; a ``kubectl cluster-info
dump``; an ``oc adm inspect`` tree; a Harvester support bundle. Only the outermost roots count:
a must-gather holding an inspect tree is one bundle.
"""

from __future__ import annotations

import posixpath

from kvtrace.sources.layouts import cluster_dump, harvester, kvtrace_bundle, mustgather, vm_incident
from kvtrace.sources.walk import BundleTree

MANIFEST_DEPTH = 4  # a kvtrace manifest.json this many levels below the tree root is a bundle
_WRAPPER_FILE = "timestamp"
_WRAPPER_PREFIX = "must-gather.local."


def bundle_roots(tree: BundleTree) -> list[str]:
    """The root of every bundle in ``tree`` (``""`` is the tree itself), outermost only, sorted.
    A tree with no bundle layout (plain files) has none."""
    found = [
        *kvtrace_bundle.find_roots(tree, MANIFEST_DEPTH),
        *_gather_bundles(tree),
        *cluster_dump.find_roots(tree),
        *mustgather.find_inspect_roots(tree),
        *harvester.find_roots(tree),
    ]
    return outermost(found)


def _gather_bundles(tree: BundleTree) -> list[str]:
    """must-gather and ``--vm-incident`` roots grouped by the run that wrote them: roots under one
    wrapper are one bundle; roots under no wrapper are one bundle at their common ancestor (the
    images of one run, as read before bundles were told apart)."""
    roots = outermost(mustgather.find_roots(tree) + vm_incident.find_roots(tree))
    wrappers = _wrappers(tree)
    grouped: set[str] = set()
    loose: list[str] = []
    for root in roots:
        wrapper = next((w for w in wrappers if is_ancestor(w, root)), None)
        if wrapper is None:
            loose.append(root)
        else:
            grouped.add(wrapper)
    if loose:
        grouped.add(_common_ancestor(loose))
    return sorted(grouped)


def _wrappers(tree: BundleTree) -> list[str]:
    """Directories that are one must-gather run, the outermost first: a ``timestamp`` file
    deeper down (inside one image's tree) does not split the run."""
    found: set[str] = set()
    for relative in tree.files:
        parent, name = parent_of(relative), relative.rsplit("/", 1)[-1]
        if name == _WRAPPER_FILE:
            found.add(parent)
        for ancestor in _ancestors(parent):
            if ancestor.rsplit("/", 1)[-1].startswith(_WRAPPER_PREFIX):
                found.add(ancestor)
    return sorted(found, key=lambda w: (w.count("/") + (w != ""), w))


def _ancestors(directory: str) -> list[str]:
    parts = directory.split("/") if directory else []
    return ["/".join(parts[:depth]) for depth in range(len(parts), 0, -1)]


def _common_ancestor(roots: list[str]) -> str:
    if len(roots) == 1:
        return roots[0]
    common = posixpath.commonpath([f"/{root}" for root in roots])
    return common.lstrip("/")


def parent_of(relative: str) -> str:
    return relative.rsplit("/", 1)[0] if "/" in relative else ""


def outermost(roots: list[str]) -> list[str]:
    """Roots without an ancestor in the list, so no file is read twice."""
    unique = sorted(set(roots))
    return [r for r in unique if not any(is_ancestor(other, r) for other in unique if other != r)]


def is_ancestor(ancestor: str, path: str) -> bool:
    """``ancestor`` is ``path`` or a directory above it (``""`` is above everything)."""
    return ancestor in ("", path) or path.startswith(f"{ancestor}/")


def subtree(tree: BundleTree, root: str) -> BundleTree:
    """The files under ``root`` as a tree of their own, paths relative to it; its origin names
    the bundle (``dir/root`` for a directory, ``archive:root`` inside an archive)."""
    if root == "":
        return tree
    prefix = f"{root}/"
    joiner = ":" if tree.archive else "/"
    return BundleTree(
        root=tree.root / root,
        origin=f"{tree.origin}{joiner}{root}",
        files=[f[len(prefix) :] for f in tree.files if f.startswith(prefix)],
        skipped=[(p[len(prefix) :], why) for p, why in tree.skipped if p.startswith(prefix)],
        archive=tree.archive,
    )


def outside(tree: BundleTree, roots: list[str]) -> list[str]:
    """Files of ``tree`` under none of ``roots``."""
    return [f for f in tree.files if not any(is_ancestor(root, f) for root in roots)]
