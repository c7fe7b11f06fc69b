"""``kvtrace timeline NS/VM``: one VM's reconcile timeline from every source."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kvtrace.commands.completion import complete_vm
from kvtrace.commands.options import (
    evidence_options,
    kubevirt_version_option,
    live_options,
    namespace_option,
    object_key,
    output_file_option,
    output_option,
    selector_option,
    window_options,
)
from kvtrace.errors import NotFoundError, UsageError
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope

if TYPE_CHECKING:
    from datetime import datetime

    from kvtrace.evidence import Evidence
    from kvtrace.model.version import VersionInfo
    from kvtrace.sources.selectors import LabelSelector
    from kvtrace.timeline.build import Timeline

    Read = tuple[Timeline, VersionInfo, datetime | None]


@click.command("timeline")
@click.argument("vm", metavar="[[NAMESPACE/]VM]", required=False, shell_complete=complete_vm)
@namespace_option("Namespace of VM (default: default; live, the context's).")
@selector_option(
    "Instead of a VM name: the one VM of the namespace whose labels match (app=web,tier!=db)."
)
@evidence_options
@window_options
@output_option("timeline")
@output_file_option()
@kubevirt_version_option
@live_options
def timeline_command(
    vm: str | None,
    namespace: str | None,
    selector: LabelSelector | None,
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

    A bare VM name is in namespace default; live, in the context's (or the pod's) namespace.
    With -l instead of a name, the one VM whose labels match."""
    from kvtrace.model.engine import AssessedTimeline, assess
    from kvtrace.sources.opener import live_namespace
    from kvtrace.timefmt import now, window

    if vm and selector:
        raise UsageError("give a VM or -l SELECTOR, not both (a name cannot go with a selector)")
    if not vm and not selector:
        raise UsageError("give the VM: NAMESPACE/VM, -n NAMESPACE VM, or -l SELECTOR")
    if (not vm or "/" not in vm) and not namespace:
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    if selector is not None:
        ns = namespace or "default"
        found = _read_selected(bundle, logs, cluster, ns, selector, kubevirt_version)
    else:
        found = _read_named(bundle, logs, cluster, vm or "", namespace, kubevirt_version)
    timeline, version, reference = found
    timeline.since, timeline.until = window(since, until, reference or now())
    assessment = assess(timeline, version=version)
    write("timeline", AssessedTimeline(timeline, assessment), output, output_file)


def _read_named(
    bundle: str | None,
    logs: tuple[str, ...],
    cluster: ClusterSettings,
    vm: str,
    namespace: str | None,
    flag: str | None,
) -> Read:
    from kvtrace.sources.opener import open_evidence

    namespace, name = object_key(vm, namespace, "VM")
    scope = CollectScope(namespaces=(namespace,), vms=((namespace, name),))
    try:  # a bundle's objects of other VMs are not decoded
        with open_evidence(bundle, logs, cluster, scope, only=(namespace, name)) as evidence:
            return _read(evidence, namespace, name, flag)
    except NotFoundError:  # its message lists the VMs that exist: read them all
        if not bundle:
            raise
        with open_evidence(bundle, logs, cluster, scope) as evidence:
            return _read(evidence, namespace, name, flag)


def _read_selected(
    bundle: str | None,
    logs: tuple[str, ...],
    cluster: ClusterSettings,
    namespace: str,
    selector: LabelSelector,
    flag: str | None,
) -> Read:
    """``-l``: the one VM of ``namespace`` the selector matches (live, the API selects too)."""
    from kvtrace.sources.opener import open_evidence
    from kvtrace.sources.selectors import selected_vms

    scope = CollectScope(namespaces=(namespace,), vm_selector=selector.text)
    with open_evidence(bundle, logs, cluster, scope) as evidence:
        keys = selected_vms(evidence, selector, namespace)
        if len(keys) != 1:
            raise _not_one(keys, selector, namespace)
        return _read(evidence, namespace, keys[0][1], flag)


def _not_one(keys: list[tuple[str, str]], selector: LabelSelector, namespace: str) -> Exception:
    if not keys:
        return NotFoundError(
            f"no VM in namespace {namespace} has labels matching {selector.text!r}; check the "
            "selector (the VM's own metadata.labels, not its template's), or -n NAMESPACE"
        )
    names = ", ".join(name for _, name in keys[:10]) + (" …" if len(keys) > 10 else "")
    return UsageError(
        f"-l {selector.text!r} matches {len(keys)} VMs in {namespace} ({names}): a timeline is "
        "of one VM; name it, or run kvtrace check -l for all of them"
    )


def _read(evidence: Evidence, namespace: str, name: str, flag: str | None) -> Read:
    """The VM's timeline, the release and the moment the window counts back from."""
    from kvtrace.model.version import detect
    from kvtrace.timeline.build import build_timeline

    timeline = build_timeline(evidence, namespace, name)
    version = detect(evidence, flag)
    timeline.notes.extend(version.notes())
    return timeline, version, evidence.captured_at or timeline.last_time()
