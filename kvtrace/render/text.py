"""The plain-text outputs (``-o table``, ``-o wide``, ``-o markdown``) of every report kind,
composed from the shapes: the tables plus the lines a terminal reader needs under them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtrace.render import check_shape, leader_shape, overhead_shape, rules_shape
from kvtrace.render import timeline_shape as timeline
from kvtrace.render.table import render_table

if TYPE_CHECKING:
    from kvtrace.check.report import CheckReport
    from kvtrace.leader.history import LeaderHistory
    from kvtrace.leader.status import LeaderStatus
    from kvtrace.model.engine import AssessedTimeline
    from kvtrace.overhead.report import OverheadReport


def _blocks(parts: list[str]) -> str:
    return "\n\n".join(parts) + "\n"


def timeline_table(report: AssessedTimeline, wide: bool = False) -> str:
    headers = timeline.WIDE_HEADERS if wide else timeline.TABLE_HEADERS
    table = render_table(headers, timeline.table_rows(report.timeline, wide, report.assessment))
    return _blocks([table, "\n".join(timeline.summary_lines(*report))])


def timeline_wide(report: AssessedTimeline) -> str:
    return timeline_table(report, wide=True)


def check_table(report: CheckReport) -> str:
    parts = [render_table(check_shape.HEADERS, check_shape.table_rows(report))]
    violations = check_shape.violation_lines(report)
    if violations:
        parts.append("\n".join(violations))
    parts.append("\n".join(check_shape.summary_lines(report)))
    return _blocks(parts)


def overhead_table(report: OverheadReport) -> str:
    parts = ["\n".join(overhead_shape.header_lines(report))]
    if report.overhead is not None:
        parts.append(render_table(overhead_shape.TERM_HEADERS, overhead_shape.term_rows(report)))
    parts.append(render_table(overhead_shape.CHECK_HEADERS, overhead_shape.check_rows(report)))
    parts.append("\n".join(overhead_shape.summary_lines(report)))
    return _blocks(parts)


def leader_status_table(status: LeaderStatus) -> str:
    parts = ["\n".join(leader_shape.lock_lines(status))]
    if status.replicas:
        parts.append(render_table(leader_shape.REPLICA_HEADERS, leader_shape.replica_rows(status)))
    else:
        parts.append("No virt-controller pods in the evidence.")
    parts.extend(f"Note: {n}" for n in status.notes)
    return _blocks(parts)


def leader_history_table(history: LeaderHistory) -> str:
    shape = leader_shape
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
    return _blocks(parts)


def _section(title: str, headers: list[str], rows: list[list[str]]) -> str:
    return f"{title}\n" + render_table(headers, rows) if rows else f"{title}: none"


def rules_table(_: object) -> str:
    return render_table(rules_shape.HEADERS, rules_shape.rule_rows()) + "\n"


def rules_markdown(_: object) -> str:
    return rules_shape.rules_markdown()
