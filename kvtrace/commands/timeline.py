"""``kvtrace timeline NS/VM``: one VM's reconcile timeline from every source."""

from __future__ import annotations

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
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import live_namespace, open_evidence


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
    from kvtrace.model.version import detect
    from kvtrace.timefmt import now, window
    from kvtrace.timeline.build import build_timeline

    if "/" not in vm and not namespace:
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    namespace, name = object_key(vm, namespace, "VM")
    scope = CollectScope(namespaces=(namespace,), vms=((namespace, name),))
    with open_evidence(bundle, logs, cluster, scope) as evidence:
        timeline = build_timeline(evidence, namespace, name)
        reference = evidence.captured_at or timeline.last_time() or now()
        timeline.since, timeline.until = window(since, until, reference)
        version = detect(evidence, kubevirt_version)
        timeline.notes.extend(version.notes())
    assessment = assess(timeline, version=version)
    write("timeline", AssessedTimeline(timeline, assessment), output, output_file)
