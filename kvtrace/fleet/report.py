"""The fleet report: what a check over many bundles hands to its outputs (the tables and
summaries of :mod:`kvtrace.fleet.frames`, as records), its kubectl-shaped document and its text
table. Every finding and every latency row names its bundle: cluster, capture time, release."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kvtrace.check.report import Selection
from kvtrace.fleet import frames
from kvtrace.fleet.results import TaskResult
from kvtrace.model.verdicts import VIOLATION, severity_rank
from kvtrace.render.table import render_table

Records = list[dict[str, Any]]


@dataclass
class FleetReport:
    selection: Selection
    tables: dict[str, Records]
    summaries: dict[str, Records]
    notes: list[str] = field(default_factory=list)

    def violations(self, at_least: str = "info") -> Records:
        floor = severity_rank(at_least)
        return [
            f
            for f in self.tables["findings"]
            if f["status"] == VIOLATION and severity_rank(f["severity"]) >= floor
        ]


def fleet_report(results: Sequence[TaskResult], selection: Selection) -> FleetReport:
    tables = frames.tables(results)
    summaries = frames.summaries(tables)
    for row in summaries["slowest"]:
        row["timeline"] = timeline_command(row)
    notes = [f"{r.identity.bundle}: not read: {r.error}" for r in results if r.error]
    notes += [f"{r.identity.bundle}: {n}" for r in results for n in r.notes]
    return FleetReport(selection, tables, summaries, notes)


def timeline_command(row: dict[str, Any]) -> str:
    """The command that draws the VM's timeline from its bundle."""
    bundle = str(row["bundle"]).split("#")[0]
    key = f"{row['namespace']}/{row['vm']}"
    return f"kvtrace timeline {shlex.quote(key)} --bundle {shlex.quote(bundle)} -o html"


# --- json / yaml ----------------------------------------------------------------------------
def document(report: FleetReport) -> dict[str, Any]:
    """``kind: FleetCheckReport``: the spec (what was asked) and every table and summary."""
    bundles = report.tables["bundles"]
    return {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "FleetCheckReport",
        "metadata": {"bundles": len(bundles)},
        "spec": {"selection": report.selection.describe()},
        "status": {
            "violations": len(report.violations()),
            "unverifiable": sum(1 for f in report.tables["findings"] if f["status"] != VIOLATION),
            **{_camel(k): v for k, v in report.tables.items() if k != "phases"},
            **{_camel(k): v for k, v in report.summaries.items()},
            "notes": report.notes,
        },
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --- text --------------------------------------------------------------------------------------
BUNDLE_HEADERS = ("BUNDLE", "CLUSTER", "CAPTURED", "RELEASE", "VMS", "✗", "?", "NOTE")
FINDING_HEADERS = ("CLUSTER", "CAPTURED", "RELEASE", "VM", "RULE", "SEVERITY", "WHY")
BY_KEYS = ("rule", "release", "cluster", "namespace", "violations", "vms", "bundles")
BY_HEADERS = tuple(k.upper() for k in BY_KEYS)
LATENCY_HEADERS = ("RELEASE", "METRIC", "N", "P50", "P95", "P99", "MAX")
COMPARISON_HEADERS = ("METRIC", "OLDER → NEWER", "P50", "P95", "P99", "CHANGE", "P", "VERDICT")
SLOW_HEADERS = ("SECONDS", "CLUSTER", "RELEASE", "VM", "NODE", "TIMELINE")


def fleet_table(report: FleetReport) -> str:
    parts = [render_table(BUNDLE_HEADERS, [_bundle_row(b) for b in report.tables["bundles"]])]
    violations = report.violations()
    if violations:
        parts.append(render_table(FINDING_HEADERS, [_finding_row(f) for f in violations]))
        by = report.summaries["violations_by"]
        parts.append(render_table(BY_HEADERS, [[str(r[k]) for k in BY_KEYS] for r in by]))
    latency = report.summaries["latency_by_release"]
    if latency:
        parts.append(render_table(LATENCY_HEADERS, [_latency_row(r) for r in latency]))
    comparison = report.summaries["release_comparison"]
    if comparison:
        parts.append(render_table(COMPARISON_HEADERS, [_comparison_row(r) for r in comparison]))
    slowest = report.summaries["slowest"]
    if slowest:
        parts.append(render_table(SLOW_HEADERS, [_slow_row(r) for r in slowest[:5]]))
    parts.append("\n".join(summary_lines(report)))
    return "\n\n".join(parts) + "\n"


def summary_lines(report: FleetReport) -> list[str]:
    bundles = report.tables["bundles"]
    unread = sum(1 for b in bundles if b["error"])
    lines = [
        f"{len(bundles)} bundle{'s' * (len(bundles) != 1)} "
        f"({unread} not read), {len(report.tables['vms'])} VMs, "
        f"{len(report.violations())} violations; {report.selection.describe()}"
    ]
    lines += [_headline(r, bundles) for r in report.summaries["release_comparison"]]
    return lines + [f"Note: {n}" for n in report.notes]


def _headline(row: dict[str, Any], bundles: Records) -> str:
    """One comparison in words: ``v1.9.0 against v1.8.0 over 4 clusters: creation→Running
    slower, p50 5.0s → 6.0s (+20%), p95 …; Mann-Whitney p=4.7e-38``."""
    releases = (row["older"], row["newer"])
    clusters = len({b["cluster"] for b in bundles if b["release"] in releases})
    change = "" if row["p50_change"] is None else f" ({row['p50_change']:+.0%})"
    quantiles = ", ".join(
        f"{q} {seconds(row[q + '_older'])} → {seconds(row[q + '_newer'])}"
        + (change if q == "p50" else "")
        for q in frames.QUANTILES
    )
    p = min(row["p_slower"], row["p_faster"])
    return (
        f"{row['newer']} against {row['older']} over {clusters} "
        f"cluster{'s' * (clusters != 1)}: {row['metric']} {row['verdict']}, {quantiles}; "
        f"Mann-Whitney p={p:.2g}, n={row['n_older']}/{row['n_newer']}"
    )


def _bundle_row(row: dict[str, Any]) -> list[str]:
    note = f"not read: {row['error']}" if row["error"] else ""
    return [
        row["bundle"],
        row["cluster"],
        row["captured_at"] or "-",
        row["release"] or "-",
        str(row["vms"]),
        str(row["violations"]),
        str(row["unverifiable"]),
        note,
    ]


def _finding_row(row: dict[str, Any]) -> list[str]:
    return [
        row["cluster"],
        row["captured_at"] or "-",
        row["release"],
        f"{row['namespace']}/{row['vm']}",
        row["rule"],
        row["severity"],
        row["why"],
    ]


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _latency_row(row: dict[str, Any]) -> list[str]:
    values = [seconds(row[k]) for k in ("p50", "p95", "p99", "max")]
    return [row["release"], row["metric"], str(row["count"]), *values]


def _comparison_row(row: dict[str, Any]) -> list[str]:
    pairs = [
        f"{seconds(row[f'{q}_older'])} → {seconds(row[f'{q}_newer'])}" for q in frames.QUANTILES
    ]
    change = row["p50_change"]
    return [
        row["metric"],
        f"{row['older']} (n={row['n_older']}) → {row['newer']} (n={row['n_newer']})",
        *pairs,
        "-" if change is None else f"{change:+.0%}",
        f"{min(row['p_slower'], row['p_faster']):.2g}",
        row["verdict"],
    ]


def _slow_row(row: dict[str, Any]) -> list[str]:
    vm = f"{row['namespace']}/{row['vm']}"
    return [
        seconds(row["seconds"]),
        row["cluster"],
        row["release"],
        vm,
        row["node"],
        row["timeline"],
    ]
