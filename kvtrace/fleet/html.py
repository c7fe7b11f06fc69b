"""The fleet report as one self-contained HTML page: the bundles, violations by rule, release,
cluster and namespace, latency distributions per release and per cluster with the release
comparison, migrations, and the slowest VM start-ups linked to their timelines. Every value from
the evidence is escaped; no script, no external resource."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from kvtrace.fleet import frames
from kvtrace.fleet.report import FleetReport, seconds, summary_lines

Records = list[dict[str, Any]]
STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:2px 8px;text-align:left;
border-bottom:1px solid #ddd;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;
font-variant-numeric:tabular-nums}.slower{color:#b00;font-weight:600}.faster{color:#070}
.bar{display:inline-block;height:.7em;background:#5b8def;margin-right:4px}
code{font-size:12px;word-break:break-all}
"""


def fleet_html(report: FleetReport, timeline_pages: dict[int, str] | None = None) -> str:
    """``timeline_pages``: slowest-row index → relative link of its timeline page, when written."""
    s = report.summaries
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kvtrace fleet check</title>",
        f"<style>{STYLE}</style></head><body><h1>kvtrace fleet check</h1>",
        "".join(f"<p>{escape(line)}</p>" for line in summary_lines(report)),
        _section("Release comparison", _comparison(s["release_comparison"])),
        _section(
            "Upgrades seen from both sides (per cluster)", _comparison(s["cluster_comparison"])
        ),
        _section("Slowest VM start-ups", _slowest(s["slowest"], timeline_pages or {})),
        _section("Violations by rule, release, cluster and namespace", _table(s["violations_by"])),
        _section("Latency per release", _latency(s["latency_by_release"])),
        _section("Latency per cluster", _latency(s["latency_by_cluster"])),
        _section("Migrations per release", _table(s["migrations_by_release"])),
        _section("Migrations per cluster", _table(s["migrations_by_cluster"])),
        _section("Bundles", _table(report.tables["bundles"])),
        _section("Violations", _table(report.violations())),
        "</body></html>\n",
    ]
    return "".join(parts)


def _section(title: str, body: str) -> str:
    return f"<h2>{escape(title)}</h2>{body}" if body else ""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"<td class='n'>{value:.3g}</td>"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"<td class='n'>{value}</td>"
    return f"<td>{escape('' if value is None else str(value))}</td>"


def _table(records: Records, columns: Sequence[str] | None = None) -> str:
    if not records:
        return ""
    names = list(columns or records[0])
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    body = "".join("<tr>" + "".join(_cell(r.get(n)) for n in names) + "</tr>" for r in records)
    return f"<table><tr>{head}</tr>{body}</table>"


def _latency(records: Records) -> str:
    """The distribution table with a bar per p50 and p95 (scaled to the largest p99)."""
    if not records:
        return ""
    top = max((r["p99"] or 0.0) for r in records) or 1.0
    groups = [k for k in records[0] if k not in ("metric", "count", *frames.QUANTILES, "max")]
    head = "".join(f"<th>{escape(n)}</th>" for n in [*groups, "metric", "n", "p50", "p95", "p99"])
    rows = []
    for r in records:
        bars = f"<span class='bar' style='width:{120 * (r['p50'] or 0) / top:.0f}px'></span>"
        cells = "".join(_cell(r[g]) for g in groups) + _cell(r["metric"]) + _cell(r["count"])
        cells += f"<td class='n'>{bars}{escape(seconds(r['p50']))}</td>"
        cells += f"<td class='n'>{escape(seconds(r['p95']))}</td>"
        cells += f"<td class='n'>{escape(seconds(r['p99']))}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _comparison(records: Records) -> str:
    if not records:
        return ""
    rows = []
    for r in records:
        where = f"{r['cluster']}: " if "cluster" in r else ""
        change = "-" if r["p50_change"] is None else f"{r['p50_change']:+.0%}"
        quantiles = " · ".join(
            f"{q} {seconds(r[q + '_older'])} → {seconds(r[q + '_newer'])}" for q in frames.QUANTILES
        )
        verdict = str(r["verdict"])
        mark = f"<td class='{verdict.split()[0]}'>{escape(verdict)}</td>"
        p = min(r["p_slower"], r["p_faster"])
        rows.append(
            f"<tr><td>{escape(where + r['metric'])}</td>"
            f"<td>{escape(r['older'])} (n={r['n_older']}) → {escape(r['newer'])} "
            f"(n={r['n_newer']})</td><td>{escape(quantiles)}</td><td class='n'>{change}</td>"
            f"<td class='n'>{p:.2g}</td>{mark}</tr>"
        )
    head = "<tr><th>metric</th><th>releases</th><th>quantiles</th><th>p50 change</th>"
    head += "<th>p (Mann-Whitney)</th><th>verdict</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _slowest(records: Records, pages: dict[int, str]) -> str:
    if not records:
        return ""
    rows = []
    for index, r in enumerate(records):
        vm = escape(f"{r['namespace']}/{r['vm']}")
        link = f"<a href='{escape(pages[index])}'>{vm}</a>" if index in pages else vm
        where = "".join(_cell(r[k]) for k in ("cluster", "release", "captured_at", "node"))
        rows.append(
            f"<tr><td class='n'>{escape(seconds(r['seconds']))}</td><td>{link}</td>{where}"
            f"<td><code>{escape(r['timeline'])}</code></td></tr>"
        )
    head = "<tr><th>creation→Running</th><th>VM</th><th>cluster</th><th>release</th>"
    head += "<th>captured</th><th>node</th><th>its timeline</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"
