"""``kvtrace timeline NS/VM``: one VM's reconcile timeline from every source."""

from __future__ import annotations

import click

from kvtrace.model.engine import Assessment
from kvtrace.options import (
    evidence_options,
    live_options,
    output_option,
    split_key,
    window_options,
)
from kvtrace.pipeline import open_evidence
from kvtrace.render import timeline_shape as shape
from kvtrace.sources.live_settings import ClusterSettings, CollectScope
from kvtrace.timefmt import now, parse_window_bound
from kvtrace.timeline import Timeline

FORMATS = ["table", "wide", "json", "yaml", "csv"]


@click.command("timeline")
@click.argument("vm", metavar="NAMESPACE/VM")
@evidence_options
@window_options
@output_option(FORMATS)
@live_options
def timeline_command(
    vm: str,
    bundle: str | None,
    logs: tuple[str, ...],
    since: str | None,
    until: str | None,
    output: str,
    cluster: ClusterSettings,
) -> None:
    """Show the reconcile timeline of one VirtualMachine, every row pointing at its evidence."""
    from kvtrace.model.engine import assess
    from kvtrace.timeline import build_timeline

    namespace, name = split_key(vm)
    scope = CollectScope(namespaces=(namespace,), vms=((namespace, name),))
    with open_evidence(bundle, logs, cluster, scope) as evidence:
        reference = evidence.captured_at or now()
        start = parse_window_bound(since, reference)
        end = parse_window_bound(until, reference)
        timeline = build_timeline(evidence, namespace, name, start, end)
        click.echo(render(timeline, output, assess(timeline)), nl=False)


def render(timeline: Timeline, output: str, assessment: Assessment | None = None) -> str:
    if output == "json":
        from kvtrace.render.structured import to_json

        return to_json(shape.document(timeline, assessment))
    if output == "yaml":
        from kvtrace.render.structured import to_yaml

        return to_yaml(shape.document(timeline, assessment))
    if output == "csv":
        from kvtrace.render.structured import to_csv

        return to_csv(shape.csv_rows(timeline, assessment), shape.CSV_FIELDS)
    from kvtrace.render.table import render_table

    wide = output == "wide"
    headers = shape.WIDE_HEADERS if wide else shape.TABLE_HEADERS
    table = render_table(headers, shape.table_rows(timeline, wide, assessment))
    return table + "\n\n" + "\n".join(shape.summary_lines(timeline, assessment)) + "\n"
