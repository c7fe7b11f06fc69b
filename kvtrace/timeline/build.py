"""Build one VM's timeline from an Evidence: object rows + log rows, attributed and ordered."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from datetime import datetime

from kvtrace.errors import NotFoundError
from kvtrace.evidence import VM, Evidence, EvidenceSummary
from kvtrace.timeline import catalog, incarnations
from kvtrace.timeline.incarnations import CONTEXT_CATEGORIES
from kvtrace.timeline.log_rows import SourceReport, log_rows
from kvtrace.timeline.migration_rows import migration_rows
from kvtrace.timeline.object_rows import object_rows
from kvtrace.timeline.rows import TimelineRow, order, within
from kvtrace.timeline.vmscope import VMScope, build_scope

_LOGGED_VM = re.compile(rb'"name":"([^"]+)","namespace":"([^"]+)","pos":"vm\.go:')
NAME_PROBE_BYTES = 64 << 20


@dataclass
class Timeline:
    """One VM's rows plus everything needed to say how complete they are."""

    namespace: str
    name: str
    scope: VMScope
    rows: list[TimelineRow]
    sources: list[SourceReport]
    evidence: EvidenceSummary  # closed: a timeline outlives the evidence it was read from
    since: datetime | None = None
    until: datetime | None = None
    notes: list[str] = field(default_factory=list)

    def last_time(self) -> datetime | None:
        """The latest time in the evidence: what durations count back from without a capture
        time (logs given with --log)."""
        times = [r.time.end for r in self.rows if r.time is not None]
        return max(times) if times else None

    @property
    def shown(self) -> list[int]:
        """Indices of the rows inside the ``--since``/``--until`` window (all rows without one)."""
        if self.since is None and self.until is None:
            return list(range(len(self.rows)))
        return [i for i, row in enumerate(self.rows) if within(row, self.since, self.until)]

    @property
    def incarnations(self) -> list[str]:
        uids = dict.fromkeys(self.scope.vmi_uids)
        for row in self.rows:
            if row.incarnation and row.origin != "pod":
                uids.setdefault(row.incarnation)
        return list(uids)


def build_timeline(
    evidence: Evidence,
    namespace: str,
    name: str,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Timeline:
    """One VM's timeline; its log lines are found by a raw-byte scan for its name."""
    scope = build_scope(evidence, namespace, name)
    logged, reports = log_rows(evidence.logs, scope, evidence.captured_at)
    if scope.vm is None and not scope.vmis and not _about_vm(logged):
        raise NotFoundError(_not_found_message(evidence, namespace, name, reports))
    return assemble(evidence, scope, logged, reports, since, until)


def assemble(
    evidence: Evidence,
    scope: VMScope,
    logged: list[TimelineRow],
    reports: list[SourceReport],
    since: datetime | None = None,
    until: datetime | None = None,
) -> Timeline:
    """Merge object rows and already-attributed log rows into an ordered Timeline."""
    rows = incarnations.assign(object_rows(scope) + migration_rows(scope) + logged, scope)
    rows = order(rows)  # --since/--until narrow what is shown, never what the model sees
    summary = evidence.summary()
    timeline = Timeline(scope.namespace, scope.name, scope, rows, reports, summary, since, until)
    timeline.notes = _notes(timeline)
    return timeline


def _about_vm(rows: list[TimelineRow]) -> bool:
    """With no VM or VMI object, a name is a VM only when VM-controller lines are about it: the
    lines other controllers print about a migration or a DataVolume of that name are not."""
    return any(catalog.names_vm(r.message_id) for r in rows)


def _notes(timeline: Timeline) -> list[str]:
    evidence = timeline.evidence
    notes = list(evidence.missing)
    if not evidence.has_logs:
        notes.append(
            "no virt-controller logs in this evidence: the timeline shows only what objects "
            "recorded (add --log FILE, or collect with `kvtrace collect`)"
        )
    elif not any(r.origin == "log" and r.category not in CONTEXT_CATEGORIES for r in timeline.rows):
        notes.append(
            f"no log line mentions {timeline.namespace}/{timeline.name}: at default verbosity "
            "virt-controller logs only decisions, API calls and failures"
        )
    if timeline.scope.vm is None and evidence.layout != "logs":
        notes.append(
            f"no VirtualMachine object {timeline.namespace}/{timeline.name} in the evidence"
        )
    return notes


def known_vms(evidence: Evidence) -> list[str]:
    names = {f"{o.namespace}/{o.name}" for o in evidence.of_kind(VM)}
    if not names:
        names = _vms_named_in_logs(evidence)
    return sorted(names)


def _vms_named_in_logs(evidence: Evidence) -> set[str]:
    """VM keys the controller logged, from the first bytes of each log (error path only)."""
    names: set[str] = set()
    for stream in evidence.logs:
        try:
            with stream.open() as handle:
                head = handle.read(NAME_PROBE_BYTES)
        except OSError:
            continue
        names |= {f"{ns.decode()}/{n.decode()}" for n, ns in _LOGGED_VM.findall(head)}
    return names


def _close_names(name: str, existing: list[str]) -> list[str]:
    """Keys whose VM name is close to ``name`` (namespaces would make every key look alike)."""
    by_name: dict[str, list[str]] = {}
    for key in existing:
        by_name.setdefault(key.split("/", 1)[-1], []).append(key)
    close = difflib.get_close_matches(name, list(by_name), n=5, cutoff=0.7)
    return [key for n in close for key in by_name[n]]


def _not_found_message(
    evidence: Evidence, namespace: str, name: str, reports: list[SourceReport]
) -> str:
    wanted = f"{namespace}/{name}"
    existing = known_vms(evidence)
    where = evidence.origin or evidence.layout
    lines = [
        f"no VirtualMachine {wanted} in {where} "
        f"(looked in VM/VMI objects and {len(reports)} log source(s))"
    ]
    close = _close_names(name, existing)
    if close:
        lines.append("close names: " + ", ".join(close))
    if existing:
        shown = existing[:20]
        more = f" (+{len(existing) - 20} more)" if len(existing) > 20 else ""
        lines.append("VMs that exist: " + ", ".join(shown) + more)
    else:
        lines.append("no VMs at all were found in this evidence")
    return "\n".join(lines + skipped_lines(evidence))


def skipped_lines(evidence: Evidence, limit: int = 5) -> list[str]:
    """What could not be read, so a "not found" is never silent about refused input."""
    if not evidence.skipped:
        return []
    shown = [f"  {path}: {reason}" for path, reason in evidence.skipped[:limit]]
    more = len(evidence.skipped) - limit
    tail = [f"  … and {more} more"] if more > 0 else []
    return [f"{len(evidence.skipped)} file(s) in the evidence were skipped:", *shown, *tail]
