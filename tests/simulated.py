"""Run kvtrace over histories from the simulator (kvsim): write the capture as a bundle, apply
what happens to evidence on its way to an operator, and check every VM.

Unit tests of the model tamper with one capture on purpose: a line lost, a foreign line written
through kvsim's own writer (``ContainerLog.kv``, as the VM controller prints), or an object
changed on its way to the operator. Each tamper returns a copy: the capture stays as it was."""

from __future__ import annotations

import copy
import json
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvsim.apiserver import Obj
from kvsim.bundle import write_bundle
from kvsim.cluster import Capture
from kvsim.histories import History
from kvsim.logs import Line, LoggedObject
from kvtrace.check.report import CheckReport, Selection
from kvtrace.check.run import run_check
from kvtrace.errors import NotFoundError
from kvtrace.model.engine import Assessment, assess
from kvtrace.model.version import detect
from kvtrace.sources.bundle import open_bundle
from kvtrace.sources.opener import open_evidence
from kvtrace.timeline.build import Timeline, build_timeline

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


def damaged(capture: Capture, damage: str, rng: random.Random) -> tuple[Capture, list[str]]:
    """The capture with ``damage`` done to its logs, and the texts of logs given a second time:
    the tail of a file from a random line on, as a later snapshot of the same pod holds it (the
    kubelet's prefixes included), or as ``kubectl logs`` without ``--timestamps`` prints it."""
    changed = copy.copy(capture)
    changed.logs = [(copy.copy(log), instance) for log, instance in capture.logs]
    extra: list[str] = []
    for log, _ in changed.logs:
        log.lines = list(log.lines)
        if damage in ("cut", "cut-and-lost") and log.lines:
            cut = rng.choice(log.lines).at
            log.lines = [line for line in log.lines if line.at >= cut]
        if damage in ("lost-lines", "cut-and-lost"):
            rate = rng.uniform(0.01, 0.08)
            log.lines = [line for line in log.lines if rng.random() >= rate]
        if damage == "given-twice" and log.lines:
            text = log.render() if rng.random() < 0.5 else log.bodies()
            lines = text.splitlines(keepends=True)
            extra.append("".join(lines[rng.randrange(len(lines)) :]))
    return changed, extra


def evidence_for(history: History, root: Path, damage: str, seed: int) -> Evidence:
    """Write the (damaged) capture; logs-only evidence is every log file given with --log."""
    shutil.rmtree(root, ignore_errors=True)
    capture, extra = damaged(capture_of(history), damage, random.Random(f"{seed}/{damage}"))
    write_bundle(capture, root)
    logs: list[str] = []
    for index, text in enumerate(extra):
        path = root.parent / f"{root.name}-again-{index}.log"
        path.write_text(text, encoding="utf-8")
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


# --- one VM, and captures tampered with on purpose --------------------------------------------
def assessed(
    capture: Capture, name: str, namespace: str = "default"
) -> tuple[Timeline, Assessment]:
    """The VM's timeline and the model's verdicts, read from the capture written as a bundle."""
    with tempfile.TemporaryDirectory(prefix="kvtrace-test-") as tmp:
        root = write_bundle(capture, Path(tmp) / "bundle")
        with open_bundle(root) as evidence:
            timeline = build_timeline(evidence, namespace, name)
            version = detect(evidence)
    return timeline, assess(timeline, version=version)


def statuses(assessment: Assessment, rule: str, row: int | None = None) -> set[str]:
    """The statuses ``rule`` gave (only the verdicts resting on ``row``, when given)."""
    return {
        v.status for v in assessment.verdicts if v.rule == rule and (row is None or row in v.rows)
    }


def violated_rules(assessment: Assessment) -> set[str]:
    return {v.rule for v in assessment.verdicts if v.status == "violation"}


@dataclass(frozen=True)
class Logged:
    """One line the VM controller printed with ``Object(vm)``: the log it is in, the line, and
    its JSON fields."""

    log: int  # index into Capture.logs
    line: Line
    fields: dict[str, Any]

    @property
    def msg(self) -> str:
        return str(self.fields.get("msg", ""))

    @property
    def obj(self) -> LoggedObject:
        f = self.fields
        return LoggedObject(f.get("namespace", ""), f["name"], f["uid"], f.get("kind", ""))


def vm_lines(capture: Capture, name: str, namespace: str = "default") -> list[Logged]:
    """Every vm.go line logged with the VM ``namespace/name``, in time order."""
    found = []
    for index, (log, _) in enumerate(capture.logs):
        for line in log.lines:
            if not line.body.startswith("{"):
                continue
            fields = json.loads(line.body)
            if (
                str(fields.get("pos", "")).startswith("vm.go:")
                and fields.get("name") == name
                and fields.get("namespace", "") == namespace
            ):
                found.append(Logged(index, line, fields))
    return sorted(found, key=lambda logged: logged.line.at)


def first_line(capture: Capture, name: str, starts: str, namespace: str = "default") -> Logged:
    """The first line about the VM whose msg starts with ``starts``."""
    found = [line for line in vm_lines(capture, name, namespace) if line.msg.startswith(starts)]
    assert found, f"no line about {namespace}/{name} starts with {starts!r}"
    return found[0]


def copied(capture: Capture) -> Capture:
    """A copy whose objects and log lines can be changed without touching ``capture``."""
    changed = copy.copy(capture)
    changed.objects = copy.deepcopy(capture.objects)
    changed.logs = [(copy.copy(log), instance) for log, instance in capture.logs]
    for log, _ in changed.logs:
        log.lines = list(log.lines)
    return changed


def with_vm_line(
    capture: Capture,
    beside: Logged,
    msg: str,
    pos: str,
    *,
    after_us: int = 1,
    level: str = "info",
    reason: str | None = None,
    log: int | None = None,
) -> Capture:
    """A foreign line, ``after_us`` after ``beside``, written as the VM controller writes its
    lines about the same VM, into ``beside``'s log or log ``log``."""
    changed = copied(capture)
    target = changed.logs[beside.log if log is None else log][0]
    target.kv(beside.line.at + after_us, level, msg, pos, beside.obj, reason)
    return changed


def without_lines(capture: Capture, lost: Callable[[Line], bool]) -> Capture:
    """The capture with the lines ``lost`` picks gone from every log."""
    changed = copied(capture)
    for log, _ in changed.logs:
        log.lines = [line for line in log.lines if not lost(line)]
    return changed


def without_objects(capture: Capture, kind: str) -> Capture:
    """The capture with no ``kind`` object, as a collector that did not read them."""
    changed = copied(capture)
    changed.objects[kind] = []
    return changed


def with_object(
    capture: Capture,
    kind: str,
    name: str,
    change: Callable[[Obj], None],
    namespace: str = "default",
) -> Capture:
    """The capture with ``change`` applied to its ``kind`` object ``namespace/name``."""
    changed = copied(capture)
    matching = [
        obj
        for obj in changed.objects[kind]
        if obj["metadata"]["name"] == name and obj["metadata"].get("namespace", "") == namespace
    ]
    assert matching, f"no {kind} {namespace}/{name} in the capture"
    for obj in matching:
        change(obj)
    return changed
