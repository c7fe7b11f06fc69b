"""``kvtrace check -o html``: one page for the bundle — a per-VM summary (violations first),
latency distributions, and every VM's timeline.

Where the timelines go: by default they are sections of the same page (``#vm-N`` anchors), so
the report stays one file to attach to a ticket. When ``--output-file`` names a directory, the
page is ``index.html`` there and each VM's timeline is a sibling file (``vm-N-ns--name.html``)
— the choice for large bundles, where one page holding thousands of timelines gets heavy.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kvtrace.check.report import CheckReport, VMCheck
from kvtrace.render import html_page as page
from kvtrace.render.check_shape import summary_lines, vm_item, with_timelines
from kvtrace.render.html_charts import distribution, distribution_svg
from kvtrace.render.html_lanes import evidence_end, phase_spans
from kvtrace.render.html_timeline import render_html_timeline, shape_html_timeline
from kvtrace.timeline.build import Timeline

PHASES = ("Pending", "Scheduling", "Scheduled")
SUMMARY_COLUMNS = [
    "VM",
    "RUNSTRATEGY",
    "INCARNATIONS",
    "RESTARTS",
    "VIOLATIONS",
    "UNVERIFIABLE",
    "CREATION→RUNNING P50",
    "MAX",
]


def vm_file(number: int, vm: VMCheck) -> str:
    safe = "--".join(re.sub(r"[^A-Za-z0-9._-]", "_", part) for part in vm.key)
    return f"vm-{number}-{safe}.html"


def shape_check_page(
    report: CheckReport, vms: list[tuple[VMCheck, Timeline]], linked: bool = False
) -> dict[str, Any]:
    """The summary rows, the latency distributions, and the link target of each VM."""
    return {
        "title": f"kvtrace check · {report.selection.describe()}",
        "summary": summary_lines(report),
        "vms": [_vm_row(n, vm, linked) for n, (vm, _) in enumerate(vms, start=1)],
        "latency": _latency(vms),
    }


def _vm_row(number: int, vm: VMCheck, linked: bool) -> dict[str, Any]:
    return {
        **vm_item(vm),
        "key": f"{vm.key[0]}/{vm.key[1]}",
        "href": vm_file(number, vm) if linked else f"#vm-{number}",
        "findings": [
            f"{v.rule}: {v.why}" for v in vm.assessment.verdicts if v.status == "violation"
        ],
    }


def _latency(vms: list[tuple[VMCheck, Timeline]]) -> dict[str, Any]:
    created = [
        {"vm": f"{vm.key[0]}/{vm.key[1]}", "seconds": s}
        for vm, _ in vms
        for s in vm.creation_to_running
    ]
    out = {"creation → Running": distribution(created)}
    for phase in PHASES:
        out[f"time in {phase}"] = distribution(_phase_times(vms, phase))
    return out


def _phase_times(vms: list[tuple[VMCheck, Timeline]], phase: str) -> list[dict[str, Any]]:
    values = []
    for vm, timeline in vms:
        for span in phase_spans(timeline, evidence_end(timeline)):
            if span.name == phase and not span.open_end:
                seconds = (span.end - span.start).total_seconds()
                values.append({"vm": f"{vm.key[0]}/{vm.key[1]}", "seconds": seconds})
    return values


def render_html_check(report: CheckReport) -> str:
    """One file: the summary, the charts, then every VM's timeline as a section."""
    vms = with_timelines(report)
    shaped = shape_check_page(report, vms)
    charts = []
    sections = []
    for number, (vm, timeline) in enumerate(vms, start=1):
        shaped_timeline = shape_html_timeline(timeline, vm.assessment)
        charts.append((f"vm{number}", shaped_timeline))
        sections.append(
            f'<section class="vm" id="vm-{number}">'
            f"{page.timeline_section(shaped_timeline, f'vm{number}')}</section>\n"
        )
    body = _summary_body(shaped) + "".join(sections)
    return page.document(shaped["title"], body, charts)


def write_html_site(report: CheckReport, directory: Path) -> list[Path]:
    """``index.html`` plus one self-contained timeline page per VM; returns the files written."""
    vms = with_timelines(report)
    shaped = shape_check_page(report, vms, linked=True)
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "index.html"]
    written[0].write_text(page.document(shaped["title"], _summary_body(shaped), []), "utf-8")
    for number, (vm, timeline) in enumerate(vms, start=1):
        path = directory / vm_file(number, vm)
        path.write_text(render_html_timeline(timeline, vm.assessment), "utf-8")
        written.append(path)
    return written


def _summary_body(shaped: dict[str, Any]) -> str:
    charts = "".join(distribution_svg(name, d) for name, d in shaped["latency"].items())
    return (
        f'<h1 class="title">{page.text(shaped["title"])}</h1>\n'
        f'<p class="headline">{page.text(shaped["summary"][0])}</p>\n'
        f"{_summary_table(shaped['vms'])}"
        '<h2>Latency</h2><p class="headline">From object timestamps (1 s resolution).</p>'
        f'<div class="charts">{charts}</div>\n'
        f"{page.notes_list(shaped['summary'][1:])}"
    )


def _summary_table(vms: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{page.text(c)}</th>" for c in SUMMARY_COLUMNS)
    return (
        f'<table class="vms"><thead><tr>{head}</tr></thead><tbody>\n'
        + "".join(_summary_row(vm) for vm in vms)
        + "</tbody></table>\n"
    )


def _summary_row(vm: dict[str, Any]) -> str:
    cls = "has-violation" if vm["violations"] else "clean"
    title = "\n".join(vm["findings"])
    cells = [
        f'<td><a href="{page.text(vm["href"])}" title="{page.text(title)}">'
        f"{page.text(vm['key'])}</a></td>",
        f"<td>{page.text(vm['runStrategy'] or '?')}</td>",
        *(
            f'<td class="num">{page.text(vm[k])}</td>'
            for k in ("incarnations", "restarts", "violations", "unverifiable")
        ),
        *(
            f'<td class="num">{_seconds(vm[k])}</td>'
            for k in ("creationToRunningP50", "creationToRunningMax")
        ),
    ]
    return f'<tr class="{cls}">{"".join(cells)}</tr>\n'


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:g}s"
