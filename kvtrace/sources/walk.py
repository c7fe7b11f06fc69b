"""Walking a bundle directory without following symlinks out of it."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path


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


def walk_directory(root: Path) -> BundleTree:
    """Regular files under ``root``; symlinks leaving it, devices and FIFOs are reported."""
    tree = BundleTree(root=root, origin=str(root), files=[])

    def unreadable(exc: OSError) -> None:
        tree.skipped.append(
            (_relative(Path(exc.filename or root), root), f"unreadable: {exc.strerror}")
        )

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        here = Path(dirpath)
        for name in sorted(dirnames):
            if (here / name).is_symlink():
                tree.skipped.append(
                    (_relative(here / name, root), "symlinked directory not followed")
                )
        for name in sorted(filenames):
            _classify_file(here / name, root, tree)
    tree.files.sort()
    return tree


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
