"""Start-up: ``kvtrace --help`` imports no command, no model, no renderer, no Kubernetes client;
the group's one-line summaries are the commands' own. (How fast it starts is measured by
bench/startup_bench.py, never here.)"""

from __future__ import annotations

import ast
import subprocess
import sys

import click
import pytest

from kvtrace.cli import COMMANDS, LazyGroup, cli, help_width
from tests.conftest import ROOT

HEAVY = (
    "kvtrace.commands",
    "kvtrace.model",
    "kvtrace.render",
    "kvtrace.timeline",
    "kubernetes",
    "parsers",
    "yaml",
    "tabulate",
)


def _imported_by(*argv: str) -> list[str]:
    script = f"""
import sys
from kvtrace.cli import run
run({list(argv)!r})
print(sorted({{m for m in sys.modules if m.split('.')[0] in ('kvtrace', 'parsers', 'kubernetes', 'yaml', 'tabulate')}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return ast.literal_eval(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_the_groups_help_imports_nothing_heavy(argv):
    loaded = _imported_by(*argv)
    assert not [m for m in loaded if m.startswith(HEAVY)], loaded


def test_a_commands_help_imports_that_command_only():
    loaded = _imported_by("rules", "--help")
    assert "kvtrace.commands.rules" in loaded
    others = {"kvtrace.commands.check", "kvtrace.commands.timeline", "kvtrace.commands.collect"}
    assert not others & set(loaded)
    assert not [m for m in loaded if m.startswith(("kvtrace.model", "kubernetes"))]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_commands_own(name):
    command = COMMANDS[name].load()
    assert command.name == name
    assert COMMANDS[name].summary == command.get_short_help_str(limit=1000)


def test_the_lazy_listing_is_the_listing_of_the_loaded_commands():
    fresh = LazyGroup("kvtrace", lazy=COMMANDS, help=cli.help)  # nothing loaded into it yet
    lazy = fresh.get_help(click.Context(fresh, info_name="kvtrace", terminal_width=100))
    assert fresh.commands == {}
    loaded = click.Group("kvtrace", commands=[c.load() for c in COMMANDS.values()], help=cli.help)
    eager = loaded.get_help(click.Context(loaded, info_name="kvtrace", terminal_width=100))
    assert lazy.split("Commands:")[1] == eager.split("Commands:")[1]


@pytest.mark.parametrize("columns", ["40", "60", "79", "80", "200", "", "0", "wide"])
def test_the_help_width_is_clicks_without_shutil(monkeypatch, columns):
    import shutil

    monkeypatch.setenv("COLUMNS", columns)
    assert help_width() == max(min(shutil.get_terminal_size().columns, 80) - 2, 50)


@pytest.mark.parametrize("argv", [["--help"], ["timeline", "--help"], ["check", "--help"]])
def test_help_does_not_import_shutil(argv):
    script = (
        f"import sys\nfrom kvtrace.cli import run\nrun({argv!r})\nprint('shutil' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "False"


@pytest.mark.parametrize("command", ["timeline", "check"])
def test_a_json_bundle_is_read_without_yaml_or_tarfile(tmp_path, command):
    """A directory bundle of JSON objects read to JSON output needs neither YAML nor archives:
    importing them is start-up time that grep never pays."""
    from kvsim.histories import legitimate
    from tests.simulated import bundle_of

    history = legitimate(5, vm_count=1)
    root = bundle_of(history, tmp_path / "bundle")
    assert not list(root.glob("objects/*.yaml"))
    target = ["timeline", f"default/{history.vms[0]}"] if command == "timeline" else ["check", "-A"]
    argv = [*target, "--bundle", str(root), "-o", "json"]
    script = (
        "import sys\nfrom kvtrace.cli import run\n"
        f"code = run({argv!r})\nprint(code, 'yaml' in sys.modules, 'tarfile' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    code, yaml_loaded, tar_loaded = done.stdout.splitlines()[-1].split()
    assert code in ("0", "3") and (yaml_loaded, tar_loaded) == ("False", "False"), done.stdout[
        -300:
    ]


def test_timeline_of_small_logs_starts_no_process_pool(tmp_path):
    """Worker processes pay only for big files (logscan.PARALLEL_MIN): a small log's timeline
    imports neither multiprocessing nor concurrent.futures (which imports logging)."""
    from kvsim.histories import legitimate
    from tests.simulated import bundle_of

    history = legitimate(5, vm_count=1)
    root = bundle_of(history, tmp_path / "bundle")
    logs = [arg for path in sorted(root.glob("logs/**/*.log")) for arg in ("--log", str(path))]
    assert logs
    argv = ["timeline", f"default/{history.vms[0]}", *logs, "-o", "json"]
    script = (
        "import sys\nfrom kvtrace.cli import run\ncode = run("
        f"{argv!r})\nprint(code, 'multiprocessing' in sys.modules, 'concurrent.futures' in "
        "sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1].split() in (
        ["0", "False", "False"],
        ["3", "False", "False"],
    )
