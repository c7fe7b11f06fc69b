"""The plain-text outputs (``-o table``, ``-o wide``, ``-o markdown``) of every report kind,
composed from the shapes: the tables plus the lines a terminal reader needs under them.

Each returns :class:`~kvtrace.render.terminal.Line` s laid out for a
:class:`~kvtrace.render.terminal.View` (its width, its headers); the writer makes them safe for a
terminal and colours them when the view asks for colour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtrace.render import check_shape, leader_shape, overhead_shape, rules_shape
from kvtrace.render import timeline_shape as timeline
from kvtrace.render.table import table_lines
from kvtrace.render.terminal import BAD, GOOD, HEADER, OPEN, PIPED, Line, View, plain

if TYPE_CHECKING:
    from kvtrace.check.report import CheckReport
    from kvtrace.leader.history import LeaderHistory
    from kvtrace.leader.status import LeaderStatus
    from kvtrace.model.engine import AssessedTimeline
    from kvtrace.overhead.report import OverheadReport

_MARK_STYLES = {"✗": BAD, "?": OPEN, "✓": GOOD}


def _blocks(parts: list[list[Line]]) -> list[Line]:
    out: list[Line] = []
    for part in (p for p in parts if p):
        out += [Line(""), *part] if out else part
    return out


def marked(lines: list[str]) -> list[Line]:
    """Lines styled by the verdict mark they start with (``✗ …``, ``  ? …``)."""
    return [Line(text, _MARK_STYLES.get(text.lstrip()[:1], "")) for text in lines]


def timeline_table(report: AssessedTimeline, view: View = PIPED, wide: bool = False) -> list[Line]:
    headers = timeline.WIDE_HEADERS if wide else timeline.TABLE_HEADERS
    rows = timeline.table_rows(report.timeline, wide, report.assessment)
    styles = [_MARK_STYLES.get(row[8][:1], "") for row in rows]
    prose = [headers.index(h) for h in ("WHAT", "REASON") if h in headers]  # never EVIDENCE
    table = table_lines(headers, rows, view, styles, shrink=prose)
    return _blocks([table, marked(timeline.summary_lines(*report))])


def timeline_wide(report: AssessedTimeline, view: View = PIPED) -> list[Line]:
    return timeline_table(report, view, wide=True)


def check_table(report: CheckReport, view: View = PIPED, wide: bool = False) -> list[Line]:
    """The VMs with findings (every VM with ``wide``), every violation, and the headline last."""
    vms = check_shape.listed(report, every=wide)
    parts = []
    if vms:
        headers = check_shape.WIDE_HEADERS if wide else check_shape.HEADERS
        rows = check_shape.wide_rows(vms) if wide else check_shape.table_rows(report, vms)
        styles = [check_shape.row_style(vm) for vm in vms]
        parts.append(table_lines(headers, rows, view, styles, len(headers) - 1 if wide else None))
    parts.append(marked(check_shape.violation_lines(report)))
    unlisted = marked(check_shape.unlisted_lines(report, vms))
    parts.append([*unlisted, *plain(check_shape.summary_lines(report))])
    return _blocks(parts)


def check_wide(report: CheckReport, view: View = PIPED) -> list[Line]:
    return check_table(report, view, wide=True)


def overhead_table(report: OverheadReport, view: View = PIPED) -> list[Line]:
    shape = overhead_shape
    parts = [plain(shape.header_lines(report))]
    if report.overhead is not None:
        cut = [shape.TERM_HEADERS.index(h) for h in ("WHY", "CONDITION")]  # prose, not values
        parts.append(table_lines(shape.TERM_HEADERS, shape.term_rows(report), view, shrink=cut))
    rows = shape.check_rows(report)
    styles = [_MARK_STYLES.get(row[0], OPEN) for row in rows]
    note = shape.CHECK_HEADERS.index("NOTE")
    parts.append(table_lines(shape.CHECK_HEADERS, rows, view, styles, shrink=note))
    parts.append(marked(shape.summary_lines(report)))
    return _blocks(parts)


def leader_status_table(status: LeaderStatus, view: View = PIPED, wide: bool = False) -> list[Line]:
    shape = leader_shape
    state = BAD if status.failed else GOOD
    lock = [Line(t, state if t.startswith("State:") else "") for t in shape.lock_lines(status)]
    parts = [lock]
    if status.replicas:
        headers = shape.REPLICA_WIDE_HEADERS if wide else shape.REPLICA_HEADERS
        styles = [HEADER if r.holder else "" for r in status.replicas]
        rows = shape.replica_rows(status, wide)
        parts.append(table_lines(headers, rows, view, styles, len(headers) - 1 if wide else None))
    else:
        parts.append([Line("No virt-controller pods in the evidence.")])
    parts.append(plain([f"Note: {n}" for n in status.notes]))
    return _blocks(parts)


def leader_status_wide(status: LeaderStatus, view: View = PIPED) -> list[Line]:
    return leader_status_table(status, view, wide=True)


def leader_history_table(
    history: LeaderHistory, view: View = PIPED, wide: bool = False
) -> list[Line]:
    shape = leader_shape
    parts = [plain(shape.history_header(history))]
    epoch_headers = shape.EPOCH_WIDE_HEADERS if wide else shape.EPOCH_HEADERS
    parts.append(_section("Epochs", epoch_headers, shape.epoch_rows(history, wide), view))
    if history.epochs:
        parts.append(plain(["Evidence", *shape.evidence_lines(history)]))
    gaps = shape.gap_rows(history)
    styles = [BAD if g.too_long else "" for g in history.gaps]
    parts.append(_section("Leaderless gaps", shape.GAP_HEADERS, gaps, view, styles))
    what = shape.ACTION_HEADERS.index("WHAT")
    for overlap in history.overlaps:
        title = f"Overlap (split-brain suspicion): {' and '.join(overlap.replicas)}"
        rows = shape.action_rows(overlap.actions, overlap.leading)
        table = table_lines(shape.ACTION_HEADERS, rows, view, [BAD] * len(rows), what)
        parts.append([Line(title, BAD), *table])
    if not history.overlaps:
        parts.append(plain(["Overlaps: none (no two replicas acted in intersecting windows)"]))
    if history.strays:
        rows = shape.action_rows(history.strays)
        title = "Actions without the lease"
        parts.append(_section(title, shape.ACTION_HEADERS, rows, view, [BAD] * len(rows), what))
    parts.append(plain([f"Note: {n}" for n in history.notes]))
    return _blocks(parts)


def leader_history_wide(history: LeaderHistory, view: View = PIPED) -> list[Line]:
    return leader_history_table(history, view, wide=True)


def _section(
    title: str,
    headers: list[str],
    rows: list[list[str]],
    view: View,
    styles: list[str] | None = None,
    shrink: int | None = None,
) -> list[Line]:
    if not rows:
        return [Line(f"{title}: none")]
    return [Line(title), *table_lines(headers, rows, view, styles, shrink)]


def rules_table(_: object, view: View = PIPED) -> list[Line]:
    """On a narrow terminal the position lists give way first (``-o json`` has them all),
    then the sentences."""
    cut = [rules_shape.HEADERS.index(h) for h in ("POSITIONS", "WHAT THE CONTROLLER DOES")]
    return table_lines(rules_shape.HEADERS, rules_shape.rule_rows(), view, shrink=cut)


def rules_markdown(_: object, view: View = PIPED) -> str:
    return rules_shape.rules_markdown()
