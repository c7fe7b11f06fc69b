"""docs/cli.md is every command's --help, and cannot drift from the commands."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import click

from kvtrace.cli import cli
from tests.conftest import ROOT, Golden

SCRIPT = ROOT / "docs" / "make_cli_reference.py"


def _generator():
    spec = importlib.util.spec_from_file_location("make_cli_reference", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_generated_from_the_commands(golden: Golden):
    """Fails when a command, option or help text changed without docs/cli.md (regenerate with
    `python docs/make_cli_reference.py`, or `pytest --update-golden`)."""
    text = _generator().reference()
    doc = ROOT / "docs" / "cli.md"
    if golden.update:
        doc.write_text(text, encoding="utf-8")
    assert doc.read_text(encoding="utf-8") == text, (
        "docs/cli.md is stale: run python docs/make_cli_reference.py and read the diff"
    )


def _all_commands(command: click.Command, path: tuple[str, ...]):
    yield path, command
    if isinstance(command, click.Group):  # the group loads its commands lazily: ask it for each
        ctx = click.Context(command, info_name=path[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _all_commands(sub, (*path, name))


def test_reference_has_a_section_for_every_command_and_option():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path, command in _all_commands(cli, ("kvtrace",)):
        section = text.split(f"## `{' '.join(path)}`\n", 1)
        assert len(section) == 2, f"no section for {' '.join(path)}"
        body = section[1].split("\n## ", 1)[0]
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("-"):
                    assert flag in body, f"{' '.join(path)}: {flag} missing from docs/cli.md"


def test_the_check_mode_reports_drift(tmp_path):
    """The script's --check exits 0 on the committed doc (as CI would run it)."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
