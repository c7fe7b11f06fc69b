"""KV-MG-06 (a failed attempt's target pod is cleaned up) never calls a violation on partial
evidence: kvsim's ``target-pod-left`` fault is caught on the whole capture, and the same
capture with what proves it cut away (the controller's later lines, its leadership, the pod's
state) is an open question, or cleaned up, never a violation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kvsim.bundle import write_bundle
from kvsim.migration_histories import migrations, with_migration_fault
from kvtrace.model.engine import assess
from kvtrace.model.version import detect
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.simulated import assessed, statuses

RULE = "KV-MG-06"
WARNING = "is currently unschedulable."
LEADER_TEXTS = ("successfully acquired lease", "STARTING controllers", "Starting ")


def fault_bundle(tmp_path: Path, seed: int = 0) -> Path:
    return write_bundle(with_migration_fault(seed, "target-pod-left").capture(), tmp_path / "b")


def verdicts(root: Path) -> set[str]:
    with open_bundle(root) as evidence:
        timeline = build_timeline(evidence, "default", "vm-0")
        version = detect(evidence)
    return {v.status for v in assess(timeline, version=version).verdicts if v.rule == RULE}


def edit_logs(root: Path, keep: Callable[[str], bool]) -> None:
    for path in (root / "logs").rglob("*.log"):
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if keep(line)))


def edit_target_pod(root: Path, change: Callable[[dict], None]) -> None:
    path = root / "objects" / "pods.json"
    document = json.loads(path.read_text())
    for pod in document["items"]:
        if "kubevirt.io/migrationJobUID" in (pod["metadata"].get("labels") or {}):
            change(pod)
    path.write_text(json.dumps(document))


def first_warning_time(root: Path) -> str:
    stamps = [
        line.split(" ", 1)[0]
        for path in (root / "logs").rglob("*.log")
        for line in path.read_text().splitlines()
        if WARNING in line
    ]
    return sorted(stamps)[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_fault_is_caught_on_the_whole_capture(tmp_path, seed):
    assert verdicts(fault_bundle(tmp_path, seed)) == {"violation"}


def test_a_cut_log_after_the_overdue_warning_is_an_open_question(tmp_path):
    """Without a later line of the replica, a crash right after the warning cannot be ruled out."""
    root = fault_bundle(tmp_path)
    created = _target_created(root)
    late = sorted(
        line.split(" ", 1)[0]
        for path in (root / "logs").rglob("*.log")
        for line in path.read_text().splitlines()
        if WARNING in line and line.split(" ", 1)[0] > _plus_seconds(created, 361)
    )[0]
    edit_logs(root, lambda line: line.split(" ", 1)[0] <= late)
    assert verdicts(root) == {"unverifiable"}


def test_unknown_leadership_is_an_open_question(tmp_path):
    root = fault_bundle(tmp_path)
    edit_logs(root, lambda line: not any(text in line for text in LEADER_TEXTS))
    assert verdicts(root) == {"unverifiable"}


def test_a_pod_being_deleted_is_no_violation(tmp_path):
    root = fault_bundle(tmp_path)
    stamp = first_warning_time(root)
    edit_target_pod(root, lambda pod: pod["metadata"].update(deletionTimestamp=stamp[:19] + "Z"))
    assert "violation" not in verdicts(root)


def test_a_longer_timeout_annotation_is_respected(tmp_path):
    """``kubevirt.io/migrationUnschedulablePodTimeoutSeconds`` (and the pending one) raise the
    deadline: the same warnings are then not past it."""
    root = fault_bundle(tmp_path)
    path = root / "objects" / "virtualmachineinstancemigrations.json"
    document = json.loads(path.read_text())
    for vmim in document["items"]:
        vmim["metadata"].setdefault("annotations", {}).update(
            {
                "kubevirt.io/migrationUnschedulablePodTimeoutSeconds": "86400",
                "kubevirt.io/migrationPendingPodTimeoutSeconds": "86400",
            }
        )
    path.write_text(json.dumps(document))
    assert "violation" not in verdicts(root)


def test_a_timed_out_target_is_cleaned_up_on_the_designed_controller():
    """migrations(seed): one migration's target stays unschedulable and is deleted at 300 s."""
    for seed in range(3):
        _, assessment = assessed(migrations(seed).capture(), "vm-0")
        assert statuses(assessment, RULE) == {"explained"}, seed


def _target_created(root: Path) -> str:
    pods = json.loads((root / "objects" / "pods.json").read_text())["items"]
    return next(
        p["metadata"]["creationTimestamp"]
        for p in pods
        if "kubevirt.io/migrationJobUID" in (p["metadata"].get("labels") or {})
    )


def _plus_seconds(stamp: str, seconds: int) -> str:
    from datetime import datetime, timedelta

    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def test_without_the_migrations_events_it_is_an_open_question(tmp_path):
    """A refused delete leaves a FailedDelete Event: with no Event of the migration from the
    warning's time on, whether the delete was tried and refused is not in the evidence."""
    root = fault_bundle(tmp_path)
    path = root / "objects" / "events.json"
    document = json.loads(path.read_text())
    document["items"] = [
        e
        for e in document["items"]
        if e["involvedObject"]["kind"] != "VirtualMachineInstanceMigration"
    ]
    path.write_text(json.dumps(document))
    manifest = json.loads((root / "manifest.json").read_text())
    for entry in manifest["collected"]:
        if entry["kind"] == "Event":
            entry["count"] = len(document["items"])
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert verdicts(root) == {"unverifiable"}
