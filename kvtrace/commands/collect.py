"""``kvtrace collect``: a read-only snapshot of a live cluster as a kvtrace bundle."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kvtrace.commands.completion import complete_file
from kvtrace.commands.options import (
    all_namespaces_option,
    live_options,
    namespace_option,
    selector_option,
    since_option,
)
from kvtrace.errors import FindingsPresent
from kvtrace.sources.live.settings import ClusterSettings

if TYPE_CHECKING:
    from kvtrace.sources.selectors import LabelSelector

# what collect writes: a directory (no suffix), or one of these archives
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
# names that say "a file of another kind": written as a directory they would mislead
_FILE_SUFFIXES = (
    ".zip", ".gz", ".xz", ".bz2", ".zst", ".7z", ".rar", ".tar.xz", ".tar.bz2", ".tar.zst",
    ".json", ".yaml", ".yml", ".log", ".txt",
)  # fmt: skip


@click.command("collect")
@namespace_option("VM namespace (default: the context's).")
@all_namespaces_option
@click.option("--vm", "vms", multiple=True, metavar="[NS/]NAME", help="Only this VM (repeatable).")
@selector_option("Only VMs whose labels match (sent to the API as labelSelector).")
@since_option("Only log lines from TIME on (a duration such as 2h, or RFC 3339).")
@click.option(
    "-f",
    "--filename",
    "output",
    required=True,
    metavar="PATH",
    callback=lambda ctx, param, value: bundle_destination(ctx, param, value),
    shell_complete=complete_file,
    help="Write the bundle here: a directory, or PATH.tar.gz / .tgz / .tar (never overwritten).",
)
@live_options
def collect_command(
    namespace: str | None,
    all_namespaces: bool,
    vms: tuple[str, ...],
    selector: LabelSelector | None,
    since: str | None,
    output: str,
    cluster: ClusterSettings,
) -> None:
    """Snapshot a live cluster, read-only, into a kvtrace bundle.

    Reads (GET only) VMs, VMIs, migrations, launcher pods, VM revisions, pools, replica sets,
    snapshots, snapshot contents and restores, Events, the virt-controller pods with their logs
    and Lease, the KubeVirt CR and the VMIs' nodes. Permissions needed: docs/rbac.yaml.

    Exit 0: complete; 3: written, but something was not collected (see the manifest's
    missing[]); 1: nothing written (cluster unreachable, credentials rejected, interrupted).
    """
    from kvtrace.sources.live.run import collect_to, missing_lines, scope_from_flags, summary_lines

    scope = scope_from_flags(namespace, all_namespaces, vms, since)
    if selector is not None:
        scope = replace(scope, vm_selector=selector.text)
    published = collect_to(Path(output), cluster, scope)
    if not cluster.quiet:
        click.echo("\n".join(summary_lines(published)))
    for line in missing_lines(published):
        click.echo(f"warning: {line}", err=True)
    for line in missing_lines(published, not_served=True):
        click.echo(f"note: {line}", err=True)
    if published.result.partial:
        raise FindingsPresent()


def bundle_destination(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-f``: a directory or a tar archive, as its name says; a name that says another kind of
    file (``x.zip``) is refused rather than written as a directory of that name."""
    if value is None:
        return None
    name = Path(value).name.lower()
    if name.endswith(ARCHIVE_SUFFIXES) or not name.endswith(_FILE_SUFFIXES):
        return value
    suffix = next(s for s in sorted(_FILE_SUFFIXES, key=len, reverse=True) if name.endswith(s))
    stem = value[: -len(suffix)]
    raise click.BadParameter(
        f"{value!r}: kvtrace writes a bundle as a directory or a tar archive, not {suffix}; "
        f"give {stem}.tar.gz (or .tgz, .tar), or a directory name such as {stem}",
        ctx,
        param,
    )
