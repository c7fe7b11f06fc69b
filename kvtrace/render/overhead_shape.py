"""Shape an OverheadReport: term rows, check rows, header and summary lines, the document."""

from __future__ import annotations

from typing import Any

from kvtrace import __version__
from kvtrace.overhead.checks import Check
from kvtrace.overhead.report import OverheadReport
from kvtrace.overhead.settings import Setting
from kvtrace.overhead.terms import Term
from kvtrace.render.words import byte_size

TERM_HEADERS = ["TERM", "APPLIED", "BYTES", "QUANTITY", "CONDITION", "WHY", "SOURCE"]
CHECK_HEADERS = ["", "CHECK", "EXPECTED", "ACTUAL", "DIFF", "NOTE"]
MARKS = {True: "✓", False: "✗", None: "–"}
STATUS = {True: "pass", False: "fail", None: "unchecked"}


def term_rows(report: OverheadReport) -> list[list[str]]:
    if report.overhead is None:
        return []
    rows = [_term_row(term) for term in report.overhead.terms]
    total = report.overhead.total
    rows.append(["total", "", str(total), byte_size(total), "", "", ""])
    return rows


def _term_row(term: Term) -> list[str]:
    size = str(term.counted) if term.applied else "0"
    shown = byte_size(term.bytes) if term.applied else f"({byte_size(term.bytes)})"
    applied = "yes" if term.applied else "no"
    return [term.title, applied, size, shown, term.condition, term.why, term.source]


def check_rows(report: OverheadReport) -> list[list[str]]:
    return [[MARKS[c.ok], c.title, c.expected, c.actual, c.diff, c.note] for c in report.checks]


def _setting_value(setting: Setting) -> str:
    value = setting.value
    if value in (None, (), {}):
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def header_lines(report: OverheadReport) -> list[str]:
    pod, vmi, version = report.pod, report.vmi, report.version
    vmi_lookup = report.vmi_lookup
    lines = [f"Pod: {pod.namespace}/{pod.name}"]
    lines.append(
        f"VMI: {vmi.namespace}/{vmi.name} ({vmi_lookup})" if vmi else f"VMI: none ({vmi_lookup})"
    )
    found = version.found or "unknown"
    used = f"KubeVirt: {found} ({version.source}); constants of {version.release.tag}"
    lines.append(used + (f" — {version.note}" if version.note else ""))
    if report.settings is not None:
        lines.append("Settings:")
        lines += [f"  {s.name}={_setting_value(s)} ({s.source})" for s in report.settings.all()]
    return lines


def summary_lines(report: OverheadReport) -> list[str]:
    counts = _counts(report.checks)
    lines = [f"Checks: {counts['pass']} ✓, {counts['fail']} ✗, {counts['unchecked']} not checked"]
    if report.settings is not None:
        lines += [f"note: {n}" for n in report.settings.notes]
    lines += [f"problem: {p}" for p in report.problems]
    return lines


def _counts(checks: list[Check]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "unchecked": 0}
    for check in checks:
        counts[STATUS[check.ok]] += 1
    return counts


def _term_item(term: Term) -> dict[str, Any]:
    return {
        "key": term.key,
        "title": term.title,
        "condition": term.condition,
        "applied": term.applied,
        "why": term.why,
        "bytes": term.counted,
        "termBytes": term.bytes,
        "source": term.source,
    }


def _check_item(check: Check) -> dict[str, Any]:
    return {
        "key": check.key,
        "title": check.title,
        "status": STATUS[check.ok],
        "expected": check.expected,
        "actual": check.actual,
        "diff": check.diff,
        "note": check.note,
        "source": check.source,
    }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def document(report: OverheadReport) -> dict[str, Any]:
    """A kubectl-shaped ``OverheadReport``: spec is what the pod was judged with (its VMI, the
    release, the settings), status the recomputed terms and the checks."""
    vmi, version, overhead = report.vmi, report.version, report.overhead
    settings = report.settings.all() if report.settings else []
    return {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "OverheadReport",
        "metadata": {
            "name": report.pod.name,
            "namespace": report.pod.namespace,
            "generator": f"kvtrace {__version__}",
        },
        "spec": {
            "vmi": None
            if vmi is None
            else {
                "name": vmi.name,
                "namespace": vmi.namespace,
                "uid": vmi.uid,
                "foundBy": report.vmi_lookup,
            },
            "kubevirtVersion": {
                "found": version.found,
                "source": version.source,
                "constants": version.release.tag,
                "note": version.note,
            },
            "settings": [
                {"name": s.name, "value": _plain(s.value), "source": s.source} for s in settings
            ],
        },
        "status": {
            "overhead": None
            if overhead is None
            else {
                "terms": [_term_item(t) for t in overhead.terms],
                "totalBytes": overhead.total,
                "total": byte_size(overhead.total),
            },
            "checks": [_check_item(c) for c in report.checks],
            "summary": _counts(report.checks),
            "notes": report.settings.notes if report.settings else [],
            "problems": report.problems,
        },
    }
