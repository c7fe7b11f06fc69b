"""The leader lines of one Evidence: every virt-controller replica's leader-election, start-up and
controller-action lines, as timeline rows."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvtrace.evidence import Evidence, LogStream
from kvtrace.model.leader_epochs import (
    LOCK_NAME,
    Action,
)
from kvtrace.timeline import catalog
from kvtrace.timeline.log_rows import LineDedup, make_row, stream_order
from kvtrace.timeline.logscan import Needles, scan_streams
from kvtrace.timeline.router import ACTION_FILES
from kvtrace.timeline.rows import TimelineRow
from parsers.logstream import LogParser
from parsers.records import LogRecord

# Every leader line, the VM/VMI controller lines (sorted-key JSON: "pos" then "timestamp"), and
# the startup lines (application.go) that date the klog ``attempting`` line after them in logs
# without a kubelet prefix: the parser anchors a klog year on the nearest earlier dated candidate.
HISTORY_NEEDLES = Needles(
    (
        b"leaderelection",
        b'"pos":"application.go:',
        b"STARTING controllers",
        b"attempting to acquire",
        b'"pos":"vm.go:',
        b'"pos":"vmi.go:',
        b'"pos":"lifecycle.go:',
    )
)


@dataclass
class LeaderLines:
    """Every leader line and every VM/VMI controller action line of the controller logs."""

    leader_rows: list[TimelineRow] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def controller_streams(evidence: Evidence, namespace: str) -> list[LogStream]:
    """Logs of virt-controller pods (and logs whose pod is unknown: files given with --log)."""

    def wanted(stream: LogStream) -> bool:
        info = stream.info
        if info.pod is None:
            return True
        in_ns = info.namespace in (None, namespace)
        return in_ns and (info.pod.startswith("virt-controller-") or info.container == LOCK_NAME)

    return sorted((s for s in evidence.logs if wanted(s)), key=stream_order)


def read_leader_lines(evidence: Evidence, namespace: str) -> LeaderLines:
    """Leader rows, and the action rows (``model.facts.is_action``) of the VM and VMI controllers
    (``timeline.router.ACTION_FILES``): client-go's klog errors are no controller action."""
    from kvtrace.model.facts import is_action

    found = LeaderLines()
    dedup = LineDedup()
    for scan in scan_streams(controller_streams(evidence, namespace), HISTORY_NEEDLES):
        found.sources.append(scan.stream.info.source_id)
        parser = LogParser(scan.stream.info, policy="skip", anchor=evidence.captured_at)
        records = [r for n, line in scan.hits for r in parser.feed(n, line)] + parser.close()
        for record in records:
            if record.time is None or dedup.duplicate(record, scan.stream):
                continue
            row = _row(record, scan.stream)
            if row.category == "leader":
                found.leader_rows.append(row)
            elif is_action(row) and (row.pos or "").split(":")[0] in ACTION_FILES:
                found.actions.append(Action(row, _target(record, row)))
    found.leader_rows = dedup.named(found.leader_rows)
    found.actions = [Action(dedup.named([a.row])[0], a.target) for a in found.actions]
    return found


def _row(record: LogRecord, stream: LogStream) -> TimelineRow:
    matched = catalog.match(record.msg, record.pos)
    entry, args = matched if matched else (None, {})
    return make_row(record, stream, entry, args, None)


def _target(record: LogRecord, row: TimelineRow) -> str | None:
    if record.namespace and record.name:
        return f"{record.namespace}/{record.name}"
    return row.arg("key")


# -- status ----------------------------------------------------------------------------------
