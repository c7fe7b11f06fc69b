"""``kvtrace timeline NS/VM``: one VM's reconcile timeline from every source."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kvtrace.commands.options import (
    evidence_options,
    live_options,
    output_option,
    split_key,
    window_options,
)
from kvtrace.model.engine import Assessment
from kvtrace.render import timeline_shape as shape
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import live_namespace, open_evidence
from kvtrace.timefmt import now, parse_window_bound
from kvtrace.timeline.build import Timeline

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ["table", "wide", "json", "yaml", "csv", "html", "perfetto"]


def output_file_option(func: F) -> F:
    """``--output-file``: write the output to a file instead of stdout (handy for html)."""
    return click.option(
        "--output-file",
        metavar="PATH",
        type=click.Path(dir_okay=False, writable=True),
        help="Write the output to PATH instead of stdout.",
    )(func)


def emit(text: str, output_file: str | None) -> None:
    """Print, or write the whole output to ``output_file`` (UTF-8, as printed)."""
    if output_file is None:
        click.echo(text, nl=False)
        return
    with open(output_file, "w", encoding="utf-8") as handle:
        handle.write(text)


@click.command("timeline")
@click.argument("vm", metavar="[NAMESPACE/]VM")
@evidence_options
@window_options
@output_option(FORMATS)
@output_file_option
@click.option(
    "--kubevirt-version",
    metavar="VERSION",
    help="The KubeVirt version that wrote the evidence (else detected).",
)
@live_options
def timeline_command(
    vm: str,
    bundle: str | None,
    logs: tuple[str, ...],
    since: str | None,
    until: str | None,
    output: str,
    output_file: str | None,
    kubevirt_version: str | None,
    cluster: ClusterSettings,
) -> None:
    """Show the reconcile timeline of one VirtualMachine, every row pointing at its evidence.

    A bare VM name is in namespace default; live, in the context's (or the pod's) namespace."""
    from kvtrace.model.engine import assess
    from kvtrace.model.version import detect
    from kvtrace.timeline.build import build_timeline

    bare = live_namespace(bundle, logs, cluster) if "/" not in vm else None
    namespace, name = split_key(vm, bare)  # live, a bare name is in the context's namespace
    scope = CollectScope(namespaces=(namespace,), vms=((namespace, name),))
    with open_evidence(bundle, logs, cluster, scope) as evidence:
        reference = evidence.captured_at or now()
        start = parse_window_bound(since, reference)
        end = parse_window_bound(until, reference)
        timeline = build_timeline(evidence, namespace, name, start, end)
        version_note = detect(evidence, kubevirt_version).note()
        if version_note:
            timeline.notes.append(version_note)
        emit(render(timeline, output, assess(timeline)), output_file)


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
    if output == "html":
        from kvtrace.render.html_timeline import render_html_timeline

        return render_html_timeline(timeline, assessment)
    if output == "perfetto":
        from kvtrace.render.perfetto import render_perfetto

        return render_perfetto([(timeline, assessment)])
    from kvtrace.render.table import render_table

    wide = output == "wide"
    headers = shape.WIDE_HEADERS if wide else shape.TABLE_HEADERS
    table = render_table(headers, shape.table_rows(timeline, wide, assessment))
    return table + "\n\n" + "\n".join(shape.summary_lines(timeline, assessment)) + "\n"
