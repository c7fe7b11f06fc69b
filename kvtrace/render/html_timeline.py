"""``kvtrace timeline -o html``: one VM's timeline as swimlanes, findings and the full table.

``shape_html_timeline`` decides everything the page shows and is what the tests compare; the
page is that shape as JSON plus the same rows as an HTML table (readable without script).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kvtrace.model.engine import AssessedTimeline, Assessment
from kvtrace.model.rules import RULES
from kvtrace.model.verdicts import EXPLAINED, UNVERIFIABLE, VIOLATION, Verdict
from kvtrace.render import html_page as page
from kvtrace.render.html_axis import Axis, build_axis
from kvtrace.render.html_lanes import Span, action_effects, epoch_us, lane_key, lanes, spans
from kvtrace.render.timeline_shape import items, shown, summary_lines
from kvtrace.render.verdict_shape import verdict_data
from kvtrace.render.words import delta
from kvtrace.timeline.build import Timeline

STATUS_ORDER = (VIOLATION, UNVERIFIABLE, EXPLAINED)


def row_status(verdicts: list[Verdict]) -> str | None:
    """What a mark shows: a violation first, then an open question, then explained."""
    found = {v.status for v in verdicts}
    return next((s for s in STATUS_ORDER if s in found), None)


def shape_html_timeline(timeline: Timeline, assessment: Assessment | None) -> dict[str, Any]:
    """Everything the chart draws: lanes, spans, marks, arrows, rows, rules, findings."""
    by_row = assessment.by_row if assessment else {}
    all_spans = spans(timeline)
    origin, axis = _axis(timeline, all_spans)
    at = _placer(origin, axis)
    marks = _marks(timeline, at, by_row)
    return {
        "title": f"{timeline.namespace}/{timeline.name}",
        "originUs": origin,
        "axis": axis.shape(),
        "lanes": [{"key": ln.key, "group": ln.group, "label": ln.label} for ln in lanes(timeline)],
        "spans": [_span(s, at, by_row) for s in all_spans],
        "marks": marks,
        "flows": [{"from": a + 1, "to": b + 1} for a, b in action_effects(timeline)],
        "rows": _rows(timeline, assessment),
        "extent": _extent(marks),
        "rules": _rules(assessment),
        "findings": _findings(assessment),
        "summary": summary_lines(timeline, assessment),
    }


def _rows(timeline: Timeline, assessment: Assessment | None) -> list[dict[str, Any]]:
    """The rows of the table, each with its ΔT as the text table writes it (``~`` between
    times known to the second, only the digits both times have)."""
    rows = items(timeline, assessment)
    for row, (_, this, previous) in zip(rows, shown(timeline), strict=True):
        row["deltaShown"] = delta(previous.time if previous else None, this.time)
    return rows


def _extent(marks: list[dict[str, Any]]) -> dict[str, int] | None:
    """Where the shown rows are on the axis: the chart opens on them, however short the
    incident (a folded axis may be far wider)."""
    if not marks:
        return None
    return {"x0": min(m["x0"] for m in marks), "x1": max(m["x1"] for m in marks)}


def _axis(timeline: Timeline, all_spans: list[Span]) -> tuple[int, Axis]:
    intervals = [(epoch_us(r.time.at), epoch_us(r.time.end)) for r in timeline.rows if r.time]
    # a span's ends count, not its inside: an epoch lasting through an idle hour still folds
    intervals += [(epoch_us(at), epoch_us(at)) for s in all_spans for at in (s.start, s.end)]
    origin = min((a for a, _ in intervals), default=0)
    return origin, build_axis([(a - origin, b - origin) for a, b in intervals])


class _placer:
    """Maps a datetime to the folded x coordinate of the axis."""

    def __init__(self, origin: int, axis: Axis) -> None:
        self.origin, self.axis = origin, axis

    def __call__(self, at: datetime, plus_us: int = 0) -> int:
        return self.axis.x(epoch_us(at) - self.origin + plus_us)


def _span(span: Span, at: _placer, by_row: dict[int, list[Verdict]]) -> dict[str, Any]:
    return {
        "lane": span.lane,
        "kind": span.kind,
        "name": span.name,
        "x0": at(span.start),
        "x1": at(span.end),
        "xu": at(span.start, span.uncertainty_us),
        "row": None if span.row is None else span.row + 1,
        "open": span.open_end,
        "status": row_status(by_row.get(span.row, [])) if span.row is not None else None,
    }


def _marks(
    timeline: Timeline, at: _placer, by_row: dict[int, list[Verdict]]
) -> list[dict[str, Any]]:
    return [
        {
            "lane": lane_key(row),
            "row": i + 1,
            "x0": at(row.time.at),
            "x1": at(row.time.at, row.time.resolution_us),
            "coarse": row.time.resolution_us >= 1_000_000,
            "category": row.category,
            "status": row_status(by_row.get(i, [])),
            "rules": sorted({v.rule for v in by_row.get(i, []) if v.status != EXPLAINED}),
        }
        for i, row in ((i, timeline.rows[i]) for i in timeline.shown)
        if row.time is not None
    ]


def _rules(assessment: Assessment | None) -> dict[str, Any]:
    used = {v.rule for v in assessment.verdicts} if assessment else set()
    return {
        r.id: {"severity": r.severity, "sentence": r.sentence, "positions": list(r.positions)}
        for r in RULES
        if r.id in used
    }


def _findings(assessment: Assessment | None) -> list[dict[str, Any]]:
    if assessment is None:
        return []
    ordered = sorted(
        (v for v in assessment.verdicts if v.status != EXPLAINED),
        key=lambda v: STATUS_ORDER.index(v.status),
    )
    return [verdict_data(v) for v in ordered]


def render_html_timeline(timeline: Timeline, assessment: Assessment | None) -> str:
    """The self-contained page for one VM."""
    shaped = shape_html_timeline(timeline, assessment)
    title = f"kvtrace timeline {shaped['title']}"
    body = page.timeline_section(shaped, "t0", heading_level=1)
    return page.document(title, body, [("t0", shaped)])


def timeline_html(report: AssessedTimeline) -> str:
    return render_html_timeline(*report)
