"""The terminal (kvtrace/render/terminal.py, table.py, text.py): a table fits the terminal's
width by cutting only the message column, piped output keeps every value whole, colour only on
a terminal (NO_COLOR, --color), and ``check -A`` on a fleet puts the one violation before the
thousands of clean VMs, its headline last."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.engine import AssessedTimeline, assess
from kvtrace.model.version import detect as detect_version
from kvtrace.render.outputs import render
from kvtrace.render.terminal import View, detect
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.test_render_controls import RAW_CONTROLS, _hostile_sample

SGR = re.compile(r"\x1b\[[0-9;]*m")
RED, YELLOW, GREEN, BOLD = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[1m"


def _assessed(sample: str, namespace: str, name: str) -> AssessedTimeline:
    with open_bundle(SAMPLES / sample) as evidence:
        timeline = build_timeline(evidence, namespace, name)
        return AssessedTimeline(timeline, assess(timeline, version=detect_version(evidence)))


def _check(sample: str):
    with open_bundle(SAMPLES / sample) as evidence:
        return run_check(evidence, Selection(None))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- width -----------------------------------------------------------------------------------


def test_a_terminal_table_cuts_only_the_message_column():
    report = _assessed("always-restart", "default", "testvm")
    piped = render("timeline", report, "table").splitlines()
    narrow = render("timeline", report, "table", View(width=160)).splitlines()
    rows = [line for line in narrow if re.match(r"\d+ ", line)]
    assert rows and all(len(line) <= 160 for line in [narrow[0], *rows])
    assert any("…" in line for line in rows)
    # the evidence columns stay whole: every position and pod name of the piped table is there
    for columns in ("leaderelection.go:257", "virt-controller-9zbmkjgqb8-xvvbf", "vm.go:1341"):
        assert sum(columns in line for line in rows) == sum(columns in line for line in piped)
    whole = "STARTING controllers with following threads : node 3, vmi 10, replicaset 3, vm 3, "
    assert any(whole + "migration 3, evacuation 3, disruptionBudget 3" in line for line in piped)
    assert not any("…" in line for line in piped if re.match(r"\d+ ", line))


def test_a_table_that_fits_is_not_cut():
    report = _assessed("always-restart", "default", "testvm")
    assert render("timeline", report, "table", View(width=10_000)) == render(
        "timeline", report, "table"
    )


def test_the_width_is_the_terminals_and_a_pipe_has_none(monkeypatch):
    monkeypatch.setenv("COLUMNS", "97")
    assert detect(stream=_Terminal()).width == 97
    assert detect(stream=io.StringIO()).width is None


# -- colour ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "tty", "no_color", "coloured"),
    [
        ("auto", True, "", True),
        ("auto", False, "", False),  # piped: never
        ("auto", True, "1", False),  # NO_COLOR, any non-empty value
        ("always", False, "1", True),  # the command line wins over the environment
        ("never", True, "", False),
    ],
)
def test_colour_only_where_it_is_wanted(monkeypatch, flag, tty, no_color, coloured):
    monkeypatch.setenv("NO_COLOR", no_color)
    stream = _Terminal() if tty else io.StringIO()
    assert detect(flag, stream=stream).color is coloured


def test_rows_are_coloured_by_their_verdict():
    report = _assessed("fault-phase-regression", "default", "api-server")
    text = render("timeline", report, "table", View(color=True))
    lines = text.splitlines()
    assert lines[0].startswith(BOLD)  # the header
    assert any(line.startswith(RED) and "✗ " in line for line in lines)
    assert any(line.startswith(GREEN) and "✓ " in line for line in lines)
    uncoloured = [line for line in lines if not line.startswith("\x1b")]
    assert all("✗" not in line for line in uncoloured)
    assert SGR.sub("", text) == render("timeline", report, "table")


def test_colour_never_lets_the_evidence_reach_the_terminal(tmp_path, capsys):
    root = _hostile_sample(tmp_path)
    code, out, _ = run_cli(
        capsys, "timeline", "default/testvm", "--bundle", str(root), "--color", "always"
    )
    assert code == 0 and SGR.search(out)
    assert not any(c in SGR.sub("", out) for c in RAW_CONTROLS)


def test_no_colour_when_piped_and_colour_when_forced(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    bundle = str(SAMPLES / "fault-phase-regression")
    _, piped, _ = run_cli(capsys, "check", "-A", "--bundle", bundle)
    assert "\x1b" not in piped
    code, forced, _ = run_cli(capsys, "check", "-A", "--bundle", bundle, "--color", "always")
    assert code == 3
    (row,) = [line for line in forced.splitlines() if "default/api-server" in line][:1]
    assert row.startswith(RED)


# -- check on a fleet ------------------------------------------------------------------------


def _fleet(clean_vms: int, open_vms: int = 0):
    """A real violating VM among ``clean_vms`` copies of a real VM whose every step is
    explained and ``open_vms`` copies of one with open questions only (a Halted VM with no
    lines), each under its own name."""
    violating = _check("fault-phase-regression")
    sample = {vm.key[1]: vm for vm in _check("always-restart").vms}
    vms = [replace(sample["testvm"], key=("fleet", f"vm-{i:05d}")) for i in range(clean_vms)]
    vms += [replace(sample["other-vm"], key=("idle", f"vm-{i:05d}")) for i in range(open_vms)]
    return replace(violating, vms=[*vms, *violating.vms])


def test_check_on_five_thousand_vms_shows_the_violation_not_the_clean_rows():
    report = _fleet(5000)
    lines = render("check", report, "table").splitlines()
    assert len(lines) < 40
    assert lines[0].startswith("VM ") and lines[1].startswith("default/api-server ")
    assert not any(line.startswith("fleet/") for line in lines)
    assert any(line.startswith("✗ ") for line in lines)
    assert "5000 VMs not listed: every step explained (-o wide lists every VM)" in lines
    assert lines[-1].startswith("5001 VMs in all namespaces") and "1 violation," in lines[-1]


def test_wide_lists_every_vm_violations_first():
    report = _fleet(3)
    lines = render("check", report, "wide").splitlines()
    assert lines[0].split()[-2:] == ["EXPLAINED", "FINDINGS"]
    names = [line.split()[0] for line in lines[1:5]]
    assert names == ["default/api-server", "fleet/vm-00000", "fleet/vm-00001", "fleet/vm-00002"]
    assert "✗ KV-" in lines[1] and lines[2].split()[-1] == "-"
    assert not any("not listed" in line for line in lines)


def test_one_vm_asked_for_is_listed_even_when_clean(capsys):
    bundle = str(SAMPLES / "always-restart")
    code, out, _ = run_cli(capsys, "check", "default/testvm", "--bundle", bundle)
    assert code == 0 and out.splitlines()[1].startswith("default/testvm ")
    assert out.splitlines()[-1].startswith("1 VM in VirtualMachine default/testvm")


def test_no_headers_drops_only_the_header_line(capsys):
    bundle = str(SAMPLES / "always-restart")
    _, with_headers, _ = run_cli(capsys, "timeline", "default/testvm", "-b", bundle)
    _, without, _ = run_cli(capsys, "timeline", "default/testvm", "-b", bundle, "--no-headers")
    assert with_headers.splitlines()[0].startswith("#    TIME (UTC)")
    assert without.splitlines() == with_headers.splitlines()[1:]


def test_on_a_terminal_the_command_fits_its_width_in_colour(capsys, monkeypatch):
    """The whole path: stdout a terminal of 200 columns (COLUMNS), NO_COLOR unset; the term
    table is 208 wide piped."""
    monkeypatch.setattr("kvtrace.render.terminal._isatty", lambda stream: True)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NO_COLOR", raising=False)
    overhead = SAMPLES / "overhead"
    args = ["--pod-file", str(overhead / "vm-dedicated-pod.yaml")]
    args += ["--vmi-file", str(overhead / "vm-dedicated-vmi.yaml")]
    args += ["--kubevirt-file", str(overhead / "kubevirt.yaml")]
    code, out, _ = run_cli(capsys, "verify-overhead", *args)
    plain = SGR.sub("", out).splitlines()
    terms = plain[plain.index(next(line for line in plain if line.startswith("TERM "))) :][:23]
    assert code == 0 and all(len(line) <= 200 for line in terms)
    assert any("…" in line for line in terms)
    assert any(line.endswith("v1.2.0:services/renderresources.go:307 (GetMemoryOverhead)")
               for line in terms)  # fmt: skip
    assert GREEN in out and BOLD in out
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run_cli(capsys, "verify-overhead", *args)
    assert "\x1b[" not in out and SGR.sub("", out) == out
    monkeypatch.setattr("kvtrace.render.terminal._isatty", lambda stream: False)
    _, piped, _ = run_cli(capsys, "verify-overhead", *args)
    lines = piped.splitlines()
    whole = lines[lines.index(next(line for line in lines if line.startswith("TERM "))) :][:23]
    assert max(len(line) for line in whole) > 200 and not any("…" in line for line in whole)


def test_many_vms_with_open_questions_only_are_counted_by_rule():
    report = _fleet(100, open_vms=30)
    lines = render("check", report, "table").splitlines()
    assert [line.split()[0] for line in lines[1:2]] == ["default/api-server"]
    assert not any(line.startswith(("idle/", "fleet/")) for line in lines)
    (questions,) = [line for line in lines if line.startswith("? 30 VMs with open questions")]
    assert "(30 VMs)" in questions and "KV-" in questions
    assert "100 VMs not listed: every step explained (-o wide lists every VM)" in lines
    few = render("check", _fleet(100, open_vms=3), "table").splitlines()
    assert sum(line.startswith("idle/") for line in few) == 3
    assert not any(line.startswith("? ") for line in few)


def test_the_rules_give_up_their_position_lists_before_their_sentences():
    from kvtrace.render.rules_shape import rule_rows

    lines = render("rules", None, "table", View(width=150)).splitlines()
    assert max(len(line) for line in lines) <= 150
    sentences = {row[4] for row in rule_rows()}
    short = {s for s in sentences if len(s) <= 150 - 57 - 2}  # what fits beside the first columns
    assert short and all(any(line.endswith(s) for line in lines) for s in short)
    assert render("rules", None, "table") == render("rules", None, "table", View(width=10_000))


def test_wide_on_a_terminal_cuts_the_message_and_the_reason_never_the_evidence():
    report = _assessed("fault-delete-create-one-reconcile", "default", "cache-node")
    piped = render("timeline", report, "wide").splitlines()
    narrow = render("timeline", report, "wide", View(width=220)).splitlines()
    assert max(map(len, piped)) > 700 and max(map(len, narrow)) < 300
    evidence = [r.evidence for r in report.timeline.rows]
    assert all(any(line.endswith(str(e)) for line in narrow) for e in evidence if str(e))
