"""Temp space for logs kvtrace writes itself (a log-store export split per pod): made on first
use, removed with everything in it when the evidence is closed."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kvtrace.sources.safety import remove_tree


class SpoolSpace:
    """Temp space for demultiplexed exports: made on first use, removed when the evidence is."""

    def __init__(self) -> None:
        self._root: Path | None = None
        self._count = itertools.count()

    def new_dir(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="kvtrace-export-"))
        directory = self._root / f"export-{next(self._count)}"
        directory.mkdir()
        return directory

    def close(self) -> None:
        if self._root is not None:
            remove_tree(self._root)
            self._root = None


@contextmanager
def spool_space() -> Iterator[SpoolSpace]:
    space = SpoolSpace()
    try:
        yield space
    finally:
        space.close()
