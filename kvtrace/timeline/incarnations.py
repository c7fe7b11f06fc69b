"""Which VMI incarnation each row of a VM's timeline is about.

Every successful create (``Started VM by creating the new virtual machine instance``, vm.go:1341
at v1.9.0) begins an incarnation: the VMI has the VM's name, so a create can only succeed once
the previous VMI is gone. The log line carries no VMI uid; objects and Events do, each with a
time: the VMI's ``creationTimestamp`` (1 s), the first Event about the VMI (its name encodes the
creation UnixNano: ``<involved name>.<hex>``), the launcher pod's creation, and the VM's
``SuccessfulDelete`` Event, which names the uid of the VMI it deleted (vm.go:1684). Each uid is
matched to the create it follows; a create no object names is an incarnation the evidence has no
object for (``unseen-N``), and the VMI that existed before the first create line is the one the
earliest rows are about.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from datetime import datetime, timedelta, timezone

from kvtrace.evidence import KubeObject
from kvtrace.timeline.object_rows import DELETED_VMI
from kvtrace.timeline.rows import TimelineRow
from kvtrace.timeline.vmscope import VMScope
from parsers.timestamps import parse_time

CONTEXT_CATEGORIES = {"leader"}
# Start decisions belong to the VMI they are about to create.
STARTING = {"vm.start", "vm.start-request", "vm.start-receiver"}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
CREATE_WINDOW = timedelta(seconds=2)  # creationTimestamp (1 s, truncated) → the 1341 line
START_WINDOW = timedelta(seconds=60)  # a start decision → its create (slow webhooks, retries)


def event_instant(event: KubeObject) -> datetime | None:
    """The Event's creation to the nanosecond, from its name, else its first timestamp."""
    suffix = event.name.rsplit(".", 1)[-1]
    if len(suffix) >= 15 and all(c in "0123456789abcdef" for c in suffix):
        return EPOCH + timedelta(microseconds=int(suffix, 16) // 1000)
    when = parse_time(str(event.body.get("firstTimestamp") or event.body.get("eventTime") or ""))
    return when.at if when else None


def _creation_anchors(scope: VMScope) -> dict[str, datetime]:
    """Each VMI uid's earliest sign of life."""
    anchors: dict[str, datetime] = {}

    def keep(uid: str | None, at: datetime | None) -> None:
        if uid and at and (uid not in anchors or at < anchors[uid]):
            anchors[uid] = at

    for vmi in scope.vmis:
        created = parse_time(str((vmi.body.get("metadata") or {}).get("creationTimestamp") or ""))
        keep(vmi.uid, created.at if created else None)
    for event in scope.events:
        involved = event.body.get("involvedObject") or {}
        if involved.get("kind") == "VirtualMachineInstance":
            keep(involved.get("uid"), event_instant(event))
    return anchors


def _delete_anchors(scope: VMScope) -> dict[str, datetime]:
    """VMI uid → when the VM controller deleted it (its SuccessfulDelete Event)."""
    anchors: dict[str, datetime] = {}
    for event in scope.events:
        involved = event.body.get("involvedObject") or {}
        found = DELETED_VMI.search(str(event.body.get("message", "")))
        at = event_instant(event)
        if involved.get("kind") == "VirtualMachine" and found and at:
            anchors.setdefault(found.group("uid"), at)
    return anchors


def segments(rows: list[TimelineRow], scope: VMScope) -> list[tuple[datetime | None, str]]:
    """(start, uid) of every incarnation, in order; the first may start before the evidence."""
    creates = sorted(r.time.at for r in rows if r.message_id == "vm.created" and r.time)
    created = _creation_anchors(scope)
    uid_at: dict[int, str] = {}
    before: list[tuple[datetime, str]] = []
    for uid, anchor in sorted(created.items(), key=lambda kv: kv[1]):
        index = _create_for(creates, anchor, uid_at)
        if index is None:
            before.append((anchor, uid))
        else:
            uid_at[index] = uid
    for uid, deleted in sorted(_delete_anchors(scope).items(), key=lambda kv: kv[1]):
        if uid in created:
            continue
        index = _current_at(creates, deleted)
        if index is None:
            before.append((deleted, uid))
        elif index not in uid_at:
            uid_at[index] = uid
    found: list[tuple[datetime | None, str]] = []
    prior = [uid for at, uid in sorted(before) if not creates or at < creates[0]]
    if prior:
        found.append((None, prior[-1]))
    unseen = 0
    for index, at in enumerate(creates):
        if index not in uid_at:
            unseen += 1
        found.append((at, uid_at.get(index, f"unseen-{unseen}")))
    return found


def _create_for(creates: list[datetime], anchor: datetime, taken: dict[int, str]) -> int | None:
    """The first free create line within the window after the uid's creation second."""
    index = bisect_left(creates, anchor - timedelta(seconds=1))
    while index < len(creates) and creates[index] < anchor + CREATE_WINDOW:
        if index not in taken:
            return index
        index += 1
    return None


def _current_at(creates: list[datetime], at: datetime) -> int | None:
    index = bisect_right(creates, at) - 1
    return index if index >= 0 else None


def assign(rows: list[TimelineRow], scope: VMScope) -> list[TimelineRow]:
    """Give VM-level rows the incarnation that was current at their time."""
    found = _Segments(segments(rows, scope))
    return [_assign(row, found) for row in rows]


class _Segments:
    """The incarnations' starts, searchable by bisection: a VM crash-looping for days has
    thousands, and every row asks which one was current."""

    def __init__(self, found: list[tuple[datetime | None, str]]) -> None:
        self.prior = next((uid for start, uid in found if start is None), None)
        known = [(start, uid) for start, uid in found if start is not None]
        self.starts = [start for start, _ in known]
        self.uids = [uid for _, uid in known]

    def upcoming(self, at: datetime) -> str | None:
        """The first incarnation starting within START_WINDOW from ``at``."""
        index = bisect_left(self.starts, at)
        if index < len(self.starts) and self.starts[index] - at <= START_WINDOW:
            return self.uids[index]
        return None

    def current(self, at: datetime, before: datetime | None) -> str | None:
        """The last incarnation started by ``at`` (or before ``before``, if given)."""
        count = bisect_right(self.starts, at)
        if before is not None:
            count = max(count, bisect_left(self.starts, before))
        return self.uids[count - 1] if count else self.prior


def _assign(row: TimelineRow, found: _Segments) -> TimelineRow:
    if row.incarnation or row.time is None or row.category in CONTEXT_CATEGORIES:
        return row
    if row.origin in ("revision",) or row.evidence.ref.startswith("VirtualMachine/"):
        return row
    at = row.time.at
    if row.message_id in STARTING:
        upcoming = found.upcoming(at)
        if upcoming:
            return row.with_incarnation(upcoming)
    # a 1 s object time belongs to a VMI created within that second
    current = found.current(at, row.time.end if row.time.resolution_us > 1 else None)
    return row.with_incarnation(current) if current else row
