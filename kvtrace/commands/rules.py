"""``kvtrace rules``: every rule of the built-in controller model."""

from __future__ import annotations

import click

from kvtrace.commands.options import output_option
from kvtrace.render.outputs import write


@click.command("rules")
@output_option("rules")
def rules_command(output: str) -> None:
    """List the model's rules: id, severity, source positions, what the controller does."""
    write("rules", None, output)
