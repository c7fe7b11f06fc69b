"""``-o perfetto``: Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing.

One process per VM (named ``ns/name``), one thread per lane of the HTML report (each
virt-controller replica, each VMI incarnation, each launcher pod, Events per kind, the VM and
its revisions). Every timed row is one event on its thread: an instant (``i``, thread scope)
carrying its fields in ``args``, or — when an arrow starts or ends at it — a short complete
slice (``X``, as long as its time resolution), because flow events bind to slices. Leader
epochs and launcher pod lives are ``B``/``E`` slices; VMI phases are async slices (``b``/``e``)
keyed by the VMI uid, since they overlap the controller's work. Arrows (``s`` → ``f`` with
``bp: "e"``) run from a VMI create or delete to its observed effect. Timestamps are µs since
the Unix epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from kvtrace import __version__
from kvtrace.check.report import CheckReport
from kvtrace.model.engine import AssessedTimeline, Assessment
from kvtrace.model.verdicts import MARKS
from kvtrace.render.check_shape import with_timelines
from kvtrace.render.html_lanes import (
    Lane,
    Span,
    action_effects,
    epoch_us,
    lane_key,
    lanes,
    spans,
)
from kvtrace.timeline.build import Timeline
from kvtrace.timeline.rows import TimelineRow

# Order of events sharing one timestamp: close before open, so slices nest.
PHASE_RANK = {"M": 0, "E": 1, "e": 2, "B": 3, "b": 4, "X": 5, "i": 6, "s": 7, "f": 8}
NAME_WIDTH = 96
Event = dict[str, Any]


@dataclass(frozen=True)
class _Context:
    pid: int
    tids: dict[str, int]
    timeline: Timeline
    assessment: Assessment | None


def render_perfetto(timelines: list[tuple[Timeline, Assessment | None]]) -> str:
    """The JSON text: one event per line, so diffs of two exports stay readable."""
    document = trace_document(timelines)
    events = ",\n".join(orjson.dumps(e).decode() for e in document["traceEvents"])
    other = orjson.dumps(document["otherData"]).decode()
    return f'{{"displayTimeUnit":"ms","otherData":{other},"traceEvents":[\n{events}\n]}}\n'


def trace_document(timelines: list[tuple[Timeline, Assessment | None]]) -> dict[str, Any]:
    events: list[Event] = []
    for pid, (timeline, assessment) in enumerate(timelines, start=1):
        events += vm_events(timeline, assessment, pid)
    return {
        "displayTimeUnit": "ms",
        "otherData": {"generator": f"kvtrace {__version__}", "timeUnit": "us since epoch"},
        "traceEvents": sort_events(events),
    }


def sort_events(events: list[Event]) -> list[Event]:
    """Metadata first, then by time; at one instant slices close before others open, except
    a zero-length slice, whose end stays right after its own begin (spans are emitted as
    adjacent begin/end pairs)."""
    keys: list[tuple[bool, int, int, int, int]] = []
    for n, event in enumerate(events):
        key = (event["ph"] != "M", event.get("ts", 0), PHASE_RANK[event["ph"]], n, 0)
        if n and _zero_length_end(events[n - 1], event):
            key = (*keys[-1][:4], 1)
        keys.append(key)
    return [events[n] for n in sorted(range(len(events)), key=keys.__getitem__)]


def _zero_length_end(before: Event, event: Event) -> bool:
    pair = {"B": "E", "b": "e"}.get(before["ph"])
    return bool(
        pair == event["ph"] and before["ts"] == event["ts"] and before["tid"] == event["tid"]
    )


def vm_events(timeline: Timeline, assessment: Assessment | None, pid: int) -> list[Event]:
    all_lanes = lanes(timeline)
    ctx = _Context(
        pid, {ln.key: n for n, ln in enumerate(all_lanes, start=1)}, timeline, assessment
    )
    all_spans = spans(timeline)
    pairs = action_effects(timeline)
    anchors = _anchors(ctx, {i for pair in pairs for i in pair}, all_spans)
    return [
        *_metadata(ctx, all_lanes),
        *(e for s in all_spans for e in _span_events(ctx, s)),
        *(anchors.get(i) or _instant(ctx, i) for i in timeline.shown if timeline.rows[i].time),
        *(e for n, pair in enumerate(pairs) for e in _flow(ctx, pair, anchors, n)),
    ]


def _metadata(ctx: _Context, all_lanes: list[Lane]) -> list[Event]:
    name = f"{ctx.timeline.namespace}/{ctx.timeline.name}"
    out: list[Event] = [
        _meta(ctx.pid, 0, "process_name", {"name": name}),
        _meta(ctx.pid, 0, "process_sort_index", {"sort_index": ctx.pid}),
    ]
    for lane in all_lanes:
        tid = ctx.tids[lane.key]
        out.append(_meta(ctx.pid, tid, "thread_name", {"name": f"{lane.group} · {lane.label}"}))
        out.append(_meta(ctx.pid, tid, "thread_sort_index", {"sort_index": tid}))
    return out


def _meta(pid: int, tid: int, name: str, args: dict[str, Any]) -> Event:
    return {"ph": "M", "pid": pid, "tid": tid, "name": name, "args": args}


def _row_args(ctx: _Context, index: int) -> dict[str, Any]:
    row = ctx.timeline.rows[index]
    verdicts = ctx.assessment.by_row.get(index, []) if ctx.assessment else []
    fields: dict[str, Any] = {
        "row": index + 1,
        "what": row.what,
        "source": row.source,
        "category": row.category,
        "evidence": str(row.evidence),
        "resolution_us": row.time.resolution_us if row.time else None,
        "pos": row.pos,
        "level": row.level,
        "reason": row.reason,
        "messageID": row.message_id,
        "vmiUID": row.incarnation,
        "orderUncertain": row.order_uncertain or None,
        "verdicts": [f"{MARKS[v.status]} {v.rule} ({v.severity}): {v.why}" for v in verdicts]
        or None,
    }
    fields.update({f"arg.{k}": v for k, v in row.args})
    return {k: v for k, v in fields.items() if v is not None}


def _name(row: TimelineRow) -> str:
    return row.what if len(row.what) <= NAME_WIDTH else row.what[: NAME_WIDTH - 1] + "…"


def _base(ctx: _Context, index: int, ph: str) -> Event:
    row = ctx.timeline.rows[index]
    assert row.time is not None
    return {
        "ph": ph,
        "pid": ctx.pid,
        "tid": ctx.tids[lane_key(row)],
        "ts": epoch_us(row.time.at),
        "name": _name(row),
        "cat": row.category,
        "args": _row_args(ctx, index),
    }


def _instant(ctx: _Context, index: int) -> Event:
    return {**_base(ctx, index, "i"), "s": "t"}


def _anchors(ctx: _Context, ends: set[int], all_spans: list[Span]) -> dict[int, Event]:
    """Flow endpoints as ``X`` slices, clipped so they never cross another slice's edge."""
    out: dict[int, Event] = {}
    for index in sorted(ends):
        event = _base(ctx, index, "X")
        row = ctx.timeline.rows[index]
        assert row.time is not None
        limit = _next_edge(ctx, event["tid"], event["ts"], all_spans, ends - {index})
        event["dur"] = min(row.time.resolution_us, limit - event["ts"])
        out[index] = event
    return out


def _next_edge(ctx: _Context, tid: int, ts: int, all_spans: list[Span], others: set[int]) -> int:
    """The first B/E edge or other anchor start after ``ts`` on thread ``tid``."""
    edges = [
        epoch_us(at)
        for s in all_spans
        if s.kind != "phase" and ctx.tids[s.lane] == tid
        for at in (s.start, s.end)
    ]
    for index in others:
        row = ctx.timeline.rows[index]
        if row.time and ctx.tids[lane_key(row)] == tid:
            edges.append(epoch_us(row.time.at))
    later = [e for e in edges if e > ts]
    return min(later) if later else ts + 1_000_000_000


def _span_events(ctx: _Context, span: Span) -> list[Event]:
    start, end = epoch_us(span.start), epoch_us(span.end)
    args: dict[str, Any] = {"open": span.open_end, "startUncertainty_us": span.uncertainty_us}
    if span.row is not None:
        args["row"] = span.row + 1
        args["evidence"] = str(ctx.timeline.rows[span.row].evidence)
    common = {"pid": ctx.pid, "tid": ctx.tids[span.lane], "name": span.name, "cat": span.kind}
    if span.kind == "phase":
        uid = span.lane.removeprefix("vmi:")
        common = {**common, "cat": "vmi.phase", "id": uid}
        return [{**common, "ph": "b", "ts": start, "args": args}, {**common, "ph": "e", "ts": end}]
    return [{**common, "ph": "B", "ts": start, "args": args}, {**common, "ph": "E", "ts": end}]


def _flow(ctx: _Context, pair: tuple[int, int], anchors: dict[int, Event], n: int) -> list[Event]:
    source, target = anchors[pair[0]], anchors[pair[1]]
    action = ctx.timeline.rows[pair[0]]
    name = "create → VMI" if action.message_id == "vm.created" else "delete → VMI gone"
    # f lies inside its slice, and not before the action where the 1 s slice allows it
    at = min(max(target["ts"], source["ts"]), target["ts"] + target["dur"])
    common = {"pid": ctx.pid, "name": name, "cat": "flow", "id": ctx.pid * 1_000_000 + n + 1}
    return [
        {**common, "ph": "s", "tid": source["tid"], "ts": source["ts"]},
        {**common, "ph": "f", "bp": "e", "tid": target["tid"], "ts": at},
    ]


def timeline_perfetto(report: AssessedTimeline) -> str:
    return render_perfetto([(report.timeline, report.assessment)])


def check_perfetto(report: CheckReport) -> str:
    return render_perfetto([(t, vm.assessment) for vm, t in with_timelines(report)])
