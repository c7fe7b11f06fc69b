"""Run kvtrace over histories from the simulator (kvsim): write the capture as a bundle, apply
what happens to evidence on its way to an operator, and check every VM."""

from __future__ import annotations

import copy
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kvsim.bundle import write_bundle
from kvsim.cluster import Capture
from kvsim.histories import History
from kvsim.logs import ContainerLog
from kvtrace.check.report import CheckReport, Selection
from kvtrace.check.run import run_check
from kvtrace.errors import NotFoundError
from kvtrace.sources.opener import open_evidence

DAMAGE = ("none", "logs-only", "cut", "lost-lines", "given-twice", "cut-and-lost")


@dataclass
class Evidence:
    """A bundle directory, extra ``--log`` files, and whether the bundle itself is read."""

    root: Path
    logs: list[str] = field(default_factory=list)
    with_bundle: bool = True
    damage: str = "none"


def capture_of(history: History) -> Capture:
    return history.capture()


def damaged(capture: Capture, damage: str, rng: random.Random) -> tuple[Capture, list[ContainerLog]]:
    """The capture with ``damage`` done to its logs, and logs given a second time."""
    changed = copy.copy(capture)
    changed.logs = [(copy.copy(log), instance) for log, instance in capture.logs]
    extra: list[ContainerLog] = []
    for log, _ in changed.logs:
        log.lines = list(log.lines)
        if damage in ("cut", "cut-and-lost") and log.lines:
            cut = rng.choice(log.lines).at
            log.lines = [line for line in log.lines if line.at >= cut]
        if damage in ("lost-lines", "cut-and-lost"):
            rate = rng.uniform(0.01, 0.08)
            log.lines = [line for line in log.lines if rng.random() >= rate]
        if damage == "given-twice" and log.lines:
            copy_of = copy.copy(log)
            start = rng.randrange(len(log.lines))
            copy_of.lines = log.lines[start:]
            copy_of.seed = f"{log.seed}/again"
            extra.append(copy_of)
    return changed, extra


def evidence_for(history: History, root: Path, damage: str, seed: int) -> Evidence:
    """Write the (damaged) capture; logs-only evidence is every log file given with --log."""
    shutil.rmtree(root, ignore_errors=True)
    capture, extra = damaged(capture_of(history), damage, random.Random(f"{seed}/{damage}"))
    write_bundle(capture, root)
    logs: list[str] = []
    for index, log in enumerate(extra):
        path = root.parent / f"{root.name}-again-{index}.log"
        path.write_text(log.render(), encoding="utf-8")
        logs.append(str(path))
    if damage == "logs-only":
        return Evidence(root, sorted(str(p) for p in root.rglob("*.log")), False, damage)
    return Evidence(root, logs, True, damage)


def check(evidence: Evidence) -> CheckReport | None:
    bundle = str(evidence.root) if evidence.with_bundle else None
    try:
        with open_evidence(bundle, evidence.logs) as opened:
            return run_check(opened, Selection(None))
    except NotFoundError:
        return None  # no VM left to check (every one deleted before the capture)


def bundle_of(history: History, root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    return write_bundle(capture_of(history), root)


def check_bundle(root: Path, logs: list[str] | None = None) -> CheckReport | None:
    return check(Evidence(root, logs or []))


def violations(report: CheckReport | None) -> list[tuple[str, str, str]]:
    if report is None:
        return []
    return [(f"{vm.key[0]}/{vm.key[1]}", v.rule, v.why) for vm, v in report.violations()]


def findings(report: CheckReport | None, rule: str) -> set[str]:
    """The statuses ``rule`` gave across every VM of the report."""
    if report is None:
        return set()
    return {v.status for vm in report.vms for v in vm.assessment.verdicts if v.rule == rule}
