"""Walking a bundle directory without following symlinks out of it.

The walk keeps its own stack instead of recursing, so a directory nested a thousand levels deep
cannot exhaust Python's recursion limit; files more than ``max_depth`` levels below the root are
not read, and each directory where the walk stopped is one reported skip with its file count.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kvtrace.sources.safety import DEFAULT_MAX_DEPTH, ENV_MAX_DEPTH


@dataclass
class BundleTree:
    """The regular files of a bundle, relative to ``root`` (POSIX paths, sorted)."""

    root: Path
    origin: str
    files: list[str]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    archive: str | None = None  # "gzip" | "bzip2" | "xz" | "tar" when extracted


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` resolves (symlinks followed) to ``root`` or below it."""
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, real_root]) == real_root


def too_deep_reason(count: int, max_depth: int) -> str:
    """The skip reason for ``count`` files nested deeper than ``max_depth`` levels."""
    return (
        f"{count} file(s) nested more than {max_depth} levels deep not read; if you trust this "
        f"bundle, raise the cap with {ENV_MAX_DEPTH}=<levels>"
    )


def walk_directory(root: Path, max_depth: int = DEFAULT_MAX_DEPTH) -> BundleTree:
    """Regular files under ``root``; symlinks leaving it, devices, FIFOs and files nested deeper
    than ``max_depth`` levels are reported in ``skipped``."""
    tree = BundleTree(root=root, origin=str(root), files=[])
    too_deep: Counter[str] = Counter()
    pending = [root]
    while pending:
        directory = pending.pop()
        for entry in _entries(directory, root, tree):
            relative = _relative(Path(entry.path), root)
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            elif relative.count("/") >= max_depth:
                too_deep["/".join(relative.split("/")[:max_depth])] += 1
            else:
                _classify_file(Path(entry.path), root, tree)
    tree.skipped.extend((cut, too_deep_reason(n, max_depth)) for cut, n in sorted(too_deep.items()))
    tree.files.sort()
    return tree


def _entries(directory: Path, root: Path, tree: BundleTree) -> list[os.DirEntry[str]]:
    """The entries of one directory, sorted by name; a symlinked directory is reported, not
    followed; an unreadable directory is one reported skip."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        tree.skipped.append((_relative(directory, root), f"unreadable: {exc.strerror or exc}"))
        return []
    linked = [entry for entry in entries if _is_symlinked_directory(entry)]
    for entry in linked:
        tree.skipped.append((_relative(Path(entry.path), root), "symlinked directory not followed"))
    return [entry for entry in entries if entry not in linked]


def _is_symlinked_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False  # a dangling or unreadable link: _classify_file reports it


def _classify_file(path: Path, root: Path, tree: BundleTree) -> None:
    relative = _relative(path, root)
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            if not is_inside(path, root):
                tree.skipped.append((relative, "symlink pointing outside the bundle not followed"))
                return
            mode = path.stat().st_mode
    except OSError as exc:
        tree.skipped.append((relative, f"unreadable: {exc.strerror or exc}"))
        return
    if stat.S_ISREG(mode):
        tree.files.append(relative)
    else:
        tree.skipped.append((relative, "not a regular file (device, FIFO or socket)"))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
