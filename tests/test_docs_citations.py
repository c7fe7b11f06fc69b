"""Docstrings, comments and docs cite what a reader can open: KubeVirt source positions or files
and modules that exist in this repository, never notes kept outside it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

OUTSIDE_NOTES = re.compile(
    r"\b(?:other-)?controllers\.md|\binputs\.md|\blauncher-pod\.md|\bSTYLE\.md|\bissue #\d"
)
REPO_PATH = re.compile(r"\b((?:kvtrace|parsers)/[A-Za-z0-9_/]+\.py)\b")
DOTTED = re.compile(r"`(kvtrace(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")  # `x`, ``x``, :mod:`x`


def _files() -> list[Path]:
    code_dirs = ("kvtrace", "parsers", "tests", "bench", "sample-logs")
    code = [p for d in code_dirs for p in (ROOT / d).rglob("*.py")]
    docs = [p for d in ("docs", "bench", "sample-logs") for p in (ROOT / d).rglob("*.md")]
    return sorted([*code, *docs, ROOT / "README.md"])


FILES = [p for p in _files() if p.name != "test_docs_citations.py"]


def _importable(dotted: str) -> bool:
    """A module, or an attribute of one (kvtrace.model.leader_epochs.lease_epochs)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        target: object = module
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_citations_resolve(path: Path):
    text = path.read_text(encoding="utf-8")
    outside = sorted(set(OUTSIDE_NOTES.findall(text)))
    assert not outside, f"cites notes that are not in the repository: {outside}"
    missing = sorted({p for p in REPO_PATH.findall(text) if not (ROOT / p).exists()})
    assert not missing, f"names files that do not exist: {missing}"
    dotted = {d for d in DOTTED.findall(text) if not d.startswith("kvtrace.io")}
    unknown = sorted(d for d in dotted if not _importable(d))
    assert not unknown, f"names modules that cannot be imported: {unknown}"
