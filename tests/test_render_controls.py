"""Text from the evidence reaches no terminal and no spreadsheet as a command
(kvtrace/render/controls.py): control sequences are written as visible escapes in the text
outputs, and CSV cells a spreadsheet would evaluate are neutralised."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import run_cli

SAMPLE = ROOT / "sample-logs" / "always-restart"


# OSC 52 (clipboard), OSC 8 (hyperlink), DCS, a C1 CSI, BEL, a bidi override, as JSON escapes
HOSTILE = (
    r"\u001b]52;c;cm0gLXJmIH4=\u0007 \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\ "
    r"\u001bP1$r\u001b\\ \u009b31m \u202eevil"
)
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def _hostile_sample(tmp_path: Path) -> Path:
    """always-restart with log text a stranger wrote: control sequences after a message."""
    root = tmp_path / "bundle"
    shutil.copytree(SAMPLE, root)
    [log] = [p for p in root.rglob("current.log") if "Starting VM due" in p.read_text()]
    text = log.read_text()
    marker = '"msg":"Starting VM due to runStrategy: Always'
    log.write_text(text.replace(marker, f'"msg":"=HYPERLINK(1) {HOSTILE}', 1))
    return root


@pytest.mark.parametrize("output", ["table", "wide", "csv"])
def test_control_sequences_in_evidence_reach_no_terminal(tmp_path, capsys, output):
    root = _hostile_sample(tmp_path)
    code, out, err = run_cli(
        capsys, "timeline", "default/testvm", "--bundle", str(root), "-o", output
    )
    assert code in (0, 3), err
    assert "HYPERLINK" in out, "the hostile line is in the timeline"
    assert not [c for c in RAW_CONTROLS if c in out]
    assert "\\x1b]52;c;" in out and "\\x9b31m" in out and "\\u202eevil" in out
    if output == "csv":
        [row] = [line for line in out.splitlines() if "HYPERLINK" in line]
        assert ",'=HYPERLINK(1)" in row


def test_csv_neutralises_formulas_but_keeps_numbers():
    from kvtrace.render.controls import csv_cell

    assert [csv_cell(v) for v in ("=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx")] == [
        "'=1+1",
        "'+cmd",
        "'-2+3",
        "'@SUM(A1)",
        "'\\x09x",
    ]
    assert [csv_cell(v) for v in ("+0.006452", "-1", "1e3", "vm.go:1032")] == [
        "+0.006452",
        "-1",
        "1e3",
        "vm.go:1032",
    ]


def test_an_error_naming_hostile_text_prints_it_escaped(tmp_path, capsys):
    missing = tmp_path / "no\x1b]52;c;eA==\x07such"
    code, _, err = run_cli(capsys, "timeline", "default/testvm", "--log", str(missing))
    assert code != 0 and "\x1b" not in err and "\x07" not in err
    assert "no\\x1b]52;c;eA==\\x07such" in err
