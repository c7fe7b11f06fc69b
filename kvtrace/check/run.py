"""``kvtrace check``: the model over every selected VM of the evidence.

Small evidence, or a report that must draw every timeline (``-o html``, ``-o perfetto``), is
read in this process (:mod:`kvtrace.timeline.router`). Large log sets are split into per-VM
buckets of raw lines (:mod:`kvtrace.check.partition`) and the buckets are parsed and checked by
one worker process per core (:mod:`kvtrace.check.workers`), so memory stays bounded by a bucket
and every core works. Both paths use the same routing, timeline assembly and model
(:mod:`kvtrace.check.vms`).
"""

from __future__ import annotations

from kvtrace.check.report import CheckReport, Selection, VMCheck
from kvtrace.check.vms import check_scopes
from kvtrace.errors import NotFoundError
from kvtrace.evidence import VM, Evidence
from kvtrace.model.version import detect
from kvtrace.timeline.build import skipped_lines
from kvtrace.timeline.log_rows import SourceReport
from kvtrace.timeline.router import Router, bulk_log_rows, router_for

PARTITION_MIN_BYTES = 8 << 20  # above this, the workers (one process took 32 s on 63 MB, two 15 s)


def run_check(
    evidence: Evidence,
    selection: Selection,
    version_flag: str | None = None,
    keep_timelines: bool = False,
    progress: bool = False,
    since: bool = False,
) -> CheckReport:
    """Check the selected VMs. ``keep_timelines`` (a report that draws them) checks in this
    process, so every VM comes back with its timeline; else large logs go to the workers, with
    a progress line on stderr when ``progress`` (and stderr is a terminal). ``since``: the
    report will be windowed (:func:`~kvtrace.check.report.since_moment`), so every VM keeps
    what the window needs: its timeline in this process, its ``Reach`` from the workers."""
    namespaces = {selection.namespace} if selection.namespace else None
    only = (selection.namespace or "default", selection.name) if selection.name else None
    router = router_for(evidence, namespaces, only, selection.keeps if selection.labels else None)
    if only is None and not keep_timelines and _log_bytes(evidence) >= PARTITION_MIN_BYTES:
        from kvtrace.check.progress import CheckProgress
        from kvtrace.check.workers import check_partitioned

        vms, reports = check_partitioned(evidence, router, CheckProgress(progress), since)
    else:
        vms, reports = _check_here(evidence, router)
    if not vms:
        raise NotFoundError(_nothing_found(evidence, selection))
    version = detect(evidence, version_flag)
    judged: dict[str, None] = {}
    for vm in vms:
        judged.update(dict.fromkeys(vm.assessment.judge(version)))
    notes = version.notes() + list(judged) + list(evidence.missing)
    ordered = sorted(vms, key=lambda v: v.key)
    return CheckReport(selection, version, ordered, reports, evidence.summary(), notes)


def _log_bytes(evidence: Evidence) -> int:
    total = 0
    for stream in evidence.logs:
        try:
            total += stream.path.stat().st_size if stream.path else 0
        except OSError:
            continue
    return total


def _check_here(evidence: Evidence, router: Router) -> tuple[list[VMCheck], list[SourceReport]]:
    bulk = bulk_log_rows(router, evidence.logs, evidence.captured_at)
    return check_scopes(
        evidence, router, bulk.rows, bulk.leader_rows, bulk.reports, keep=True
    ), bulk.reports


def _nothing_found(evidence: Evidence, selection: Selection) -> str:
    namespaces = sorted({o.namespace or "default" for o in evidence.of_kind(VM)})
    where = evidence.origin or evidence.layout
    if namespaces:
        hint = f"namespaces with VMs: {', '.join(namespaces)} (use -n NS or -A)"
    else:
        hint = "no VMs at all in this evidence"
    return "\n".join(
        [f"no VMs found for {selection.describe()} in {where}; {hint}", *skipped_lines(evidence)]
    )
