"""The ``kvtrace`` command (also ``kubectl kvtrace``): thin, maps errors to exit codes."""

from __future__ import annotations

import os

import click

from kvtrace import __version__
from kvtrace.commands.check import check_command
from kvtrace.commands.collect import collect_command
from kvtrace.commands.leader import leader_command
from kvtrace.commands.rules import rules_command
from kvtrace.commands.timeline import timeline_command
from kvtrace.commands.verify_overhead import verify_overhead_command
from kvtrace.errors import EXIT_ERROR, FindingsPresent, KvtraceError
from kvtrace.render.controls import visible_controls


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvtrace")
def cli() -> None:
    """Forensics for KubeVirt's virt-controller: timelines from logs and objects."""


cli.add_command(timeline_command)
cli.add_command(check_command)
cli.add_command(rules_command)
cli.add_command(collect_command)
cli.add_command(verify_overhead_command)
cli.add_command(leader_command)


def run(argv: list[str] | None = None) -> int:
    """Run one command; typed errors become one clear line and an exit code, never a traceback."""
    try:
        code = cli.main(args=argv, prog_name="kvtrace", standalone_mode=False)
    except FindingsPresent as found:
        return found.exit_code  # the output already shows the findings
    except KvtraceError as err:
        click.echo(f"error: {visible_controls(str(err))}", err=True)
        return err.exit_code
    except click.exceptions.Abort as abort:
        if isinstance(abort.__cause__, KeyboardInterrupt):
            raise abort.__cause__ from None  # kvtrace.entry reports Ctrl-C and SIGTERM
        click.echo("aborted", err=True)
        return EXIT_ERROR
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except BrokenPipeError:
        return 0
    except OSError as err:  # an I/O error no layer anticipated: still the file and the reason
        where = f" ({err.filename})" if err.filename else ""
        click.echo(f"error: {visible_controls(f'{err.strerror or err}{where}')}", err=True)
        return EXIT_ERROR
    except Exception as err:  # last line of defence: no tracebacks for users
        if os.environ.get("KVTRACE_DEBUG"):
            raise
        click.echo(
            f"internal error: {type(err).__name__}: {visible_controls(str(err))} "
            "(set KVTRACE_DEBUG=1 for details; please report)",
            err=True,
        )
        return EXIT_ERROR
    return code if isinstance(code, int) else 0
