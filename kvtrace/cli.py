"""The ``kvtrace`` command (also ``kubectl kvtrace``): thin, maps errors to exit codes.

Start-up is kept to what ``--help`` needs: the group knows each command by the module it lives in
and a one-line summary (:data:`COMMANDS`), and imports a command module only when that command
runs, shows its help or is completed. The model engine, the renderers and the Kubernetes client
are imported by the commands that use them, never here.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

import click
from click.shell_completion import CompletionItem

from kvtrace import __version__
from kvtrace.errors import EXIT_ERROR, FindingsPresent, KvtraceError

# click derives this from the program's name; kvtrace runs as kvtrace and as kubectl-kvtrace
COMPLETE_VAR = "_KVTRACE_COMPLETE"
PLUGIN_BINARY = "kubectl-kvtrace"


class LazyCommand(NamedTuple):
    """A command by where it is defined (``module:attribute``) and what ``--help`` lists for it;
    tests/test_cli_startup.py checks ``summary`` against the command's own help. (A NamedTuple:
    ``dataclasses`` would cost ``--help`` its import of ``inspect``.)"""

    target: str
    summary: str

    def load(self) -> click.Command:
        module, attribute = self.target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


COMMANDS: Mapping[str, LazyCommand] = {
    "check": LazyCommand(
        "kvtrace.commands.check:check_command",
        "Check every step of each VM's timeline against the built-in model of virt-controller.",
    ),
    "collect": LazyCommand(
        "kvtrace.commands.collect:collect_command",
        "Snapshot a live cluster, read-only, into a kvtrace bundle.",
    ),
    "leader": LazyCommand(
        "kvtrace.commands.leader:leader_command",
        "The virt-controller leader: the Lease now, and the epochs in the logs.",
    ),
    "rules": LazyCommand(
        "kvtrace.commands.rules:rules_command",
        "List the model's rules: id, severity, source positions, what the controller does.",
    ),
    "timeline": LazyCommand(
        "kvtrace.commands.timeline:timeline_command",
        "Show the reconcile timeline of one VirtualMachine, every row pointing at its evidence.",
    ),
    "verify-overhead": LazyCommand(
        "kvtrace.commands.verify_overhead:verify_overhead_command",
        "Recompute what virt-controller rendered into a virt-launcher pod, term by term.",
    ),
    "version": LazyCommand(
        "kvtrace.commands.version:version_command",
        "kvtrace's version, Python's, and the KubeVirt release of a bundle or cluster.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (see :class:`LazyCommand`)."""

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the summaries: listing a command does not import it."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self._summary(ctx, name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        names = [n for n in self.list_commands(ctx) if n.startswith(incomplete)]
        items = [CompletionItem(n, help=self._summary(ctx, n, 45)) for n in names]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def _summary(self, ctx: click.Context, name: str, limit: int) -> str:
        if name in self.lazy and name not in self.commands:
            stand_in = click.Command(name, help=self.lazy[name].summary)  # shortened as click does
            return stand_in.get_short_help_str(limit)
        command = super().get_command(ctx, name)
        return command.get_short_help_str(limit) if command is not None else ""


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="kvtrace")
def cli() -> None:
    """Forensics for KubeVirt's virt-controller: timelines from logs and objects."""


def prog_name(argv0: str | None = None) -> str:
    """``kubectl kvtrace`` when run as the kubectl plugin (kubectl execs ``kubectl-kvtrace``),
    so that usage lines and hints read as the user typed them; else ``kvtrace``."""
    name = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else ""))
    plugin = name.startswith(PLUGIN_BINARY)
    if COMPLETE_VAR in os.environ:  # a completion script binds the command the shell runs
        return PLUGIN_BINARY if plugin else "kvtrace"
    return "kubectl kvtrace" if plugin else "kvtrace"


def help_width() -> int:
    """The width click gives help (the terminal's columns, at most 80, less 2; at least 50),
    found as :func:`shutil.get_terminal_size` finds it but without importing :mod:`shutil`,
    which is most of what ``--help`` costs beyond click itself."""
    columns = os.environ.get("COLUMNS", "")
    if not (columns.isdigit() and int(columns) > 0):
        try:
            columns = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = "80"
    return max(min(int(columns) or 80, 80) - 2, 50)


def run(argv: list[str] | None = None) -> int:
    """Run one command; typed errors become one clear line and an exit code, never a traceback."""
    try:
        code = cli.main(
            args=argv,
            prog_name=prog_name(),
            complete_var=COMPLETE_VAR,
            standalone_mode=False,
            terminal_width=help_width(),
        )
    except FindingsPresent as found:
        return found.exit_code  # the output already shows the findings
    except KvtraceError as err:
        click.echo(f"error: {_visible(str(err))}", err=True)
        return err.exit_code
    except click.exceptions.Abort as abort:
        if isinstance(abort.__cause__, KeyboardInterrupt):
            raise abort.__cause__ from None  # kvtrace.entry reports Ctrl-C and SIGTERM
        click.echo("aborted", err=True)
        return EXIT_ERROR
    except click.exceptions.NoSuchOption as err:
        _no_namespace_lookalike(err)
        err.show()
        return err.exit_code
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except BrokenPipeError:
        return 0
    except OSError as err:  # an I/O error no layer anticipated: still the file and the reason
        where = f" ({err.filename})" if err.filename else ""
        click.echo(f"error: {_visible(f'{err.strerror or err}{where}')}", err=True)
        return EXIT_ERROR
    except Exception as err:  # last line of defence: no tracebacks for users
        if os.environ.get("KVTRACE_DEBUG"):
            raise
        click.echo(
            f"internal error: {type(err).__name__}: {_visible(str(err))} "
            "(set KVTRACE_DEBUG=1 for details; please report)",
            err=True,
        )
        return EXIT_ERROR
    return code if isinstance(code, int) else 0


# Cobra's shell-completion directives, which kubectl reads from a plugin's completion program
_COBRA_DEFAULT, _COBRA_NO_SPACE, _COBRA_NO_FILES, _COBRA_DIRS = 0, 2, 4, 16


def plugin_completions(words: list[str]) -> str:
    """What ``kubectl_complete-kvtrace WORD... INCOMPLETE`` prints for kubectl: one candidate a
    line (a tab, then its help), then ``:<directive>`` — files or directories for a path, no
    files for a name. Never fails: no candidates instead."""
    from click.shell_completion import ShellComplete

    incomplete = words[-1] if words else ""
    try:
        completer = ShellComplete(cli, {}, "kubectl kvtrace", COMPLETE_VAR)
        items = completer.get_completions(words[:-1], incomplete)
    except Exception:
        return f":{_COBRA_NO_FILES}\n"
    kinds = {item.type for item in items}
    if "file" in kinds:
        return f":{_COBRA_DEFAULT}\n"
    if "dir" in kinds:
        return f":{_COBRA_DIRS}\n"
    lines = [f"{i.value}\t{i.help}" if i.help else str(i.value) for i in items]
    directive = _COBRA_NO_FILES
    if items and all(str(i.value).endswith("=") for i in items):
        directive |= _COBRA_NO_SPACE  # -o jsonpath= goes on with its template
    return "".join(f"{line}\n" for line in lines) + f":{directive}\n"


def _no_namespace_lookalike(err: click.exceptions.NoSuchOption) -> None:
    """``--namespace`` is the namespace of the objects asked about, never where KubeVirt runs:
    click's spelling suggestion ``--kubevirt-namespace`` would send the user the wrong way."""
    if err.option_name.lstrip("-") in ("namespace", "n", "namespac", "namespaces"):
        err.possibilities = [  # type: ignore[misc]  # click declares it final; the text is ours
            p for p in err.possibilities or [] if p != "--kubevirt-namespace"
        ]
        command = err.ctx.command_path if err.ctx else "this command"
        takes = err.ctx is not None and any(
            p.name == "kubevirt_namespace" for p in err.ctx.command.params
        )
        where = " (--kubevirt-namespace NS says where KubeVirt itself runs)" if takes else ""
        err.message = (  # type: ignore[misc]
            f"No such option: {err.option_name}: {command} reads no objects of a namespace{where}"
        )


def _visible(text: str) -> str:
    """Error text with control characters escaped (imported only when an error is shown)."""
    from kvtrace.render.controls import visible_controls

    return visible_controls(text)
