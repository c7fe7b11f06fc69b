"""VM reconciles rebuilt from the lines one replica printed about one VM, by what one pass of
the VM controller can print (vm.go at v1.9.0), never by time windows.

One key is reconciled by one worker at a time (the work queue never hands a key to two
workers), so one replica's lines about one VM come from consecutive reconciles. Within one,
the code prints at default verbosity, in this order: at most one run-strategy decision
(``syncRunStrategy``, vm.go:970-1178), possibly announced by a restart or stop request line
(985 → 1005, 1045 → 1052); after a stop decision the delete's outcome (1685, or a delete
failure); after a start decision the revision or create outcome (1286, 1336 or 1341); then
``Reconciling the VirtualMachine failed.`` (448) when ``sync`` returned an error, ``Updating
the VirtualMachine status failed.`` (453) when the status write did, and ``re-enqueuing`` (348)
after any failure (vm.go:336-458). The deletion path of a VM being deleted prints 1685 or its
failure (3245) with no decision (vm.go:3236-3249). At verbosity 4, ``Started processing vm``
(372) opens every reconcile and ``processed VirtualMachine`` (351) closes a successful one.

A line that cannot follow the one before it in one pass starts the next reconcile. A line that
must be preceded by another (a create with no start decision) starts a reconcile whose first
line is missing from the evidence: lost, outside the excerpt, or the deletion path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvtrace.timeline.rows import TimelineRow

VM_FILE = "vm.go"
STOP_DECISIONS = frozenset({"vm.stop", "vm.stop-manual", "vm.stop-halted"})
START_DECISIONS = frozenset({"vm.start", "vm.start-request", "vm.start-receiver"})
REQUESTS = frozenset({"vm.restart-request", "vm.stop-request"})
DECISIONS = STOP_DECISIONS | START_DECISIONS | REQUESTS | {"vm.backoff", "vm.decentralized-halt"}
TAIL = frozenset({"vm.reconcile-failed", "vm.status-failed", "vm.requeue", "vm.processed"})
CLOSING = frozenset({"vm.requeue", "vm.processed"})
OPEN_ANYTHING = DECISIONS | TAIL | {"vm.deleted", "vm.delete-failed"}

# What may follow each line within one pass.
FOLLOWS: dict[str, frozenset[str]] = {
    "vm.processing": OPEN_ANYTHING,
    "vm.restart-request": frozenset({"vm.stop"}) | TAIL,
    "vm.stop-request": frozenset({"vm.stop"}) | TAIL,
    **{stop: frozenset({"vm.deleted", "vm.delete-failed"}) | TAIL for stop in STOP_DECISIONS},
    "vm.deleted": TAIL,
    "vm.delete-failed": TAIL,
    "vm.backoff": TAIL,
    "vm.decentralized-halt": TAIL,
    **{
        start: frozenset(
            {
                "vm.revision-failed",
                "vm.create-failed",
                "vm.created",
                "vm.manual-recovery",
                "vm.receiver-setup",
            }
        )
        | TAIL
        for start in START_DECISIONS
    },
    "vm.receiver-setup": frozenset({"vm.create-failed", "vm.created"}) | TAIL,
    "vm.revision-failed": TAIL,
    "vm.create-failed": TAIL,
    "vm.created": TAIL,
    "vm.manual-recovery": TAIL,
    "vm.reconcile-failed": frozenset({"vm.status-failed", "vm.requeue"}),
    "vm.status-failed": frozenset({"vm.requeue"}),
    "vm.requeue": frozenset(),
    "vm.processed": frozenset(),
}
# Lines that a reconcile can begin with; any other grammar line begins one only when the line
# that announced it is missing.
OPENERS = OPEN_ANYTHING | {"vm.processing"}
NEEDS_BEFORE = frozenset(
    {
        "vm.created",
        "vm.create-failed",
        "vm.revision-failed",
        "vm.receiver-setup",
        "vm.manual-recovery",
    }
)


@dataclass
class Reconcile:
    """Consecutive lines of one replica for one VM that one pass of the controller printed."""

    replica: str
    rows: list[int] = field(default_factory=list)
    subject: str | None = None  # the VM uid the lines were logged with
    incomplete: bool = False  # its opening line is not in the evidence


def is_vm_line(row: TimelineRow) -> bool:
    """A line of the VM controller (pos in vm.go) that the reconcile grammar knows."""
    if row.origin != "log" or row.message_id not in FOLLOWS:
        return False
    return not row.pos or row.pos.split(":", 1)[0] == VM_FILE


def rebuild(rows: list[TimelineRow]) -> list[Reconcile]:
    """Every reconcile, per replica (container instance) and VM uid, in timeline order."""
    reconciles: list[Reconcile] = []
    open_by_source: dict[str, tuple[Reconcile, str]] = {}
    for index, row in enumerate(rows):
        if not is_vm_line(row):
            continue
        message = row.message_id or ""
        current = open_by_source.get(row.source)
        if current is not None and _continues(current, row, message):
            reconcile = current[0]
        else:
            reconcile = Reconcile(row.source, subject=row.subject)
            reconcile.incomplete = message in NEEDS_BEFORE
            reconciles.append(reconcile)
        reconcile.rows.append(index)
        if reconcile.subject is None:
            reconcile.subject = row.subject
        if message in CLOSING:
            open_by_source.pop(row.source, None)
        else:
            open_by_source[row.source] = (reconcile, message)
    return reconciles


def _continues(current: tuple[Reconcile, str], row: TimelineRow, message: str) -> bool:
    reconcile, last = current
    if row.subject and reconcile.subject and row.subject != reconcile.subject:
        return False  # another VM of the same name
    if message == "vm.processing":
        return False
    return message in FOLLOWS.get(last, frozenset())
