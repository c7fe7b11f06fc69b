"""``kvtrace rules``: every rule of the built-in controller model."""

from __future__ import annotations

import click

from kvtrace.commands.options import output_option


@click.command("rules")
@output_option(["table", "json", "yaml", "markdown"])
def rules_command(output: str) -> None:
    """List the model's rules: id, severity, source positions, what the controller does."""
    from kvtrace.render import rules_shape as shape

    if output == "json":
        from kvtrace.render.structured import to_json

        click.echo(to_json(shape.rules_document()), nl=False)
    elif output == "yaml":
        from kvtrace.render.structured import to_yaml

        click.echo(to_yaml(shape.rules_document()), nl=False)
    elif output == "markdown":
        click.echo(shape.rules_markdown(), nl=False)
    else:
        from kvtrace.render.table import render_table

        click.echo(render_table(shape.HEADERS, shape.rule_rows()))
