"""``kvtrace timeline NS/VM``: one VM's reconcile timeline from every source."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kvtrace.commands.options import (
    evidence_options,
    kubevirt_version_option,
    live_options,
    namespace_option,
    object_key,
    output_file_option,
    output_option,
    window_options,
)
from kvtrace.errors import NotFoundError
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import live_namespace, open_evidence

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from datetime import datetime

    from kvtrace.evidence import Evidence
    from kvtrace.model.version import VersionInfo
    from kvtrace.timeline.build import Timeline


@click.command("timeline")
@click.argument("vm", metavar="[NAMESPACE/]VM")
@namespace_option("Namespace of VM (default: default; live, the context's).")
@evidence_options
@window_options
@output_option("timeline")
@output_file_option()
@kubevirt_version_option
@live_options
def timeline_command(
    vm: str,
    namespace: str | None,
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
    from kvtrace.model.engine import AssessedTimeline, assess
    from kvtrace.timefmt import now, window

    if "/" not in vm and not namespace:
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    namespace, name = object_key(vm, namespace, "VM")
    scope = CollectScope(namespaces=(namespace,), vms=((namespace, name),))
    try:  # a bundle's objects of other VMs are not decoded
        only = open_evidence(bundle, logs, cluster, scope, only=(namespace, name))
        timeline, version, reference = _read(only, namespace, name, kubevirt_version)
    except NotFoundError:  # its message lists the VMs that exist: read them all
        if not bundle:
            raise
        every = open_evidence(bundle, logs, cluster, scope)
        timeline, version, reference = _read(every, namespace, name, kubevirt_version)
    timeline.since, timeline.until = window(since, until, reference or now())
    assessment = assess(timeline, version=version)
    write("timeline", AssessedTimeline(timeline, assessment), output, output_file)


def _read(
    opened: AbstractContextManager[Evidence], namespace: str, name: str, flag: str | None
) -> tuple[Timeline, VersionInfo, datetime | None]:
    """The VM's timeline, the release and the moment the window counts back from."""
    from kvtrace.model.version import detect
    from kvtrace.timeline.build import build_timeline

    with opened as evidence:
        timeline = build_timeline(evidence, namespace, name)
        version = detect(evidence, flag)
        timeline.notes.extend(version.notes())
        return timeline, version, evidence.captured_at or timeline.last_time()
