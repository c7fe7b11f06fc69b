"""``kvtrace check``: run the controller model over every selected VM; gate CI on violations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from kvtrace.commands.options import (
    all_namespaces_option,
    bundles_options,
    kubevirt_version_option,
    live_options,
    namespace_option,
    output_file_option,
    output_option,
    split_key,
)
from kvtrace.errors import FindingsPresent, UsageError
from kvtrace.model.verdicts import SEVERITIES
from kvtrace.render.outputs import DRAWS_TIMELINES, write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import live_namespace, open_evidence

if TYPE_CHECKING:
    from kvtrace.check.report import CheckReport, Selection


@click.command("check")
@click.argument("vm", metavar="[[NAMESPACE/]VM]", required=False)
@namespace_option(
    "Only VMs in this namespace; with a bare VM, its namespace (default: default; live, "
    "the context's)."
)
@all_namespaces_option
@click.option(
    "--fail-on",
    type=click.Choice(list(SEVERITIES)),
    default="error",
    show_default=True,
    help="Exit 3 when a violation of at least this severity exists.",
)
@kubevirt_version_option
@bundles_options
@click.option(
    "--dask",
    metavar="ADDRESS",
    help="Check as Dask tasks, one per bundle (or part of a big one): local (worker processes "
    "here; local:N for N), or tcp://HOST:PORT (a running scheduler). Needs kvtrace[fleet].",
)
@output_option("check")
@output_file_option(
    "; with -o html a directory (existing, or ending in /) gets index.html plus one timeline "
    "page per VM."
)
@live_options
def check_command(
    vm: str | None,
    namespace: str | None,
    all_namespaces: bool,
    fail_on: str,
    kubevirt_version: str | None,
    bundles: tuple[str, ...],
    logs: tuple[str, ...],
    dask: str | None,
    output: str,
    output_file: str | None,
    cluster: ClusterSettings,
) -> None:
    """Check every step of each VM's timeline against the built-in model of virt-controller."""
    from kvtrace.check.run import run_check
    from kvtrace.fleet.discover import is_fleet

    if is_fleet(bundles, dask, output):  # many bundles: one fleet report (kvtrace.fleet)
        from kvtrace.fleet.command import fleet_check

        selection = _selection(vm, namespace, all_namespaces)
        fleet_check(bundles, logs, selection, kubevirt_version, dask, output, output_file, fail_on)
        return
    bundle = bundles[0] if bundles else None
    if not (namespace or all_namespaces) and not (vm and "/" in vm):
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    selection = _selection(vm, namespace, all_namespaces)
    with open_evidence(bundle, logs, cluster, _live_scope(selection)) as evidence:
        report = run_check(evidence, selection, kubevirt_version, output in DRAWS_TIMELINES)
    _write(report, output, output_file)
    if report.violations(fail_on):
        raise FindingsPresent()


def _selection(vm: str | None, namespace: str | None, all_namespaces: bool) -> Selection:
    from kvtrace.check.report import Selection

    if vm and (("/" in vm and namespace) or all_namespaces):
        raise UsageError("give NAMESPACE/VM, or -n NAMESPACE, or -A — not several")
    if namespace and all_namespaces:
        raise UsageError("-n and -A exclude each other")
    if vm:
        ns, name = split_key(vm, namespace)  # -n NS VM reads as NS/VM, as in kubectl
        return Selection(ns, name)
    return Selection(None if all_namespaces else (namespace or "default"))


def _write(report: CheckReport, output: str, output_file: str | None) -> None:
    if not output_file or not (Path(output_file).is_dir() or output_file.endswith("/")):
        write("check", report, output, output_file)
        return
    if output != "html":
        raise UsageError(f"--output-file {output_file} is a directory: only -o html writes one")
    from kvtrace.render.html_check import write_html_site

    written = write_html_site(report, Path(output_file))
    click.echo(f"wrote {len(written)} files; open {written[0]}", err=True)


def _live_scope(selection: Selection) -> CollectScope:
    """What to collect live for this selection: one VM, one namespace, or every namespace."""
    if selection.namespace is None:
        return CollectScope(namespaces=None)
    if selection.name:
        return CollectScope((selection.namespace,), ((selection.namespace, selection.name),))
    return CollectScope((selection.namespace,))
