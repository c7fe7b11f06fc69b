"""The stages import one way only (import-linter contracts in pyproject.toml): sources ->
timeline -> model -> check | leader | overhead -> render -> commands -> cli, no import circle,
pure parsers, one home each for kubernetes, tabulate and dateutil."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the tree at ``root`` (its own pyproject.toml, no cache)."""
    script = "from importlinter.cli import lint_imports_command as lint; lint()"
    return subprocess.run(
        [sys.executable, "-c", script, "--no-cache", "--config", "pyproject.toml"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": os.environ.get("PATH", "")},
    )


def test_the_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _copy(tmp_path: Path) -> Path:
    for name in ("kvtrace", "parsers"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_an_import_up_the_stack_breaks_the_layers(tmp_path):
    root = _copy(tmp_path)
    evidence = root / "kvtrace" / "evidence.py"
    evidence.write_text(evidence.read_text() + "\nfrom kvtrace.render import table  # noqa\n")
    result = _lint_imports(root)
    assert result.returncode == 1
    assert "kvtrace.evidence is not allowed to import kvtrace.render" in result.stdout


def test_a_circle_inside_a_stage_is_found(tmp_path):
    root = _copy(tmp_path)
    report = root / "kvtrace" / "check" / "report.py"
    report.write_text(report.read_text() + "\nfrom kvtrace.check import run  # noqa\n")
    result = _lint_imports(root)
    assert result.returncode == 1
    assert "No cycles are allowed in kvtrace.check" in result.stdout
