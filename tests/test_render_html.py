"""The HTML report: golden shaped data (not pixels), escaping of evidence, determinism, and a
page that needs nothing from the network."""

from __future__ import annotations

import json
import re

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.engine import assess
from kvtrace.model.version import detect
from kvtrace.render.check_shape import with_timelines
from kvtrace.render.html_axis import build_axis
from kvtrace.render.html_check import render_html_check, shape_check_page
from kvtrace.render.html_lanes import action_effects
from kvtrace.render.html_page import asset, embed_json
from kvtrace.render.html_timeline import render_html_timeline, shape_html_timeline
from kvtrace.render.timeline_shape import items
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import SAMPLES, Golden

CASES = [
    ("always-restart", "default", "testvm"),
    ("fault-delete-create-one-reconcile", "default", "cache-node"),
    ("fault-non-leader-action", "default", "batch-worker"),
]
EVIL_SCRIPT = "<script>alert(1)</script>"
EVIL_MSG = "</script><!-- <img src=x onerror=alert(2)> & more"


def _shaped(sample: str, namespace: str, name: str) -> tuple[dict, object]:
    with open_bundle(SAMPLES / sample) as evidence:
        timeline = build_timeline(evidence, namespace, name)
        assessment = assess(timeline, version=detect(evidence))
        return shape_html_timeline(timeline, assessment), (timeline, assessment)


def _golden_text(shaped: dict) -> str:
    # rows are the timeline's items(), already covered by tests/golden/timeline
    rest = {k: v for k, v in shaped.items() if k != "rows"}
    return json.dumps(rest, indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(("sample", "namespace", "name"), CASES)
def test_shaped_timeline_matches_golden(sample, namespace, name, golden: Golden):
    shaped, _ = _shaped(sample, namespace, name)
    golden.check(f"html/{sample}_{namespace}_{name}.json", _golden_text(shaped))


@pytest.mark.parametrize(("sample", "namespace", "name"), CASES)
def test_table_under_the_chart_holds_the_timeline_items(sample, namespace, name):
    shaped, (timeline, assessment) = _shaped(sample, namespace, name)
    shown = [{k: v for k, v in row.items() if k != "deltaShown"} for row in shaped["rows"]]
    assert shown == items(timeline, assessment)
    page = render_html_timeline(timeline, assessment)
    assert len(re.findall(r'<tr id="t0-row-\d+"', page)) == len(timeline.rows)


def _cells(page: str, row: int) -> list[str]:
    found = re.search(rf'<tr id="t0-row-{row}"[^>]*>(.*?)</tr>', page)
    assert found, row
    return re.findall(r"<td>(.*?)</td>", found.group(1))


def test_the_table_delta_keeps_the_precision_of_its_times():
    shaped, (timeline, assessment) = _shaped("always-restart", "default", "testvm")
    page = render_html_timeline(timeline, assessment)
    by_row = {r["row"]: r for r in shaped["rows"]}
    # row 7 (a 1 s object time) after row 6 (a µs log line): known to the second only
    assert by_row[7]["resolution"] == "1s" and by_row[6]["resolution"] == "1us"
    assert _cells(page, 7)[2] == "~+27s"
    # row 10, a µs line right after a 1 s object time: still rough, whatever its own digits
    assert by_row[10]["resolution"] == "1us" and by_row[9]["resolution"] == "1s"
    assert _cells(page, 10)[2] == "~+0s"
    assert _cells(page, 11)[2] == "+0.006380"  # two µs lines: all six digits


def test_pod_names_and_paths_break_only_between_words():
    _, (timeline, assessment) = _shaped("always-restart", "default", "testvm")
    page = render_html_timeline(timeline, assessment)
    cells = _cells(page, 1)
    assert cells[3] == "virt-controller-9zbmkjgqb8-xvvbf"
    assert cells[-1] == (
        "logs/<wbr>kubevirt/<wbr>virt-controller-9zbmkjgqb8-xvvbf/<wbr>virt-controller/<wbr>"
        "current.log:4"
    )
    css = asset("report.css")
    assert "table.rows td:nth-child(-n+6)" in css and "overflow-wrap: anywhere" not in css


def test_the_chart_opens_on_the_rows_however_short_the_incident():
    with open_bundle(SAMPLES / "always-restart") as evidence:
        timeline = build_timeline(evidence, "default", "testvm")
        assessment = assess(timeline, version=detect(evidence))
    first, last = timeline.rows[0].time, timeline.rows[4].time
    assert (last.at - first.at).total_seconds() < 0.02  # the leader election: 12 ms
    timeline.since, timeline.until = first.at, last.at
    shaped = shape_html_timeline(timeline, assessment)
    xs = [m["x0"] for m in shaped["marks"]]
    assert shaped["extent"] == {"x0": min(xs), "x1": max(xs) + 1}  # the last line's 1 µs
    assert shaped["extent"]["x1"] - shaped["extent"]["x0"] < shaped["axis"]["width"] / 1000


def test_violation_marks_carry_their_rule():
    shaped, _ = _shaped("fault-delete-create-one-reconcile", "default", "cache-node")
    flagged = {m["row"]: m["rules"] for m in shaped["marks"] if m["status"] == "violation"}
    timeline, _ = _shaped("fault-delete-create-one-reconcile", "default", "cache-node")[1]
    deleted = next(
        i
        for i, r in enumerate(timeline.rows)
        if r.message_id == "vm.deleted" and r.incarnation == timeline.incarnations[0]
    )
    successor = next(i for i, r in enumerate(timeline.rows) if r.what == "VMI created")
    # rows are 1-based in the page: the delete and the start decided with it, and the successor
    # VMI whose finalizer the stale patch removed
    assert flagged == {
        deleted + 1: ["KV-RC-01"],
        deleted + 2: ["KV-RC-01"],
        successor + 1: ["KV-SV-02"],
    }
    assert shaped["rules"]["KV-RC-01"]["positions"][0] == "vm.go:1016"
    assert [f["rule"] for f in shaped["findings"]][:1] == ["KV-RC-01"]


def test_create_and_delete_point_at_their_effects():
    with open_bundle(SAMPLES / "fault-delete-create-one-reconcile") as evidence:
        timeline = build_timeline(evidence, "default", "cache-node")
    pairs = {
        timeline.rows[a].message_id: timeline.rows[b].what for a, b in action_effects(timeline)
    }
    assert pairs["vm.created"] == "phase Pending"
    assert pairs["vm.deleted"].startswith("Normal SuccessfulDelete")


def test_phase_bars_show_one_second_uncertainty():
    shaped, _ = _shaped("always-restart", "default", "testvm")
    phases = [s for s in shaped["spans"] if s["kind"] == "phase"]
    assert [s["name"] for s in phases] == ["Pending", "Scheduling", "Scheduled", "Running"]
    assert all(s["xu"] - s["x0"] == 1_000_000 for s in phases)
    assert phases[-1]["open"] is True  # still Running when the bundle was taken


def test_long_idle_gaps_fold_into_breaks():
    hour = 3_600_000_000
    axis = build_axis([(0, 1_000_000), (3 * hour, 3 * hour + 2_000_000)])
    assert len(axis.segments) == 2
    assert axis.width < 10 * 1_000_000
    xs = [axis.x(t) for t in (0, 500_000, hour, 2 * hour, 3 * hour, 3 * hour + 1)]
    assert xs == sorted(xs)


def test_rendering_is_deterministic():
    pages = []
    for _ in range(2):
        _, (timeline, assessment) = _shaped("fault-non-leader-action", "default", "batch-worker")
        pages.append(render_html_timeline(timeline, assessment))
    assert pages[0] == pages[1]


def _evil_page() -> str:
    """A VM whose first VMI create a webhook denies with markup in its message (k8s names cannot
    hold ``<``; a denial can echo anything): it shows in the FailedCreate Event row and in the
    reason of the failed reconcile."""
    from kvsim import timefmt
    from kvsim.cluster import Cluster
    from kvsim.kernel import SECOND
    from tests.simulated import assessed

    start = timefmt.from_iso("2026-12-08T14:00:00Z")
    cluster = Cluster("html-evil", start)
    denial = (
        'admission webhook "virtualmachineinstances-create-validator.kubevirt.io" denied the '
        f"request: {EVIL_SCRIPT} {EVIL_MSG}"
    )
    cluster.reject_vmi_creates(start + 20 * SECOND, "testvm", denial)
    cluster.create_vm(start + 30 * SECOND, "testvm")
    timeline, assessment = assessed(cluster.capture(start + 2 * 60 * SECOND), "testvm")
    return render_html_timeline(timeline, assessment)


def _embedded(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="t0-data">(.*?)</script>', page, re.S)
    assert found
    return json.loads(found.group(1))


def test_markup_in_the_evidence_renders_as_text():
    page = _evil_page()
    assert EVIL_SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # only the page's own three scripts open and close
    assert page.count("<script") == 3 and page.count("</script>") == 3
    assert any(EVIL_SCRIPT in r["what"] for r in _embedded(page)["rows"])


def test_a_message_holding_script_end_and_comment_stays_inside_its_json():
    page = _evil_page()
    assert "<!--" not in page
    assert "<img" not in page
    embedded = re.search(r'id="t0-data">(.*?)</script>', page, re.S).group(1)
    assert "\\u003c/script\\u003e\\u003c!--" in embedded
    assert any(r["what"].endswith(EVIL_MSG) for r in _embedded(page)["rows"])
    assert "&lt;/script&gt;&lt;!-- &lt;img src=x onerror=alert(2)&gt; &amp; more" in page


def test_embed_json_escapes_every_breakout():
    text = embed_json({"a": "</script><!--\u2028\u2029&"})
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == {"a": "</script><!--\u2028\u2029&"}


def test_page_needs_no_network():
    page = _evil_page()
    urls = set(re.findall(r"https?://[^\s\"')]+", page))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace name, never fetched
    assert not re.search(r"<(link|img|iframe)\b|@import|url\(http", page)


def test_assets_cannot_end_their_script_or_style_early():
    for name in ("timeline.js", "report.css"):
        body = asset(name).lower()
        assert "</script" not in body and "</style" not in body and "<!--" not in body


def test_check_page_puts_violations_first_and_links_each_timeline(golden: Golden):
    with open_bundle(SAMPLES / "always-restart") as evidence:
        report = run_check(evidence, Selection(None))
        shaped = shape_check_page(report, with_timelines(report))
        page = render_html_check(report)
    golden.check("html/check_always-restart.json", json.dumps(shaped, indent=1) + "\n")
    for vm in shaped["vms"]:
        anchor = vm["href"].lstrip("#")
        assert f'id="{anchor}"' in page


def test_check_page_orders_violating_vms_first():
    with open_bundle(SAMPLES / "fault-non-leader-action") as evidence:
        report = run_check(evidence, Selection(None))
        shaped = shape_check_page(report, with_timelines(report))
    assert shaped["vms"][0]["violations"] > 0
    assert shaped["vms"][0]["findings"][0].startswith("KV-LD-01")
