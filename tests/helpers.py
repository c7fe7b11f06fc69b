"""Helpers shared by test modules: parse constructed lines, run the CLI in-process."""

from __future__ import annotations

import pytest

from kvtrace.cli import run
from parsers.logstream import LogParser
from parsers.records import LineTally, LogRecord, SourceInfo


def parse_lines(
    lines: list[str], source_id: str = "fixture.log", **options: object
) -> tuple[list[LogRecord], LineTally]:
    """Parse constructed lines; every line must be accounted for, and no bug swallowed."""
    parser = LogParser(SourceInfo(source_id), **options)  # type: ignore[arg-type]
    records = list(parser.parse(line.encode() + b"\n" for line in lines))
    assert parser.tally.lines() == len(lines)
    assert parser.internal_errors == []
    return records, parser.tally


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kvtrace ARGS`` in this process: exit code, stdout, stderr."""
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err
