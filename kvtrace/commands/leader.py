"""``kvtrace leader status`` and ``kvtrace leader history``: who leads virt-controller, since
when, and whether it was ever ambiguous. Exit 0 when all is well, 3 on findings, 1 on errors."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from kvtrace.commands.options import (
    evidence_options,
    live_options,
    namespace_option,
    output_option,
    since_option,
)
from kvtrace.errors import FindingsPresent, NotFoundError, UsageError
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope

_NAMESPACE_HELP = (
    "Where KubeVirt runs, as in kubectl get lease -n NS (same as --kubevirt-namespace; default: "
    "found from the KubeVirt CR or virt-controller pods)."
)


@click.group("leader")
def leader_command() -> None:
    """The virt-controller leader: the Lease now, and the epochs in the logs."""


@leader_command.command("status")
@namespace_option(_NAMESPACE_HELP)
@evidence_options
@output_option("leader-status")
@live_options
def status_command(
    namespace: str | None,
    bundle: str | None,
    logs: tuple[str, ...],
    output: str,
    cluster: ClusterSettings,
) -> None:
    """The Lease (or pre-v1.3 Endpoints lock) and every virt-controller replica.

    Exit 0 when the lease is healthy, 3 when it is expired, held by a pod that does not exist,
    or absent (must-gather never collects it).
    """
    from kvtrace.leader.lock import kubevirt_namespace
    from kvtrace.leader.status import leader_status
    from kvtrace.sources.opener import open_evidence
    from kvtrace.timefmt import now

    cluster = _install_namespace(namespace, cluster)
    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        status = leader_status(evidence, namespace, evidence.captured_at or now())
    write("leader-status", status, output)
    if status.failed:
        raise FindingsPresent()


@leader_command.command("history")
@namespace_option(_NAMESPACE_HELP)
@since_option(
    "Only epochs, gaps and overlaps from TIME on (RFC 3339, or a duration such as 2h back from "
    "capture); the lines before it are still read, so an epoch that began earlier is whole."
)
@evidence_options
@output_option("leader-history")
@live_options
def history_command(
    namespace: str | None,
    since: str | None,
    bundle: str | None,
    logs: tuple[str, ...],
    output: str,
    cluster: ClusterSettings,
) -> None:
    """Leader epochs from every replica's current and previous logs and the lock object.

    Exit 0 when leadership was never in doubt, 3 when a leaderless gap outlasted the lease
    duration, two replicas acted in overlapping windows, or a replica acted without the lease.
    """
    from kvtrace.leader.history import leader_history, since_moment
    from kvtrace.leader.lock import kubevirt_namespace
    from kvtrace.sources.opener import open_evidence
    from kvtrace.timefmt import parse_window_bound

    cluster = _install_namespace(namespace, cluster)
    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        history = leader_history(evidence, namespace)
        reference, where = evidence.captured_at, _where(evidence.origin or bundle, logs)
    found_any = bool(history.epochs)
    if since:
        moment = parse_window_bound(since, reference or _last_moment(history))
        history = since_moment(history, moment) if moment else history
    write("leader-history", history, output)
    if history.failed:
        raise FindingsPresent()
    if not found_any:
        raise NotFoundError(_no_epochs(where, namespace, history.sources))


def _no_epochs(where: str, namespace: str, sources: list[str]) -> str:
    """Exit 1, not 0: with no leader line and no lock, leadership cannot be judged at all."""
    read = f"{len(sources)} virt-controller log(s)" if sources else "no virt-controller log"
    return (
        f"no leader-election lines and no Lease in {where or 'the evidence'} ({read} read, "
        f"namespace {namespace}): give the virt-controller logs of every replica (kubectl logs "
        f"-n {namespace} -l kubevirt.io=virt-controller --prefix) or a bundle with the Lease"
    )


def _where(origin: str | None, logs: tuple[str, ...]) -> str:
    if origin and origin != "-":
        return origin
    return ", ".join("stdin" if given == "-" else given for given in logs)


def _install_namespace(namespace: str | None, cluster: ClusterSettings) -> ClusterSettings:
    """``-n`` of a leader command is KubeVirt's namespace: one with --kubevirt-namespace."""
    if namespace is None:
        return cluster
    if cluster.kubevirt_namespace not in (None, namespace):
        raise UsageError(
            f"-n {namespace} and --kubevirt-namespace {cluster.kubevirt_namespace} disagree: "
            "both say where KubeVirt runs; give one"
        )
    return replace(cluster, kubevirt_namespace=namespace)


def _last_moment(history: Any) -> Any:
    from kvtrace.timefmt import now

    ends = [e.end or e.start for e in history.epochs]
    return max(ends) if ends else now()
