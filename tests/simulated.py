"""Run kvtrace over histories from the simulator (kvsim): write the capture as a bundle, apply
what can happen to evidence on its way to an operator, check every VM."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

from kvsim.bundle import write_bundle
from kvsim.cluster import Capture
from kvsim.histories import History
from kvtrace.check.report import CheckReport, Selection
from kvtrace.check.run import run_check
from kvtrace.errors import NotFoundError
from kvtrace.sources.opener import open_evidence

Mutation = Callable[[Path, random.Random], list[str]]  # bundle dir → extra --log files


def bundle_of(history: History, root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    return write_bundle(history.capture(), root)


def check_bundle(root: Path, logs: list[str] | None = None) -> CheckReport | None:
    try:
        with open_evidence(str(root), logs or []) as evidence:
            return run_check(evidence, Selection(None))
    except NotFoundError:
        return None  # no VM left to check (every one deleted before the capture)


def violations(report: CheckReport | None) -> list[tuple[str, str, str]]:
    if report is None:
        return []
    return [(f"{vm.key[0]}/{vm.key[1]}", v.rule, v.why) for vm, v in report.violations()]


def capture_of(history: History) -> Capture:
    return history.capture()
