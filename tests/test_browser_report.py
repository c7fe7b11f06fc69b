"""The HTML report in a real browser: headless Debian chromium loads it without script errors,
draws the marks of a known violation, and leaves screenshots as CI artifacts.

Skipped when /usr/bin/chromium is absent — except under CI=true, where .ci/run installs it and
a missing browser is a failure. Screenshots go to $KVTRACE_ARTIFACTS (else the pytest temp
directory); their paths are printed.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from kvtrace.cli import run
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import SAMPLES
from tests.test_render_html import _evil_page

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FAULT = SAMPLES / "fault-delete-create-one-reconcile"

if not CHROMIUM.exists():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but /usr/bin/chromium is missing: .ci/run installs it")
    pytest.skip(
        "browser test needs /usr/bin/chromium (apt-get install -y chromium)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("KVTRACE_ARTIFACTS")
    path = Path(where) if where else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    argv = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, url]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)


def dump_dom(tmp_path: Path, page: Path) -> tuple[str, str]:
    done = chromium(tmp_path, page.as_uri(), "--enable-logging=stderr", "--v=0", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def screenshot(tmp_path: Path, url: str, target: Path) -> Path:
    chromium(tmp_path, url, f"--screenshot={target}", "--window-size=1400,900")
    assert target.exists() and target.stat().st_size > 10_000
    print(f"screenshot: {target}")
    return target


def html_attrs(dom: str) -> str:
    found = re.search(r"<html\b[^>]*>", dom)
    assert found, dom[:500]
    return found.group(0)


def assert_loaded_cleanly(dom: str, log: str) -> None:
    root = html_attrs(dom)
    assert 'data-kvtrace-ready="1"' in root, root
    assert "data-kvtrace-errors" not in root, root
    assert "Uncaught" not in log, log[-2000:]


@pytest.fixture(scope="module")
def fault_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    page = tmp_path_factory.mktemp("report") / "cache-node.html"
    argv = ["timeline", "default/cache-node", "--bundle", str(FAULT), "-o", "html"]
    assert run([*argv, "--output-file", str(page)]) == 0
    return page


def test_report_loads_and_shows_the_violation(tmp_path, fault_report, artifacts):
    dom, log = dump_dom(tmp_path, fault_report)
    assert_loaded_cleanly(dom, log)
    marks = re.findall(
        r'<g class="mark [^"]*status-violation[^"]*" data-row="(\d+)" data-rules="([^"]*)"', dom
    )
    with open_bundle(FAULT) as evidence:
        timeline = build_timeline(evidence, "default", "cache-node")
    first = timeline.incarnations[0]
    deleted = next(
        i
        for i, r in enumerate(timeline.rows)
        if r.message_id == "vm.deleted" and r.incarnation == first
    )
    successor = next(i for i, r in enumerate(timeline.rows) if r.what == "VMI created")
    # 1-based rows: the delete, the start decided with it, the successor missing its finalizer
    assert set(marks) == {
        (str(deleted + 1), "KV-RC-01"),
        (str(deleted + 2), "KV-RC-01"),
        (str(successor + 1), "KV-SV-02"),
    }
    assert len(re.findall(r'<g class="span kind-phase', dom)) == 4
    assert dom.count('class="flow"') == 2
    screenshot(tmp_path, fault_report.as_uri(), artifacts / "timeline-cache-node.png")
    screenshot(
        tmp_path, fault_report.as_uri() + "#focus", artifacts / "timeline-cache-node-focus.png"
    )


def test_check_page_loads_every_timeline(tmp_path, artifacts):
    page = tmp_path / "check.html"
    argv = ["check", "-A", "--bundle", str(SAMPLES / "fault-non-leader-action"), "-o", "html"]
    assert run([*argv, "--output-file", str(page)]) == 3  # findings present
    dom, log = dump_dom(tmp_path, page)
    assert_loaded_cleanly(dom, log)
    assert 'data-kvtrace-charts="1"' in html_attrs(dom)
    assert re.search(r'status-violation[^"]*" data-row="\d+" data-rules="KV-LD-01"', dom)
    screenshot(tmp_path, page.as_uri(), artifacts / "check-fault-non-leader-action.png")


def test_markup_in_the_evidence_stays_text_in_the_browser(tmp_path):
    page = tmp_path / "evil.html"
    page.write_text(_evil_page(), encoding="utf-8")
    dom, log = dump_dom(tmp_path, page)
    assert_loaded_cleanly(dom, log)
    assert len(re.findall(r"<script\b", dom)) == 3  # the page's own; none from evidence
    assert "<img" not in dom  # the denial's <img onerror> stayed text
    # and the webhook's denial reached the table as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "&lt;/script&gt;&lt;!-- &lt;img src=x onerror=alert(2)&gt;" in dom


def _view(dom: str) -> tuple[int, int]:
    found = re.search(r'data-view="(-?\d+) (-?\d+)"', dom)
    assert found, dom[:500]
    return int(found.group(1)), int(found.group(2))


def test_a_sub_second_incident_fills_the_chart(tmp_path, artifacts):
    """The leader election of always-restart lasts 12 ms on an axis of 51 s: the chart opens
    on those 12 ms, its ticks in milliseconds."""
    page = tmp_path / "short.html"
    window = ["--since", "2026-11-28T00:40:01Z", "--until", "2026-11-28T00:40:02Z"]
    argv = ["timeline", "default/testvm", "-b", str(SAMPLES / "always-restart"), *window]
    assert run([*argv, "-o", "html", "--output-file", str(page)]) == 0
    dom, log = dump_dom(tmp_path, page)
    assert_loaded_cleanly(dom, log)
    start, end = _view(dom)
    assert 12_000 <= end - start <= 15_000  # the rows' 12.1 ms and a small margin, in µs
    ticks = re.findall(r'class="tick-label"[^>]*>([^<]+)<', dom)
    assert ticks and all(re.fullmatch(r"00:40:01\.\d{3}", t) for t in ticks), ticks
    screenshot(tmp_path, page.as_uri(), artifacts / "timeline-short-incident.png")


def test_no_label_is_drawn_over_another(tmp_path, artifacts):
    """snapshot-restore folds two idle gaps side by side: their labels would overlap, so one
    is hidden. The page counts overlapping visible labels itself; the same page without the
    declutter step counts some, so the count can fail."""
    page = tmp_path / "vm-0.html"
    argv = ["timeline", "default/vm-0", "-b", str(SAMPLES / "snapshot-restore"), "-o", "html"]
    assert run([*argv, "--output-file", str(page)]) == 0
    dom, log = dump_dom(tmp_path, page)
    assert_loaded_cleanly(dom, log)
    assert 'data-label-overlaps="0"' in dom
    crowded = tmp_path / "vm-0-crowded.html"
    source = page.read_text(encoding="utf-8")
    assert source.count("this.declutter();") == 1
    crowded.write_text(source.replace("this.declutter();", ""), encoding="utf-8")
    dom, _ = dump_dom(tmp_path, crowded)
    overlaps = re.search(r'data-label-overlaps="(\d+)"', dom)
    assert overlaps and int(overlaps.group(1)) > 0
    screenshot(tmp_path, page.as_uri(), artifacts / "timeline-snapshot-restore.png")


def test_a_long_pod_name_stops_before_the_plot(tmp_path):
    """A VM named with 60 characters (a launcher pod of 74): its lane labels are cut with an
    ellipsis before the plot, so no lane name runs over the marks."""
    from kvsim.bundle import write_bundle
    from kvsim.cluster import Cluster
    from kvsim.kernel import SECOND
    from kvsim.timefmt import from_iso

    start = from_iso("2026-11-28T00:40:00Z")
    cluster = Cluster("long-names", start)
    name = "a-virtual-machine-whose-name-is-as-long-as-kubernetes-allows"
    cluster.create_vm(start + 10 * SECOND, name)
    root = write_bundle(cluster.capture(start + 90 * SECOND), tmp_path / "bundle")
    page = tmp_path / "long.html"
    argv = ["timeline", f"default/{name}", "-b", str(root), "-o", "html"]
    assert run([*argv, "--output-file", str(page)]) == 0
    dom, log = dump_dom(tmp_path, page)
    assert_loaded_cleanly(dom, log)
    lanes = re.findall(r'class="lane-label">([^<]*)<title>([^<]*)</title>', dom)
    (shown, key), *_ = [(shown, key) for shown, key in lanes if key.startswith("pod:")]
    assert shown.endswith("\u2026") and key.startswith("pod:" + shown[:-1]), lanes
    assert all(not s.endswith("\u2026") for s, k in lanes if not k.startswith("pod:"))
    assert 'data-label-overlaps="0"' in dom
