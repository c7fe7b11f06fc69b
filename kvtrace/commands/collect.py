"""``kvtrace collect``: a read-only snapshot of a live cluster as a kvtrace bundle."""

from __future__ import annotations

from pathlib import Path

import click

from kvtrace.commands.options import (
    all_namespaces_option,
    live_options,
    namespace_option,
    since_option,
)
from kvtrace.errors import FindingsPresent
from kvtrace.sources.live.settings import ClusterSettings


@click.command("collect")
@namespace_option("VM namespace (default: the context's).")
@all_namespaces_option
@click.option("--vm", "vms", multiple=True, metavar="[NS/]NAME", help="Only this VM (repeatable).")
@since_option("Only log lines from TIME on (a duration such as 2h, or RFC 3339).")
@click.option(
    "-f",
    "--filename",
    "output",
    required=True,
    metavar="PATH",
    help="Write the bundle here: a directory, or PATH.tar.gz / .tgz / .tar (never overwritten).",
)
@live_options
def collect_command(
    namespace: str | None,
    all_namespaces: bool,
    vms: tuple[str, ...],
    since: str | None,
    output: str,
    cluster: ClusterSettings,
) -> None:
    """Snapshot a live cluster, read-only, into a kvtrace bundle.

    Reads (GET only) VMs, VMIs, migrations, launcher pods, VM revisions, Events, the
    virt-controller pods with their logs and Lease, the KubeVirt CR and the VMIs' nodes.
    Permissions needed: docs/rbac.yaml.

    Exit 0: complete; 3: written, but something was not collected (see the manifest's
    missing[]); 1: nothing written (cluster unreachable, credentials rejected, interrupted).
    """
    from kvtrace.sources.live.run import collect_to, missing_lines, scope_from_flags, summary_lines

    scope = scope_from_flags(namespace, all_namespaces, vms, since)
    published = collect_to(Path(output), cluster, scope)
    if not cluster.quiet:
        click.echo("\n".join(summary_lines(published)))
    for line in missing_lines(published):
        click.echo(f"warning: {line}", err=True)
    if published.result.partial:
        raise FindingsPresent()
