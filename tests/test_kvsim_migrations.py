"""kvsim's migration, evacuation and node controllers against what v1.9.0's source does
(pkg/virt-controller/watch/migration/migration.go, drain/evacuation/evacuation.go,
node/node.go at v1.9.0): phases in order, one target pod per attempt, a VMI that changes node
only through a successful migration, the lines printed at their v1.9.0 positions, and one
output per seed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from kvsim import timefmt
from kvsim.apiserver import Obj, Watch
from kvsim.bundle import write_bundle
from kvsim.cluster import Capture
from kvsim.histories import History
from kvsim.kernel import SECOND, Host
from kvsim.migration_histories import (
    MIGRATION_FAULTS,
    MIGRATION_HISTORIES,
    drain,
    migrations,
    node_failure,
    with_migration_fault,
)

ORDER = ("Pending", "Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running")
JOB_LABEL = "kubevirt.io/migrationJobUID"
NS = r"[a-z0-9-]+/[a-z0-9-]+"
# pos -> (level, message) of every line the three controllers print at default verbosity on
# the paths kvsim takes, from the v1.9.0 source
CATALOG: dict[str, tuple[str, str]] = {
    "migration.go:317": ("info", rf"reenqueuing Migration {NS}"),
    "migration.go:574": ("error", r"Unable to migrate vmi because vmi is shutdown\."),
    "migration.go:595": ("error", rf"target pod {NS} shutdown during migration"),
    "migration.go:605": ("error", r"target pod disappeared during migration"),
    "migration.go:612": ("error", r"vmi migration state cleared during migration"),
    "migration.go:621": (
        "error",
        r"vmi's migration state was taken over by another migration object",
    ),
    "migration.go:630": ("error", rf"VMI {NS} reported migration failed"),
    "migration.go:747": (
        "error",
        r"Migration object ont eligible for migration because another job is in progress",
    ),
    "migration.go:1107": ("error", r"vmi in migration backoff, re-enqueueing after [0-9.ms]+"),
    "migration.go:1146": (
        "error",
        rf"Failed to patch VMI status to indicate migration {NS} failed\.",
    ),
    "migration.go:1150": (
        "info",
        rf"Marked Migration {NS} failed on vmi due to target pod disappearing before migration "
        r"kicked off\.",
    ),
    "migration.go:1170": (
        "info",
        r"Deleted pending migration target pod with uuid [0-9a-f-]+ for migration \S+ with uuid "
        rf"[0-9a-f-]+ with reason \[migration canceled and pod {NS} is deleted\]",
    ),
    "migration.go:1290": ("info", rf"Handed off migration {NS} to target virt-handler\."),
    "migration.go:1355": (
        "info",
        r"Waiting to schedule target pod for migration because there are already multiple pods "
        rf"running for vmi {NS}",
    ),
    "migration.go:1370": (
        "info",
        rf"Waiting to schedule target pod for vmi \[{NS}\] migration because total running "
        r"parallel migration count \[\d+\] is currently at the global cluster limit\.",
    ),
    "migration.go:1383": (
        "info",
        rf"Waiting to schedule target pod for vmi \[{NS}\] migration because total running "
        r"parallel outbound migrations on target node \[\d+\] has hit outbound migrations per "
        r"node limit\.",
    ),
    "migration.go:1544": (
        "info",
        r"Deleted pending migration target pod with uuid [0-9a-f-]+ for migration \S+ with uuid "
        rf"[0-9a-f-]+ with reason \[(unschedulable|pending) pod {NS} timeout period exceeded\]",
    ),
    "migration.go:1740": (
        "warning",
        rf"Migration target pod for VMI \[{NS}\] is currently unschedulable\.",
    ),
    "migration.go:2505": (
        "info",
        r"Node [a-z0-9-]+ is suitable to run vmi [a-z0-9-]+ host model cpu mode \(more nodes may "
        r"fit as well\)",
    ),
    "migration.go:2514": (
        "warning",
        r"Migration cannot proceed since no node is suitable to run the required CPU model / "
        r"required features: map\[.*\]",
    ),
    "migration.go:2295": ("info", rf"error encountered when garbage collecting pod object {NS}"),
    "migration.go:2307": (
        "info",
        rf"error encountered when garbage collecting migration object {NS}",
    ),
    "evacuation.go:287": ("info", r"reenqueuing VirtualMachineInstance [a-z0-9-]+"),
    "evacuation.go:379": (
        "info",
        r"node: [a-z0-9-]+, migrations: \d+, candidates: (\d+), selected: \1",
    ),
    "node.go:158": ("info", r"reenqueuing node [a-z0-9-]+"),
    "node.go:278": (
        "info",
        r"Moving vmi [a-z0-9-]+ in namespace [a-z0-9-]+ on unresponsive node to failed state",
    ),
    "node.go:287": ("error", r"Failed to move vmi \S+ in namespace \S+ to final state"),
}
OBJECT_LINES = {  # the object each line attaches: VMIM, VMI or Node (node.go:278 the node)
    "migration.go:630": "VirtualMachineInstanceMigration",
    "migration.go:605": "VirtualMachineInstanceMigration",
    "migration.go:1740": "VirtualMachineInstanceMigration",
    "migration.go:1290": "VirtualMachineInstance",
    "migration.go:1544": "VirtualMachineInstance",
    "migration.go:1107": "VirtualMachineInstance",
    "migration.go:2505": "VirtualMachineInstance",
    "node.go:278": "Node",
}


class Recorder:
    """Every VMI and VMIM version the API server writes, as a watch with no lag sees it."""

    def __init__(self, history: History) -> None:
        self.vmis: list[Obj] = []
        self.vmims: list[Obj] = []
        watch = Watch(
            {"VirtualMachineInstance", "VirtualMachineInstanceMigration"},
            Host("test-recorder"),
            self._seen,
            lambda: 0,
        )
        history.cluster.api.watch(watch)

    def _seen(self, event: str, obj: Obj) -> None:
        (self.vmis if obj["kind"] == "VirtualMachineInstance" else self.vmims).append(obj)


def run(history: History) -> tuple[Capture, Recorder]:
    recorder = Recorder(history)
    return history.capture(), recorder


def lines(capture: Capture) -> Iterator[dict[str, Any]]:
    for log, _ in capture.logs:
        for body in log.bodies().splitlines():
            if body.startswith("{"):
                yield json.loads(body)


def migration_lines(capture: Capture) -> list[dict[str, Any]]:
    files = ("migration.go", "evacuation.go", "node.go")
    return [
        line
        for line in lines(capture)
        if str(line.get("pos", "")).split(":")[0] in files and "Starting" not in line["msg"]
    ]


def all_histories() -> Iterator[tuple[str, History]]:
    for kind, make in MIGRATION_HISTORIES.items():
        for seed in range(3):
            yield f"{kind}-{seed}", make(seed)


HISTORIES = dict(all_histories())


@pytest.fixture(scope="module", params=sorted(HISTORIES))
def recorded(request: pytest.FixtureRequest) -> tuple[Capture, Recorder]:
    return run(HISTORIES[request.param])


def test_phases_are_reached_in_order_once_each(recorded: tuple[Capture, Recorder]) -> None:
    """processMigrationPhase moves one step per reconcile (migration.go:716-856) and every phase
    is recorded once (controller.go:406-421)."""
    capture, _ = recorded
    for vmim in capture.objects["VirtualMachineInstanceMigration"]:
        phases = [s["phase"] for s in vmim["status"].get("phaseTransitionTimestamps", [])]
        assert len(phases) == len(set(phases))
        body = [p for p in phases if p not in ("Succeeded", "Failed")]
        assert body == list(ORDER[: len(body)])
        if "Succeeded" in phases:
            assert phases == [*ORDER, "Succeeded"]
        assert phases[-1:] == [vmim["status"]["phase"]] or not phases


def test_one_target_pod_per_attempt(recorded: tuple[Capture, Recorder]) -> None:
    """createTargetPod runs once per migration (migration.go:938-1045): one pod per job UID."""
    capture, _ = recorded
    per_job: dict[str, int] = {}
    for pod in capture.objects["Pod"]:
        job = (pod["metadata"].get("labels") or {}).get(JOB_LABEL)
        if job:
            per_job[job] = per_job.get(job, 0) + 1
    assert all(count == 1 for count in per_job.values()), per_job


def node_moves(recorder: Recorder) -> list[tuple[str, str, str]]:
    """(VMI uid, from node, to node) for every change of a VMI's ``status.nodeName``."""
    last: dict[str, str] = {}
    moves = []
    for vmi in recorder.vmis:
        uid, node = vmi["metadata"]["uid"], vmi.get("status", {}).get("nodeName", "")
        if last.get(uid) and node and node != last[uid]:
            moves.append((uid, last[uid], node))
        if node:
            last[uid] = node
    return moves


def succeeded_targets(recorder: Recorder) -> set[tuple[str, str]]:
    """(source node, target node) of every migration that reached Succeeded."""
    done = set()
    for vmim in recorder.vmims:
        state = vmim.get("status", {}).get("migrationState") or {}
        if vmim.get("status", {}).get("phase") == "Succeeded" and state.get("targetNode"):
            done.add((str(state.get("sourceNode")), str(state["targetNode"])))
    return done


def test_node_changes_only_through_a_successful_migration(
    recorded: tuple[Capture, Recorder],
) -> None:
    """Only the target virt-handler's ackMigrationCompletion moves status.nodeName
    (migration-target.go:289-317), and the migration then reaches Succeeded."""
    _, recorder = recorded
    done = succeeded_targets(recorder)
    for _, source, target in node_moves(recorder):
        assert (source, target) in done


def test_printed_lines_are_v190_call_sites(recorded: tuple[Capture, Recorder]) -> None:
    capture, _ = recorded
    for line in migration_lines(capture):
        level, pattern = CATALOG[line["pos"]]
        assert line["level"] == level, line
        assert re.fullmatch(pattern, line["msg"]), line


def test_lines_attach_the_object_v190_attaches(recorded: tuple[Capture, Recorder]) -> None:
    capture, _ = recorded
    names = {
        kind: {o["metadata"]["name"] for o in capture.objects[kind]}
        for kind in ("VirtualMachineInstanceMigration", "VirtualMachineInstance", "Node")
    }
    for line in migration_lines(capture):
        kind = OBJECT_LINES.get(line["pos"])
        if kind is None:
            continue
        assert line["kind"] == ""
        if kind == "Node":
            assert line["name"].startswith("node-") and "namespace" not in line
        elif kind == "VirtualMachineInstanceMigration":
            assert line["name"] in names[kind] or line["name"].startswith("kubevirt-")


def test_a_clean_migration_prints_only_the_hand_off() -> None:
    """A successful migration prints the hand-off line (migration.go:1290), and the conflict of
    the reconcile that writes the final status and then the finalizer with the old
    resourceVersion (migration.go:662-673)."""
    capture, _ = run(migrations(0))
    vmim = next(
        m
        for m in capture.objects["VirtualMachineInstanceMigration"]
        if m["status"]["phase"] == "Succeeded"
    )
    name = vmim["metadata"]["name"]
    mine = [line for line in migration_lines(capture) if name in line["msg"]]
    assert mine[0]["pos"] == "migration.go:1290"
    assert {line["pos"] for line in mine} <= {"migration.go:1290", "migration.go:317"}
    assert vmim["metadata"].get("finalizers") in (None, [])
    assert vmim["status"]["migrationState"]["completed"] is True


@pytest.mark.parametrize("seed", range(3))
def test_migrations_fail_on_the_nodes_and_the_vmi_stays(seed: int) -> None:
    """A failure the source virt-handler reports (migration-source.go:207-214) fails the
    migration (migration.go:622-631); the VMI keeps its node and the target pod ends."""
    capture, recorder = run(migrations(seed))
    failed = [
        m
        for m in capture.objects["VirtualMachineInstanceMigration"]
        if "Running" in [s["phase"] for s in m["status"]["phaseTransitionTimestamps"]]
        and m["status"]["phase"] == "Failed"
    ]
    assert failed
    printed = migration_lines(capture)
    assert any(line["pos"] == "migration.go:630" for line in printed)
    for vmim in failed:
        state = vmim["status"]["migrationState"]
        assert state["failed"] is True
        pods = [p for p in capture.objects["Pod"] if p["metadata"]["name"] == state["targetPod"]]
        assert all(p["status"]["phase"] == "Succeeded" for p in pods)
        assert (state["sourceNode"], state["targetNode"]) not in succeeded_targets(recorder) or any(
            (state["sourceNode"], state["targetNode"]) == move[1:] for move in node_moves(recorder)
        )


@pytest.mark.parametrize("seed", range(3))
def test_a_migration_deleted_before_hand_off_deletes_its_target_and_goes(seed: int) -> None:
    """handlePreHandoffMigrationCancel (migration.go:1156-1173), then Failed with the Event
    ``Migration failed due to being canceled`` (575-588) and, once final, the finalizer drops."""
    capture, recorder = run(migrations(seed))
    cancelled = [a.target.split("/")[1] for a in capture.actions if a.what == "kubectl delete vmim"]
    assert len(cancelled) == 1
    printed = [line for line in migration_lines(capture) if line["pos"] == "migration.go:1170"]
    assert len(printed) == 1 and cancelled[0] in printed[0]["msg"]
    names = {m["metadata"]["name"] for m in capture.objects["VirtualMachineInstanceMigration"]}
    assert cancelled[0] not in names
    last = [m for m in recorder.vmims if m["metadata"]["name"] == cancelled[0]][-1]
    assert last["status"]["phase"] == "Failed"
    assert any(c["type"] == "migrationAbortRequested" for c in last["status"]["conditions"])
    reasons = {
        e["message"]
        for e in capture.objects["Event"]
        if e["involvedObject"]["name"] == cancelled[0]
    }
    assert "Migration failed due to being canceled" in reasons


def test_unschedulable_target_is_deleted_after_300_seconds() -> None:
    """handlePendingPodTimeout (migration.go:1717-1756, timeout migration.go:86)."""
    capture, _ = run(migrations(1))
    failed = [
        m
        for m in capture.objects["VirtualMachineInstanceMigration"]
        if [s["phase"] for s in m["status"]["phaseTransitionTimestamps"]]
        == ["Pending", "Scheduling", "Failed"]
    ]
    assert failed
    printed = migration_lines(capture)
    warnings = [line for line in printed if line["pos"] == "migration.go:1740"]
    deleted = [line for line in printed if line["pos"] == "migration.go:1544"]
    assert warnings and deleted and "unschedulable pod" in deleted[0]["msg"]
    from kvsim import timefmt

    waited = timefmt.from_iso(deleted[0]["timestamp"]) - timefmt.from_iso(warnings[0]["timestamp"])
    assert 290_000_000 <= waited <= 301_000_000
    assert any(line["msg"] == "target pod disappeared during migration" for line in printed)


def test_drain_retries_after_a_failure_and_moves_the_vmi() -> None:
    """The evacuation controller creates one migration per marked VMI (evacuation.go:358-410)
    and, while the VMI is still marked on its node, another once the first has failed and the
    VMI has one active pod again (its next wake-up, often a heartbeat's Node update)."""
    capture, recorder = run(drain(0))
    mine = sorted(
        (
            m
            for m in capture.objects["VirtualMachineInstanceMigration"]
            if m["spec"]["vmiName"] == "vm-0"
        ),
        key=lambda m: m["metadata"]["creationTimestamp"],
    )
    assert [m["status"]["phase"] for m in mine] == ["Failed", "Succeeded"]
    assert all(m["metadata"]["generateName"] == "kubevirt-evacuation-" for m in mine)
    failed_at = mine[0]["status"]["phaseTransitionTimestamps"][-1]["phaseTransitionTimestamp"]
    assert mine[1]["metadata"]["creationTimestamp"] >= failed_at
    printed = migration_lines(capture)
    assert any(line["pos"] == "evacuation.go:379" for line in printed)
    vmi = next(
        v for v in capture.objects["VirtualMachineInstance"] if v["metadata"]["name"] == "vm-0"
    )
    assert "evacuationNodeName" not in vmi["status"]
    assert len(node_moves(recorder)) >= 1


def test_node_failure_fails_the_vmi_and_the_vm_restarts() -> None:
    """isNodeUnresponsive after 5 min (node.go:57, 451-466); the VMI is patched Failed with
    reason NodeUnresponsive (node.go:276-292)."""
    capture, recorder = run(node_failure(0))
    moved = [line for line in migration_lines(capture) if line["pos"] == "node.go:278"]
    assert len(moved) == 1 and "Moving vmi vm-0 in namespace default" in moved[0]["msg"]
    failed = [
        v
        for v in recorder.vmis
        if v["metadata"]["name"] == "vm-0" and v["status"].get("reason") == "NodeUnresponsive"
    ]
    assert failed and failed[-1]["status"]["phase"] == "Failed"
    old_uid = failed[-1]["metadata"]["uid"]
    now = next(
        v for v in capture.objects["VirtualMachineInstance"] if v["metadata"]["name"] == "vm-0"
    )
    assert now["metadata"]["uid"] != old_uid
    assert now["status"]["nodeName"] != failed[-1]["status"]["nodeName"]


def test_faults_break_what_the_code_guarantees() -> None:
    capture, recorder = run(with_migration_fault(0, "second-target-pod"))
    jobs = [(p["metadata"].get("labels") or {}).get(JOB_LABEL) for p in capture.objects["Pod"]]
    assert max(jobs.count(job) for job in jobs if job) == 2
    _, recorder = run(with_migration_fault(0, "node-change-without-migration"))
    done = succeeded_targets(recorder)
    assert any((source, target) not in done for _, source, target in node_moves(recorder))
    capture, _ = run(with_migration_fault(0, "evacuate-forbidden"))
    vmims = capture.objects["VirtualMachineInstanceMigration"]
    assert any(m["spec"]["vmiName"] == "vm-0" for m in vmims)
    assert set(MIGRATION_FAULTS) == {
        "second-target-pod",
        "node-change-without-migration",
        "evacuate-forbidden",
        "target-pod-left",
    }


def test_target_pod_left_keeps_a_pod_past_its_timeout_and_warns_again() -> None:
    """The fault: past the 300 s unschedulable timeout the target pod is not deleted
    (deleteTimedOutTargetPod, migration.go:1530-1547, never runs) and the warning of
    migration.go:1740 repeats; without the fault the same cordoned cluster deletes it."""
    capture, _ = run(with_migration_fault(0, "target-pod-left"))
    targets = [
        p for p in capture.objects["Pod"] if (p["metadata"].get("labels") or {}).get(JOB_LABEL)
    ]
    assert len(targets) == 1 and targets[0]["status"]["phase"] == "Pending"
    created = timefmt.from_iso(targets[0]["metadata"]["creationTimestamp"])
    warned = [
        timefmt.from_iso(line["timestamp"])
        for line in migration_lines(capture)
        if line["pos"] == "migration.go:1740"
    ]
    assert max(warned) - created > 360 * SECOND and len(warned) >= 3
    assert not [line for line in migration_lines(capture) if line["pos"] == "migration.go:1544"]


@pytest.mark.parametrize("kind", sorted(MIGRATION_HISTORIES))
def test_one_output_per_seed(kind: str) -> None:
    first, second = MIGRATION_HISTORIES[kind](4).capture(), MIGRATION_HISTORIES[kind](4).capture()
    assert [log.render() for log, _ in first.logs] == [log.render() for log, _ in second.logs]
    assert first.objects == second.objects


def test_bundles_carry_the_migrations(tmp_path: Any) -> None:
    root = write_bundle(migrations(0).capture(), tmp_path / "bundle")
    listed = json.loads((root / "objects/virtualmachineinstancemigrations.json").read_text())
    assert listed["items"] and all(
        item["apiVersion"] == "kubevirt.io/v1" for item in listed["items"]
    )
