"""``kvtrace check``: run the controller model over every selected VM; gate CI on violations."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kvtrace.commands.completion import complete_vm
from kvtrace.commands.options import (
    all_namespaces_option,
    bundles_options,
    kubevirt_version_option,
    live_options,
    namespace_option,
    output_file_option,
    output_option,
    selector_option,
    since_option,
    split_key,
)
from kvtrace.errors import FindingsPresent, InputError, UsageError
from kvtrace.model.verdicts import SEVERITIES
from kvtrace.render.outputs import DRAWS_TIMELINES, write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope

if TYPE_CHECKING:
    from datetime import datetime

    from kvtrace.check.report import CheckReport, Selection
    from kvtrace.sources.selectors import LabelSelector


@click.command("check")
@click.argument("vm", metavar="[[NAMESPACE/]VM]", required=False, shell_complete=complete_vm)
@namespace_option(
    "Only VMs in this namespace; with a bare VM, its namespace (default: default; live, "
    "the context's)."
)
@all_namespaces_option
@selector_option("Only VMs whose labels match (app=web,tier!=db; live, sent to the API).")
@since_option(
    "Only VMs and verdicts with evidence from TIME on (RFC 3339, or a duration such as 2h back "
    "from capture); the model still reads everything before it."
)
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
    selector: LabelSelector | None,
    since: str | None,
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
    from kvtrace.fleet.discover import holds_several, is_fleet
    from kvtrace.sources.opener import live_namespace, open_evidence

    fleet = partial(
        _fleet, bundles, logs, since, kubevirt_version, dask, output, output_file, fail_on
    )
    if is_fleet(bundles, dask, output):  # many bundles: one fleet report (kvtrace.fleet)
        fleet(_selection(vm, namespace, all_namespaces, selector))
        return
    bundle = bundles[0] if bundles else None
    if not (namespace or all_namespaces) and not (vm and "/" in vm):
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    selection = _selection(vm, namespace, all_namespaces, selector)
    keep = output in DRAWS_TIMELINES
    try:
        with open_evidence(bundle, logs, cluster, _live_scope(selection)) as evidence:
            report = run_check(
                evidence, selection, kubevirt_version, keep, not cluster.quiet, since is not None
            )
            reference = evidence.captured_at
    except InputError:
        if not (bundle and holds_several(bundle)):  # an archive of bundles: the fleet reads all
            raise
        fleet(selection)
        return
    if since:
        report = _since(report, since, reference)
    _write(report, output, output_file)
    if report.violations(fail_on):
        raise FindingsPresent()


def _fleet(
    bundles: tuple[str, ...],
    logs: tuple[str, ...],
    since: str | None,
    kubevirt_version: str | None,
    dask: str | None,
    output: str,
    output_file: str | None,
    fail_on: str,
    selection: Selection,
) -> None:
    from kvtrace.fleet.command import fleet_check

    if since:
        raise UsageError("--since reads one bundle: leave it out over many bundles")
    fleet_check(bundles, logs, selection, kubevirt_version, dask, output, output_file, fail_on)


def _selection(
    vm: str | None,
    namespace: str | None,
    all_namespaces: bool,
    selector: LabelSelector | None = None,
) -> Selection:
    from kvtrace.check.report import Selection

    if vm and selector:
        raise UsageError("give a VM or -l SELECTOR, not both (a name cannot go with a selector)")
    if vm and (("/" in vm and namespace) or all_namespaces):
        raise UsageError("give NAMESPACE/VM, or -n NAMESPACE, or -A — not several")
    if namespace and all_namespaces:
        raise UsageError("-n and -A exclude each other")
    if vm:
        ns, name = split_key(vm, namespace)  # -n NS VM reads as NS/VM, as in kubectl
        return Selection(ns, name)
    return Selection(None if all_namespaces else (namespace or "default"), labels=selector)


def _since(report: CheckReport, since: str, reference: datetime | None) -> CheckReport:
    from kvtrace.check.report import last_row_time, since_moment
    from kvtrace.timefmt import now, parse_window_bound

    moment = parse_window_bound(since, reference or last_row_time(report) or now())
    return since_moment(report, moment) if moment else report


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
    labels = selection.labels.text if selection.labels else None
    if selection.namespace is None:
        return CollectScope(namespaces=None, vm_selector=labels)
    if selection.name:
        return CollectScope((selection.namespace,), ((selection.namespace, selection.name),))
    return CollectScope((selection.namespace,), vm_selector=labels)
