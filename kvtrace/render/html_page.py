"""Serialise shaped report data into one self-contained HTML page.

Every string that came from evidence goes through ``text`` (HTML) or ``embed_json`` (inside a
``<script type="application/json">``); the page's script only ever sets ``textContent`` and
attributes, never markup. Assets are package data, inlined, so the page works offline.
"""

from __future__ import annotations

import json
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from kvtrace import __version__
from kvtrace.render.words import count

MARKS = {"violation": "✗", "unverifiable": "?", "explained": "✓"}
# The first script on the page: any later script error lands in an attribute a test can read.
ERROR_TRAP = (
    "window.onerror=function(m,s,l,c){var d=document.documentElement;"
    "d.setAttribute('data-kvtrace-errors',(d.getAttribute('data-kvtrace-errors')||'')"
    "+m+' @'+l+':'+c+'\\n');};"
)
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}


def text(value: object) -> str:
    """Evidence as HTML text or attribute value: ``<script>`` stays text."""
    return escape("" if value is None else str(value), quote=True)


def embed_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``</script>``, ``<!--`` or line separators survive."""
    dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (*_JSON_ESCAPES.items(), ("\u2029", "\\u2029")):
        dumped = dumped.replace(raw, escaped)
    return dumped


@cache
def asset(name: str) -> str:
    return (resources.files("kvtrace.render") / "assets" / name).read_text(encoding="utf-8")


def document(title: str, body: str, charts: list[tuple[str, dict[str, Any]]]) -> str:
    """The whole page: inlined CSS, the chart data, inlined script."""
    data = "".join(
        f'<script type="application/json" id="{text(cid)}-data">{embed_json(d)}</script>\n'
        for cid, d in charts
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="kvtrace {text(__version__)}">\n'
        f"<title>{text(title)}</title>\n"
        f"<script>{ERROR_TRAP}</script>\n"
        f"<style>\n{asset('report.css')}</style>\n</head>\n<body>\n"
        f"{body}\n{data}<script>\n{asset('timeline.js')}</script>\n</body>\n</html>\n"
    )


def timeline_section(shaped: dict[str, Any], cid: str, heading_level: int = 2) -> str:
    """Heading, findings, the chart's mount point, the table and the notes of one timeline."""
    h = f"h{heading_level}"
    summary = shaped["summary"]
    return (
        f'<{h} class="title">{text(shaped["title"])}</{h}>\n'
        f'<p class="headline">{text(summary[0] if summary else "")}</p>\n'
        f"{findings_list(shaped, cid)}"
        f'<div class="chart" id="{text(cid)}" data-kvtrace-chart="{text(cid)}">'
        "<noscript>The chart needs JavaScript; the table below has every row.</noscript></div>\n"
        f"{rows_table(shaped['rows'], cid)}"
        f"{notes_list(summary[1:])}"
    )


OPEN_QUESTIONS_SHOWN = 3  # more unverifiable rules than this start folded


def findings_list(shaped: dict[str, Any], cid: str) -> str:
    """Violations, then unverifiable rules (folded when there are many)."""
    findings, rules = shaped["findings"], shaped["rules"]
    if not findings:
        return '<p class="findings none">No violations and nothing unverifiable.</p>\n'
    violations = [f for f in findings if f["status"] == "violation"]
    questions = [f for f in findings if f["status"] != "violation"]
    out = _finding_items(violations, rules, cid)
    if questions:
        is_open = " open" if len(questions) <= OPEN_QUESTIONS_SHOWN else ""
        out += (
            f'<details class="open-questions"{is_open}><summary>{count(len(questions), "rule")} '
            f"unverifiable with this evidence</summary>{_finding_items(questions, rules, cid)}"
            "</details>\n"
        )
    return out


def _finding_items(findings: list[dict[str, Any]], rules: dict[str, Any], cid: str) -> str:
    if not findings:
        return ""
    items = "".join(_finding(f, rules, cid) for f in findings)
    return f'<ul class="findings">\n{items}</ul>\n'


def _finding(finding: dict[str, Any], rules: dict[str, Any], cid: str) -> str:
    rule = rules.get(finding["rule"], {})
    rows = " ".join(str(r) for r in finding["rows"])
    links = ", ".join(f'<a href="#{text(cid)}-row-{r}">#{r}</a>' for r in finding["rows"])
    show = (
        f' <button type="button" class="show" data-chart="{text(cid)}" data-rows="{rows}">'
        "show in chart</button>"
        if rows
        else ""
    )
    return (
        f'<li class="finding status-{text(finding["status"])}">'
        f'<span class="badge">{MARKS.get(finding["status"], "")} {text(finding["rule"])}</span> '
        f'<span class="sev">{text(finding["severity"])}</span> {text(finding["why"])}'
        f"{(' · row ' if len(finding['rows']) == 1 else ' · rows ') + links if links else ''}{show}"
        f'<div class="rule">{text(rule.get("sentence", ""))} '
        f'<span class="pos">{text(", ".join(rule.get("positions", [])))}</span></div></li>\n'
    )


TABLE_COLUMNS = ["#", "TIME (UTC)", "ΔT", "SOURCE", "VMI", "KIND", "WHAT", "POS", "VERDICT"]


def rows_table(rows: list[dict[str, Any]], cid: str) -> str:
    head = "".join(f"<th>{text(c)}</th>" for c in [*TABLE_COLUMNS, "EVIDENCE"])
    body = "".join(_table_row(i + 1, r, cid) for i, r in enumerate(rows))
    return (
        f'<details class="rows" open><summary>All {count(len(rows), "row")}</summary>\n'
        f'<table class="rows"><thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody></table>'
        "</details>\n"
    )


def _table_row(number: int, row: dict[str, Any], cid: str) -> str:
    found = {v["status"] for v in row["verdicts"]}
    status = next((s for s in MARKS if s in found), "none")
    cells = [
        str(number),
        (row["time"] or "?") + ("~" if row["orderUncertain"] else ""),
        _delta(row),
        row["source"],
        row["incarnation"] or "",
        row["category"],
        row["what"],
        row["pos"] or "",
        row["verdict"] or "",
        row["evidence"],
    ]
    tds = "".join(f"<td>{text(c)}</td>" for c in cells[:-1]) + f"<td>{_path(cells[-1])}</td>"
    return f'<tr id="{text(cid)}-row-{number}" class="status-{text(status)}">{tds}</tr>\n'


def _path(evidence: str) -> str:
    """``file:line`` escaped, a line break allowed only after a slash (``<wbr>``)."""
    return "/<wbr>".join(text(part) for part in evidence.split("/"))


def _delta(row: dict[str, Any]) -> str:
    """The ΔT the text table shows (``deltaShown``, from the shape)."""
    return str(row.get("deltaShown") or "")


def notes_list(lines: list[str]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li>{text(line)}</li>" for line in lines)
    return f'<ul class="notes">{items}</ul>\n'
