"""Shape a Timeline into plain data: the one place that decides what each output contains.

Table, JSON, YAML and CSV all come from these shapes, so they always hold the same rows.
"""

from __future__ import annotations

from typing import Any

from kvtrace import __version__
from kvtrace.model.engine import AssessedTimeline, Assessment
from kvtrace.render.verdict_shape import mark, model_lines, model_status, verdict_data
from kvtrace.render.words import count, delta
from kvtrace.timefmt import delta_seconds, display, iso
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.endings import Ending, endings
from kvtrace.timeline.rows import TimelineRow

API_VERSION = "kvtrace.io/v1alpha1"
TABLE_HEADERS = ["#", "TIME (UTC)", "ΔT", "SOURCE", "VMI", "KIND", "WHAT", "POS", "VERDICT"]
WIDE_HEADERS = [*TABLE_HEADERS, "LEVEL", "REASON", "EVIDENCE"]
CSV_FIELDS = [
    "row",
    "time",
    "resolution",
    "delta",
    "source",
    "incarnation",
    "vmiUID",
    "category",
    "what",
    "pos",
    "level",
    "reason",
    "evidence",
    "verdict",
    "orderUncertain",
]


def short_uid(uid: str | None) -> str:
    return uid[:8] if uid else ""


def _resolution(row: TimelineRow) -> str | None:
    if row.time is None:
        return None
    us = row.time.resolution_us
    return "1s" if us >= 1_000_000 else ("1ms" if us >= 1_000 else "1us")


def item(
    row: TimelineRow, previous: TimelineRow | None, assessment: Assessment | None, index: int
) -> dict[str, Any]:
    """One row as kubectl-style data (camelCase keys, RFC 3339 times)."""
    seconds = delta_seconds(previous.time, row.time) if previous else None
    return {
        "row": index + 1,
        "time": iso(row.time),
        "resolution": _resolution(row),
        "delta": None if seconds is None else round(seconds, 6),
        "source": row.source,
        "incarnation": short_uid(row.incarnation) or None,
        "vmiUID": row.incarnation,
        "category": row.category,
        "what": row.what,
        "messageID": row.message_id,
        "pos": row.pos,
        "level": row.level,
        "reason": row.reason,
        "evidence": str(row.evidence),
        "orderUncertain": row.order_uncertain,
        "verdict": mark(assessment.row_verdict(index)) if assessment else None,
        "verdicts": [verdict_data(v) for v in assessment.by_row.get(index, [])]
        if assessment
        else [],
    }


def shown(timeline: Timeline) -> list[tuple[int, TimelineRow, TimelineRow | None]]:
    """The rows inside the window: index, row, and the previous timed row shown before it."""
    out: list[tuple[int, TimelineRow, TimelineRow | None]] = []
    last: TimelineRow | None = None
    for i in timeline.shown:
        row = timeline.rows[i]
        out.append((i, row, last))
        if row.time is not None:
            last = row
    return out


def items(timeline: Timeline, assessment: Assessment | None = None) -> list[dict[str, Any]]:
    return [item(r, previous, assessment, i) for i, r, previous in shown(timeline)]


def document(timeline: Timeline, assessment: Assessment | None = None) -> dict[str, Any]:
    """The ``kind: Timeline`` document for ``-o json|yaml``."""
    ev = timeline.evidence
    return {
        "apiVersion": API_VERSION,
        "kind": "Timeline",
        "metadata": {
            "name": timeline.name,
            "namespace": timeline.namespace,
            "uid": timeline.scope.vm_uid,
            "generator": f"kvtrace {__version__}",
        },
        "spec": {
            "source": {"layout": ev.layout, "coverage": ev.coverage, "origin": ev.origin},
            "capturedAt": ev.captured_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            if ev.captured_at
            else None,
            "since": timeline.since.isoformat() if timeline.since else None,
            "until": timeline.until.isoformat() if timeline.until else None,
        },
        "items": items(timeline, assessment),
        "status": status(timeline, assessment),
    }


def status(timeline: Timeline, assessment: Assessment | None = None) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "rows": len(timeline.rows),
        "incarnations": timeline.incarnations,
        "endings": [_ending_data(e) for e in endings(timeline)],
        "sources": [
            {
                "source": s.source_id,
                "pod": s.pod,
                "container": s.container,
                "instance": s.instance,
                "lines": s.lines,
                "candidates": s.candidates,
                "rows": s.rows,
                "outcomes": dict(sorted(s.tally.items())),
                "unparsed": s.tally.problems(),
            }
            for s in timeline.sources
        ],
        "skippedFiles": [{"path": p, "reason": r} for p, r in timeline.evidence.skipped],
        "notes": timeline.notes,
    }
    if assessment is not None:
        shaped["model"] = model_status(assessment)
    return shaped


def table_rows(
    timeline: Timeline, wide: bool, assessment: Assessment | None = None
) -> list[list[str]]:
    out = []
    for index, row, prev in shown(timeline):
        cells = [
            str(index + 1),
            display(row.time) + ("~" if row.order_uncertain else ""),
            delta(prev.time if prev else None, row.time),
            row.source,
            short_uid(row.incarnation),
            row.category,
            row.what,
            row.pos or "",
            mark(assessment.row_verdict(index)) if assessment else "",
        ]
        if wide:
            cells += [row.level or "", row.reason or "", str(row.evidence)]
        out.append(cells)
    return out


def csv_rows(timeline: Timeline, assessment: Assessment | None = None) -> list[dict[str, Any]]:
    return [{k: v for k, v in i.items() if k in CSV_FIELDS} for i in items(timeline, assessment)]


def summary_lines(timeline: Timeline, assessment: Assessment | None = None) -> list[str]:
    """What goes under the table: counts, verdicts, unparsed lines, missing evidence."""
    lines = [_headline(timeline), *ending_lines(timeline)]
    if assessment is not None:
        lines += model_lines(assessment)
    for source in timeline.sources:
        problems = source.tally.problems()
        if problems:
            listed = ", ".join(f"{n} {reason}" for reason, n in problems.items())
            lines.append(f"unparsed in {source.source_id}: {listed}")
    for path, reason in timeline.evidence.skipped:
        lines.append(f"skipped file {path}: {reason}")
    lines += [f"note: {n}" for n in timeline.notes]
    if any(r.order_uncertain for r in timeline.rows):
        lines.append("~ marks a 1-second object time whose order against its neighbours is unknown")
    return lines


def ending_lines(timeline: Timeline) -> list[str]:
    """What ended each incarnation, the answer first (a long history: the last six)."""
    found = endings(timeline)
    lines = [
        f"ended {short_uid(e.incarnation)}: {e.cause} — {e.detail}"
        + (f" [row {e.row + 1}]" if e.row is not None else "")
        for e in found[-6:]
    ]
    if len(found) > 6:
        earlier = count(len(found) - 6, "earlier incarnation")
        lines.insert(0, f"ended: {earlier} in -o json (endings)")
    return lines


def _ending_data(ending: Ending) -> dict[str, Any]:
    return {
        "incarnation": ending.incarnation,
        "cause": ending.cause,
        "detail": ending.detail,
        "row": None if ending.row is None else ending.row + 1,
    }


def _headline(timeline: Timeline) -> str:
    scanned = sum(s.lines for s in timeline.sources)
    uids = [short_uid(u) for u in timeline.incarnations]
    incarnations = ", ".join(uids) or "none"
    if len(uids) > 6:  # a long history: the first ones, the last one, and the count
        incarnations = f"{len(uids)} ({', '.join(uids[:3])} … {uids[-1]})"
    shown = len(timeline.shown)
    rows = (
        count(shown, "row")
        if shown == len(timeline.rows)
        else f"{shown} of {count(len(timeline.rows), 'row')} (the model judged all)"
    )
    return (
        f"{rows} for {timeline.namespace}/{timeline.name} · VMI incarnations: "
        f"{incarnations} · {count(len(timeline.sources), 'log source')}, "
        f"{count(scanned, 'line')} scanned · "
        f"evidence: {timeline.evidence.layout} ({timeline.evidence.coverage} coverage)"
    )


def timeline_document(report: AssessedTimeline) -> dict[str, Any]:
    return document(*report)


def timeline_csv(report: AssessedTimeline) -> tuple[list[dict[str, Any]], list[str]]:
    return csv_rows(*report), CSV_FIELDS
