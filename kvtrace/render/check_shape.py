"""Shape a CheckReport: one row per VM (violations first), then every violation with evidence."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kvtrace import __version__
from kvtrace.check.report import CheckReport, VMCheck
from kvtrace.model.rules import ENCODED_VERSION
from kvtrace.model.verdicts import Verdict
from kvtrace.render.terminal import BAD, GOOD, OPEN
from kvtrace.render.verdict_shape import verdict_data
from kvtrace.render.words import count, duration
from kvtrace.timeline.build import Timeline

HEADERS = [
    "VM",
    "RUNSTRATEGY",
    "INCARNATIONS",
    "RESTARTS",
    "VIOLATIONS",
    "UNVERIFIABLE",
    "CREATION→RUNNING P50/MAX",
    "MIGRATIONS",
    "MIGRATION P50/P95",
]
WIDE_HEADERS = [*HEADERS, "EXPLAINED", "FINDINGS"]
CSV_FIELDS = [
    "namespace",
    "name",
    "runStrategy",
    "incarnations",
    "restarts",
    "violations",
    "unverifiable",
    "creationToRunningP50",
    "creationToRunningMax",
    "migrations",
    "migrationsFailed",
    "migrationP50",
    "migrationP95",
]


def ordered(report: CheckReport) -> list[VMCheck]:
    """Violations first (most first), then by namespace/name: every check output's order."""
    return sorted(report.vms, key=lambda vm: (-len(vm.assessment.violations()), vm.key))


QUESTIONS_LISTED = 20  # past this many VMs with open questions only, they are counted by rule


def listed(report: CheckReport, every: bool = False) -> list[VMCheck]:
    """The VMs a table lists: all of them with ``every`` (``-o wide``) or when one VM was
    asked for; else every VM with a violation, and those with open questions only while they
    are few (``QUESTIONS_LISTED``). The rest are counted in one line each, so a fleet's one
    violation is not lost among thousands of rows."""
    if every or report.selection.name:
        return ordered(report)
    violating = [vm for vm in ordered(report) if vm.assessment.violations()]
    questions = [vm for vm in ordered(report) if _questions_only(vm)]
    return violating + (questions if len(questions) <= QUESTIONS_LISTED else [])


def _questions_only(vm: VMCheck) -> bool:
    return has_findings(vm) and not vm.assessment.violations()


def has_findings(vm: VMCheck) -> bool:
    return any(v.status != "explained" for v in vm.assessment.verdicts)


def row_style(vm: VMCheck) -> str:
    counts = vm.assessment.counts()
    if counts.get("violation"):
        return BAD
    return OPEN if counts.get("unverifiable") else GOOD


def _seconds(value: float | None) -> str:
    """``5s``; past a minute as kubectl writes a duration (``12m30s``, ``1h2m0s``)."""
    if value is None:
        return "-"
    return f"{value:.0f}s" if value < 60 else duration(value)


def vm_item(vm: VMCheck) -> dict[str, Any]:
    p50, worst = vm.latency()
    migration_p50, migration_p95 = vm.migration_durations()
    counts = vm.assessment.counts()
    return {
        "namespace": vm.key[0],
        "name": vm.key[1],
        "runStrategy": vm.strategy,
        "incarnations": vm.incarnations,
        "restarts": vm.restarts,
        "violations": counts.get("violation", 0),
        "unverifiable": counts.get("unverifiable", 0),
        "explained": counts.get("explained", 0),
        "creationToRunningP50": p50,
        "creationToRunningMax": worst,
        "migrations": len(vm.migrations),
        "migrationsFailed": vm.failed_migrations,
        "migrationP50": migration_p50,
        "migrationP95": migration_p95,
    }


def table_rows(report: CheckReport, vms: list[VMCheck] | None = None) -> list[list[str]]:
    return [_row(vm) for vm in (ordered(report) if vms is None else vms)]


def wide_rows(vms: list[VMCheck]) -> list[list[str]]:
    return [[*_row(vm), str(vm_item(vm)["explained"]), _findings(vm)] for vm in vms]


def _findings(vm: VMCheck) -> str:
    """Each rule that found something, once, violations first: ``✗ KV-VM-03, ? KV-LE-01``."""
    found = sorted(
        (v for v in vm.assessment.verdicts if v.status != "explained"),
        key=lambda v: v.status != "violation",
    )
    return ", ".join(dict.fromkeys(f"{v.mark} {v.rule}" for v in found)) or "-"


def _row(vm: VMCheck) -> list[str]:
    item = vm_item(vm)
    return [
        f"{vm.key[0]}/{vm.key[1]}",
        item["runStrategy"] or "?",
        str(item["incarnations"]),
        str(item["restarts"]),
        str(item["violations"]),
        str(item["unverifiable"]),
        f"{_seconds(item['creationToRunningP50'])}/{_seconds(item['creationToRunningMax'])}",
        _migration_count(item),
        f"{_seconds(item['migrationP50'])}/{_seconds(item['migrationP95'])}"
        if item["migrations"]
        else "-",
    ]


def _migration_count(item: dict[str, Any]) -> str:
    if not item["migrations"]:
        return "-"
    failed = item["migrationsFailed"]
    return f"{item['migrations']} ({failed} failed)" if failed else str(item["migrations"])


def evidence_of(vm: VMCheck, verdict: Verdict) -> list[str]:
    return vm.evidence_of(verdict)


TABLE_VIOLATIONS = 50  # a terminal (or a CI log) gets the first ones; JSON/YAML/HTML hold all


def violation_lines(report: CheckReport, limit: int = TABLE_VIOLATIONS) -> list[str]:
    """Each violation with its evidence; a VM's repeats of one finding (same rule, same why)
    as one entry with its count and the evidence of its first and last, so one VM's retries
    never push another VM's violations past the ``limit`` entries a terminal gets."""
    groups = _repeats(report.violations())
    lines = [line for vm, same in groups[:limit] for line in _entry(vm, same)]
    hidden = sum(len(same) for _, same in groups[limit:])
    if hidden:
        lines.append(f"… and {count(hidden, 'more violation')} (-o json or -o html lists them all)")
    return lines


def _repeats(violations: list[tuple[VMCheck, Verdict]]) -> list[tuple[VMCheck, list[Verdict]]]:
    """The violations grouped by VM, rule and why, in the order of each group's first."""
    groups: dict[tuple[tuple[str, str], str, str], tuple[VMCheck, list[Verdict]]] = {}
    for vm, verdict in violations:
        groups.setdefault((vm.key, verdict.rule, verdict.why), (vm, []))[1].append(verdict)
    return list(groups.values())


def _entry(vm: VMCheck, same: list[Verdict]) -> list[str]:
    first, last = same[0], same[-1]
    head = f"✗ {first.rule} ({first.severity}) {vm.key[0]}/{vm.key[1]}: {first.why}"
    if len(same) == 1:
        return [head, *(f"    at {ref}" for ref in evidence_of(vm, first))]
    shown = evidence_of(vm, first)
    later = [ref for ref in evidence_of(vm, last) if ref not in shown]
    between = len(same) - 2
    return [
        f"{head} ({len(same)} times: the first, then the last)",
        *(f"    at {ref}" for ref in shown),
        *([f"    … {between} more of the same in between"] if between else []),
        *(f"    at {ref}" for ref in later),
    ]


def summary_lines(report: CheckReport) -> list[str]:
    """What goes under the table; the headline, the line a CI log shows last, comes last."""
    lines = []
    for source in report.reports:
        problems = source.tally.problems()
        if problems:
            lines.append(
                f"unparsed in {source.source_id}: "
                + ", ".join(f"{n} {k}" for k, n in problems.items())
            )
    return [*lines, *(f"note: {n}" for n in report.notes), headline(report)]


def headline(report: CheckReport) -> str:
    total = sum(len(vm.assessment.violations()) for vm in report.vms)
    unverifiable = sum(len(vm.assessment.unverifiable()) for vm in report.vms)
    return (
        f"{count(len(report.vms), 'VM')} in {report.selection.describe()} · "
        f"judged against KubeVirt {report.version.shown} ({report.version.source}) "
        f"by {ENCODED_VERSION}'s rules · "
        f"{count(total, 'violation')}, {unverifiable} unverifiable"
    )


def unlisted_lines(report: CheckReport, shown: list[VMCheck]) -> list[str]:
    """One line for the VMs with open questions only that the table leaves out (with their
    most frequent rules), one for those whose every step is explained."""
    listed_keys = {vm.key for vm in shown}
    hidden = [vm for vm in report.vms if vm.key not in listed_keys]
    questions = [vm for vm in hidden if _questions_only(vm)]
    clean = len(hidden) - len(questions)
    lines = []
    if questions:
        rules = Counter(
            r for vm in questions for r in {v.rule for v in vm.assessment.unverifiable()}
        )
        top = ", ".join(f"{rule} ({count(n, 'VM')})" for rule, n in rules.most_common(5))
        lines.append(
            f"? {count(len(questions), 'VM')} with open questions only, not listed: {top} "
            "(-o wide lists every VM)"
        )
    if clean:
        lines.append(
            f"{count(clean, 'VM')} not listed: every step explained (-o wide lists every VM)"
        )
    return lines


def document(report: CheckReport) -> dict[str, Any]:
    return {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "CheckReport",
        "metadata": {
            "generator": f"kvtrace {__version__}",
            "selection": report.selection.describe(),
        },
        "spec": {
            "model": f"KubeVirt {ENCODED_VERSION}",
            "kubevirtVersion": report.version.version,
            "kubevirtVersionSource": report.version.source,
            "kubevirtReleasesFromLogs": list(report.version.band_releases),
            "kubevirtVersionDisagreements": list(report.version.disagreements),
            "source": {"layout": report.evidence.layout, "origin": report.evidence.origin},
        },
        "items": [
            {
                **vm_item(vm),
                "findings": [
                    {**verdict_data(v), "evidence": evidence_of(vm, v)}
                    for v in vm.assessment.verdicts
                    if v.status != "explained"
                ],
            }
            for vm in ordered(report)
        ],
        "status": {"notes": report.notes},
    }


def csv_table(report: CheckReport) -> tuple[list[dict[str, Any]], list[str]]:
    return [vm_item(vm) for vm in report.vms], CSV_FIELDS


def with_timelines(report: CheckReport) -> list[tuple[VMCheck, Timeline]]:
    """Each VM (summary order) with the timeline the check kept for it (``run_check`` with
    ``keep_timelines``, as the ``html`` and ``perfetto`` outputs ask)."""
    vms = ordered(report)
    missing = [vm.key for vm in vms if vm.timeline is None]
    if missing:
        raise ValueError(f"the check kept no timeline for {missing[0]}: run it keep_timelines")
    return [(vm, vm.timeline) for vm in vms if vm.timeline is not None]
