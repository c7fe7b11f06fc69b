"""Timeline rows and their one ordering.

Every row keeps its time as an interval ``[at, at + resolution)``: a log line knows its
microsecond, a ``phaseTransitionTimestamp`` only its second. Rows are sorted by ``(at,
resolution, source rank, source, line, text)`` — a total order, so any input order gives the same
timeline — and a row whose interval overlaps its neighbour's is marked ``order_uncertain``
instead of pretending to know which came first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from parsers.records import Timestamp

# Sources of the same instant: the controller's own log line first, then what objects recorded.
SOURCE_RANK = {
    "log": 0,
    "revision": 1,
    "object": 2,
    "phase": 3,
    "migration": 4,
    "pod": 5,
    "event": 6,
}


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a row comes from: a log file and line, or an object and field path."""

    kind: str  # "log" | "object"
    ref: str  # file path, or "Kind/ns/name"
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.ref}:{self.line}"
        return f"{self.ref} {self.field}" if self.field else self.ref


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One thing that happened to the VM, pointing at its evidence."""

    time: Timestamp | None
    origin: str  # a key of SOURCE_RANK
    source: str  # replica pod, or object kind/name
    category: str  # decision | api | failure | requeue | backoff | leader | phase | event | ...
    what: str
    evidence: Provenance
    incarnation: str | None = None  # full VMI uid
    pos: str | None = None
    level: str | None = None
    reason: str | None = None
    message_id: str | None = None
    args: tuple[tuple[str, str], ...] = ()
    order_uncertain: bool = False
    subject: str | None = None  # uid of the object a log line is logged with (the VM, for VM lines)
    subject_name: str | None = None  # and its name (the node, for the node controller's lines)

    def with_incarnation(self, uid: str | None) -> TimelineRow:
        """This row given to incarnation ``uid``: ``dataclasses.replace`` without its cost (it
        runs for nearly every row of every VM). Every field by position, in declaration order."""
        return TimelineRow(
            self.time, self.origin, self.source, self.category, self.what, self.evidence, uid,
            self.pos, self.level, self.reason, self.message_id, self.args, self.order_uncertain,
            self.subject, self.subject_name,
        )  # fmt: skip

    def arg(self, key: str) -> str | None:
        for name, value in self.args:
            if name == key:
                return value
        return None


def sort_key(row: TimelineRow) -> tuple[object, ...]:
    at = row.time.at if row.time else datetime.max.replace(tzinfo=None)
    stamp = at.replace(tzinfo=None) if at.tzinfo else at
    resolution = row.time.resolution_us if row.time else 0
    return (
        stamp,
        resolution,
        SOURCE_RANK.get(row.origin, 9),
        row.source,
        row.evidence.ref,
        _list_index(row),
        row.evidence.line or 0,
        row.what,
    )


def _list_index(row: TimelineRow) -> int:
    """A phase row's place in its object's ``phaseTransitionTimestamps``: phases stamped in one
    second are in the order they were entered, not in the order of their names."""
    index = row.arg("index")
    return int(index) if index and index.isdigit() else 0


def order(rows: list[TimelineRow]) -> list[TimelineRow]:
    """Sort into the one deterministic order and flag rows whose order is not known."""
    ordered = sorted(rows, key=sort_key)
    return [_flag_uncertain(ordered, i) for i in range(len(ordered))]


def _overlaps(a: TimelineRow, b: TimelineRow) -> bool:
    """Intervals intersect and the two rows do not share one instant of one clock."""
    if not a.time or not b.time or a.time.at == b.time.at:
        return False
    return a.time.at < b.time.end and b.time.at < a.time.end


def _flag_uncertain(rows: list[TimelineRow], i: int) -> TimelineRow:
    """A coarse (1 s) row whose interval holds another row's time: their order is unknown."""
    row = rows[i]
    if row.time is None or row.time.resolution_us <= 1:
        return row
    later = (r for r in rows[i + 1 :] if r.time and r.time.at < row.time.end)
    earlier = (r for r in reversed(rows[:i]) if r.time and r.time.end > row.time.at)
    if any(_overlaps(row, other) for other in (*later, *earlier)):
        return replace(row, order_uncertain=True)
    return row


def within(row: TimelineRow, since: datetime | None, until: datetime | None) -> bool:
    """Whether a row's interval touches the window; rows without time are kept."""
    if row.time is None:
        return True
    if since and row.time.end <= since:
        return False
    return not (until and row.time.at > until)
