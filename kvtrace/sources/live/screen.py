"""Names that reach a URL or a bundle path, screened first (kvtrace/sources/live/names.py rules).

The user's namespaces and VM names are usage errors when they are not Kubernetes names. Names
from the API server's own data (the KubeVirt CR's namespace, a VMI's node, a virt-controller
pod and its containers) are each a ``missing[]`` entry saying which name and why, and are never
requested or written; ``report`` is :meth:`BundleWriter.add_missing`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kvtrace.errors import UsageError
from kvtrace.evidence import KUBEVIRT, NODE, POD
from kvtrace.sources.live.names import refusal, shown
from kvtrace.sources.live.settings import CollectScope

Report = Callable[..., None]
LogTarget = tuple[str, str, str]  # pod, container, instance


def check_scope(scope: CollectScope, base: str, kubevirt_namespace: str | None) -> None:
    """``-n``, ``--vm``, ``--kubevirt-namespace`` and the context's namespace, when used."""
    named = [("-n", n) for n in scope.namespaces or ()]
    named += [("--vm", ns or base) for ns, _ in scope.vms]
    named += [("--kubevirt-namespace", kubevirt_namespace)] if kubevirt_namespace else []
    if scope.namespaces == () and not scope.vms:
        named.append(("the kubeconfig context", base))
    for where, namespace in named:
        reason = refusal("namespace", namespace, label=True)
        if reason:
            raise UsageError(f"{where}: {reason}")
    for _, name in scope.vms:
        reason = refusal("VM", name)
        if reason:
            raise UsageError(f"--vm: {reason}")


def usable_namespaces(namespaces: Iterable[str], report: Report) -> list[str]:
    """Namespaces KubeVirt CRs live in, as read from the CRs."""
    kept = []
    for namespace in namespaces:
        reason = refusal("namespace", namespace, label=True)
        if reason:
            report(f"{reason}: that KubeVirt CR is ignored", kind=KUBEVIRT)
        else:
            kept.append(namespace)
    return kept


def usable_nodes(names: Iterable[str], report: Report) -> list[str]:
    """Node names (from VMI status, labels, migration state and launcher pods) fit for a URL."""
    kept = []
    for name in names:
        reason = refusal("node", name)
        if reason:
            report(f"{reason} (from a VMI or pod); not requested", kind=NODE)
        else:
            kept.append(name)
    return kept


def usable_log_targets(
    namespace: str, targets: Iterable[LogTarget], report: Report
) -> list[LogTarget]:
    """Pod and container names become a URL and ``logs/<ns>/<pod>/<container>/``."""
    kept = []
    for pod, container, instance in targets:
        reason = refusal("pod", pod) or refusal("container", container, label=True)
        if reason:
            where = f"pod {shown(pod)}, container {shown(container)}"
            report(f"{reason}: its log is not read ({where})", kind=POD, namespace=namespace)
        else:
            kept.append((pod, container, instance))
    return kept
