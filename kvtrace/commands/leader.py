"""``kvtrace leader status`` and ``kvtrace leader history``: who leads virt-controller, since
when, and whether it was ever ambiguous. Exit 0 when all is well, 3 on findings, 1 on errors."""

from __future__ import annotations

import click

from kvtrace.commands.options import evidence_options, live_options, output_option
from kvtrace.errors import FindingsPresent
from kvtrace.render.outputs import write
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import open_evidence


@click.group("leader")
def leader_command() -> None:
    """The virt-controller leader: the Lease now, and the epochs in the logs."""


@leader_command.command("status")
@evidence_options
@output_option("leader-status")
@live_options
def status_command(
    bundle: str | None, logs: tuple[str, ...], output: str, cluster: ClusterSettings
) -> None:
    """The Lease (or pre-v1.3 Endpoints lock) and every virt-controller replica.

    Exit 0 when the lease is healthy, 3 when it is expired, held by a pod that does not exist,
    or absent (must-gather never collects it).
    """
    from kvtrace.leader.lock import kubevirt_namespace
    from kvtrace.leader.status import leader_status
    from kvtrace.timefmt import now

    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        status = leader_status(evidence, namespace, evidence.captured_at or now())
    write("leader-status", status, output)
    if status.failed:
        raise FindingsPresent()


@leader_command.command("history")
@evidence_options
@output_option("leader-history")
@live_options
def history_command(
    bundle: str | None, logs: tuple[str, ...], output: str, cluster: ClusterSettings
) -> None:
    """Leader epochs from every replica's current and previous logs and the lock object.

    Exit 0 when leadership was never in doubt, 3 when a leaderless gap outlasted the lease
    duration, two replicas acted in overlapping windows, or a replica acted without the lease.
    """
    from kvtrace.leader.history import leader_history
    from kvtrace.leader.lock import kubevirt_namespace

    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        history = leader_history(evidence, namespace)
    write("leader-history", history, output)
    if history.failed:
        raise FindingsPresent()
