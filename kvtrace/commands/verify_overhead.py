"""``kvtrace verify-overhead POD``: recompute a launcher pod from its VMI and compare."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kvtrace.commands.options import (
    evidence_options,
    kubevirt_version_option,
    live_options,
    namespace_option,
    object_key,
    output_option,
    split_key,
)
from kvtrace.errors import FindingsPresent, KvtraceError, UsageError
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope

if TYPE_CHECKING:
    from kvtrace.overhead.inputs import VerifyInputs
    from kvtrace.overhead.settings import SettingFlags


@click.command("verify-overhead")
@click.argument("pod", metavar="[NAMESPACE/]POD", required=False)
@namespace_option("Namespace of POD (default: default; live, the context's).")
@click.option("--pod-file", metavar="FILE", help="The pod as YAML/JSON (object or List).")
@click.option("--vmi-file", metavar="FILE", help="Its VMI as YAML/JSON (with --pod-file).")
@click.option("--kubevirt-file", metavar="FILE", help="The KubeVirt CR (with --pod-file).")
@kubevirt_version_option
@click.option("--cpu-allocation-ratio", type=int, help="When no KubeVirt CR sets it (10).")
@click.option("--overhead-ratio", metavar="R", help="additionalGuestMemoryOverheadRatio.")
@click.option("--memory-overcommit", type=int, help="When no KubeVirt CR sets it (100).")
@click.option("--feature-gate", multiple=True, metavar="GATE", help="Enabled gate. Repeatable.")
@click.option("--disabled-feature-gate", multiple=True, metavar="GATE", help="Disabled gate.")
@click.option("--binding-plugin", multiple=True, metavar="NAME=MEMORY", help="Plugin overhead.")
@evidence_options
@output_option("overhead")
@live_options
def verify_overhead_command(
    pod: str | None,
    namespace: str | None,
    pod_file: str | None,
    vmi_file: str | None,
    kubevirt_file: str | None,
    kubevirt_version: str | None,
    cpu_allocation_ratio: int | None,
    overhead_ratio: str | None,
    memory_overcommit: int | None,
    feature_gate: tuple[str, ...],
    disabled_feature_gate: tuple[str, ...],
    binding_plugin: tuple[str, ...],
    bundle: str | None,
    logs: tuple[str, ...],
    output: str,
    cluster: ClusterSettings,
) -> None:
    """Recompute what virt-controller rendered into a virt-launcher pod, term by term.

    Exit 0 when every check holds, 3 on any mismatch, 1 when something could not be read.
    """
    from kvtrace.overhead.settings import SettingFlags
    from kvtrace.sources.opener import live_namespace, open_evidence

    flags = SettingFlags(
        cpu_allocation_ratio,
        overhead_ratio,
        memory_overcommit,
        feature_gate,
        disabled_feature_gate,
        binding_plugin,
    )
    if pod_file:
        inputs = _file_inputs(pod, pod_file, vmi_file, kubevirt_file, namespace, bundle)
        _run(inputs, flags, kubevirt_version, output)
        return
    if vmi_file or kubevirt_file:
        raise UsageError("--vmi-file and --kubevirt-file go with --pod-file")
    if pod and "/" not in pod and not namespace:
        namespace = live_namespace(bundle, logs, cluster)  # live: the context's namespace
    ns, name = _pod_key(pod, namespace)
    from kvtrace.overhead.inputs import from_evidence

    with open_evidence(bundle, logs, cluster, CollectScope(namespaces=(ns,))) as evidence:
        _run(from_evidence(evidence, ns, name), flags, kubevirt_version, output)


def _pod_key(pod: str | None, namespace: str | None) -> tuple[str, str]:
    if not pod:
        raise UsageError("give a POD (NAMESPACE/POD or -n NAMESPACE POD), or --pod-file FILE")
    return object_key(pod, namespace, "POD")


def _file_inputs(
    pod: str | None,
    pod_file: str,
    vmi_file: str | None,
    kubevirt_file: str | None,
    namespace: str | None,
    bundle: str | None,
) -> VerifyInputs:
    from kvtrace.overhead.inputs import from_files

    if bundle:
        raise UsageError("--pod-file and --bundle exclude each other")
    name = split_key(pod)[1] if pod else None
    del namespace  # files name their own namespace
    return from_files(pod_file, vmi_file, kubevirt_file, name)


def _run(inputs: VerifyInputs, flags: SettingFlags, version: str | None, output: str) -> None:
    from kvtrace.overhead.inputs import require_launcher
    from kvtrace.overhead.report import verify_pod

    require_launcher(inputs)
    report = verify_pod(
        inputs.pod,
        inputs.vmi,
        inputs.kubevirt,
        flags,
        version,
        inputs.bundle_version,
        inputs.vmi_lookup,
    )
    write("overhead", report, output)
    if report.problems:
        raise KvtraceError(f"not everything could be checked: {report.problems[0]}")
    if report.failed:
        raise FindingsPresent()
