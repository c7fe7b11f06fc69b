"""``kvtrace leader status`` and ``kvtrace leader history``: who leads virt-controller, since
when, and whether it was ever ambiguous. Exit 0 when all is well, 3 on findings, 1 on errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kvtrace.commands.options import evidence_options, live_options, output_option
from kvtrace.errors import EXIT_FINDINGS
from kvtrace.sources.live.settings import ClusterSettings, CollectScope
from kvtrace.sources.opener import open_evidence

if TYPE_CHECKING:
    from kvtrace.leader.status import LeaderHistory, LeaderStatus

FORMATS = ["table", "json", "yaml"]


@click.group("leader")
def leader_command() -> None:
    """The virt-controller leader: the Lease now, and the epochs in the logs."""


@leader_command.command("status")
@evidence_options
@output_option(FORMATS)
@live_options
def status_command(
    bundle: str | None, logs: tuple[str, ...], output: str, cluster: ClusterSettings
) -> None:
    """The Lease (or pre-v1.3 Endpoints lock) and every virt-controller replica.

    Exit 0 when the lease is healthy, 3 when it is expired, held by a pod that does not exist,
    or absent (must-gather never collects it).
    """
    from kvtrace.leader.status import kubevirt_namespace, leader_status
    from kvtrace.timefmt import now

    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        status = leader_status(evidence, namespace, evidence.captured_at or now())
    click.echo(render_status(status, output), nl=False)
    if status.failed:
        raise click.exceptions.Exit(EXIT_FINDINGS)


@leader_command.command("history")
@evidence_options
@output_option(FORMATS)
@live_options
def history_command(
    bundle: str | None, logs: tuple[str, ...], output: str, cluster: ClusterSettings
) -> None:
    """Leader epochs from every replica's current and previous logs and the lock object.

    Exit 0 when leadership was never in doubt, 3 when a leaderless gap outlasted the lease
    duration, two replicas acted in overlapping windows, or a replica acted without the lease.
    """
    from kvtrace.leader.status import kubevirt_namespace, leader_history

    with open_evidence(bundle, logs, cluster, CollectScope()) as evidence:
        namespace = kubevirt_namespace(evidence, cluster.kubevirt_namespace)
        history = leader_history(evidence, namespace)
    click.echo(render_history(history, output), nl=False)
    if history.failed:
        raise click.exceptions.Exit(EXIT_FINDINGS)


def _structured(document: dict[str, object], output: str) -> str:
    from kvtrace.render.structured import to_json, to_yaml

    return (to_json if output == "json" else to_yaml)(document)


def render_status(status: LeaderStatus, output: str) -> str:
    from kvtrace.render import leader_shape as shape

    if output in ("json", "yaml"):
        return _structured(shape.status_document(status), output)
    from kvtrace.render.table import render_table

    parts = ["\n".join(shape.lock_lines(status))]
    if status.replicas:
        parts.append(render_table(shape.REPLICA_HEADERS, shape.replica_rows(status)))
    else:
        parts.append("No virt-controller pods in the evidence.")
    parts.extend(f"Note: {n}" for n in status.notes)
    return "\n\n".join(parts) + "\n"


def render_history(history: LeaderHistory, output: str) -> str:
    from kvtrace.render import leader_shape as shape

    if output in ("json", "yaml"):
        return _structured(shape.history_document(history), output)
    from kvtrace.render.table import render_table

    parts = ["\n".join(shape.history_header(history))]
    parts.append(_section("Epochs", shape.EPOCH_HEADERS, shape.epoch_rows(history)))
    if history.epochs:
        parts.append("Evidence\n" + "\n".join(shape.evidence_lines(history)))
    parts.append(_section("Leaderless gaps", shape.GAP_HEADERS, shape.gap_rows(history)))
    for overlap in history.overlaps:
        title = f"Overlap (split-brain suspicion): {' and '.join(overlap.replicas)}"
        rows = shape.action_rows(overlap.actions, overlap.leading)
        parts.append(title + "\n" + render_table(shape.ACTION_HEADERS, rows))
    if not history.overlaps:
        parts.append("Overlaps: none (no two replicas acted in intersecting windows)")
    if history.strays:
        rows = shape.action_rows(history.strays)
        parts.append(_section("Actions without the lease", shape.ACTION_HEADERS, rows))
    parts.extend(f"Note: {n}" for n in history.notes)
    return "\n\n".join(parts) + "\n"


def _section(title: str, headers: list[str], rows: list[list[str]]) -> str:
    from kvtrace.render.table import render_table

    return f"{title}\n" + render_table(headers, rows) if rows else f"{title}: none"
