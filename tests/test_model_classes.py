"""Ordinary histories that used to get false error-level violations, one test per class of the
issue that listed them and per case from real pastes, each built with the simulator (kvsim) and
checked as kvtrace judges it now: no violation, an open question where the evidence is partial,
and the verdict the class calls for.

Where each class is covered (tests in this file unless named otherwise):

1. VM deleted, gone or re-created under its name: test_deleted_and_recreated_vm
2. crash loop, Events naming deleted VMIs: test_crash_loop_deletes_each_incarnation_once
3. webhook rejection, then the revision's AlreadyExists: test_create_retried_after_webhook_rejection
4. spec edit outside the template: test_edit_outside_the_template_keeps_the_start_revision
5. virtctl stop and start during the start-failure backoff: test_stop_and_start_during_backoff
6. slow create and slow status update (no 1 s window): test_slow_create_and_status_update
7. the same lines given twice: test_lines_given_twice_are_one_history; two replicas' logs
   concatenated on stdin: test_two_pods_logs_concatenated_on_stdin
8. RerunOnFailure started after Succeeded: test_rerun_on_failure_restarted_after_succeeded
9. Once turned into Halted by virtctl stop: test_once_stopped_by_virtctl
10. disruptionbudget.go:344's requeue text: test_disruption_budget_requeue_is_not_the_vmi_controllers
11. delete and next start 15 ms apart (no 20 ms merge): test_delete_and_start_15ms_apart
a. an excerpt starting at an action line: test_excerpt_starting_at_a_create
b. --since/--until change only what is shown: test_window_never_changes_verdicts
c. a reversed --since/--until: test_reversed_window_is_a_usage_error
d. a duration with --log counts back from the evidence: test_duration_counts_back_from_the_evidence
e. split brain in leader history, check -A and timeline: test_split_brain_everywhere
- VMs named only by the VMI controller's requeues: test_vm_named_only_by_vmi_requeues
- hard-wrapped JSON: test_hard_wrapped_paste_is_joined_again (check), and
  test_timeline_of_a_hard_wrapped_paste (timeline); the parser's join of
  a re-wrapped object: tests/test_parsers_json.py::test_rewrapped_object_over_several_lines_is_joined
- elsewhere: an unreadable --since, tests/test_cli_timeline.py::test_bad_since_is_a_usage_error;
  the window narrowing rows, tests/test_cli_timeline.py::test_since_and_until_restrict_the_window;
  leader history's exit code on the split-brain sample, tests/test_leader_samples.py.
- a DataVolume or a migration is not a VM: test_a_datavolume_or_a_migration_is_not_a_vm (kvsim
  models neither, so their default-verbosity lines are written through kvsim's writer as
  v1.9.0 prints them); the expectations lines at verbosity 4: test_expectations_lines_reach_the_vm
"""

from __future__ import annotations

import copy
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from kvsim import timefmt
from kvsim.bundle import write_bundle
from kvsim.cluster import Capture, Cluster
from kvsim.histories import WEBHOOK_DENIED
from kvsim.kernel import MS, SECOND
from kvsim.logs import ContainerLog, LoggedObject
from kvsim.nodes import Fate
from kvtrace.check.report import CheckReport, Selection, VMCheck
from kvtrace.check.run import run_check
from kvtrace.model.verdicts import Verdict
from kvtrace.sources.opener import open_evidence
from kvtrace.timeline.rows import TimelineRow
from tests.helpers import run_cli
from tests.sample_names import sample_capture

T0 = timefmt.from_iso("2026-12-08T14:00:00Z")
MINUTE = 60 * SECOND
kvtrace = run_cli


# --- evidence ------------------------------------------------------------------------------
def bundle(capture: Capture, root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    return write_bundle(capture, root)


def report_of(root: Path | None, logs: list[Path] | None = None) -> CheckReport:
    with open_evidence(str(root) if root else None, [str(p) for p in logs or []]) as evidence:
        return run_check(evidence, Selection(None))


def vm_of(report: CheckReport, name: str) -> VMCheck:
    (found,) = [vm for vm in report.vms if vm.key == ("default", name)]
    return found


def verdicts(vm: VMCheck, rule: str) -> list[Verdict]:
    return [v for v in vm.assessment.verdicts if v.rule == rule]


def statuses(vm: VMCheck, rule: str) -> set[str]:
    return {v.status for v in verdicts(vm, rule)}


def rows(vm: VMCheck) -> list[TimelineRow]:
    assert vm.timeline is not None
    return vm.timeline.rows


def with_message(vm: VMCheck, *ids: str) -> list[int]:
    return [i for i, row in enumerate(rows(vm)) if row.message_id in ids]


def seconds(vm: VMCheck, a: int, b: int) -> float:
    return (rows(vm)[b].time.at - rows(vm)[a].time.at).total_seconds()


def no_violation(report: CheckReport) -> None:
    found = [(vm.key, v.rule, v.why, v.rows) for vm, v in report.violations()]
    assert not found, found


def log_of(capture: Capture, vm: str) -> ContainerLog:
    """The log that says most about ``vm``: the leader's."""
    logs = [log for log, _ in capture.logs]
    return max(logs, key=lambda log: sum(f'"name":"{vm}"' in line.body for line in log.lines))


def lines_of(log: ContainerLog) -> list[str]:
    """The log file as the kubelet keeps it, line by line."""
    return log.render().splitlines(keepends=True)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


# --- 1-11: the classes -------------------------------------------------------------
def test_deleted_and_recreated_vm(tmp_path):
    """vm.go:3236-3249: a VM being deleted has its VMI deleted by stopVMI without a decision
    line (vm.go:1685 alone); a VM of the same name created afterwards is another VM uid."""
    cluster = Cluster("class-1", T0)
    cluster.create_vm(T0 + 30 * SECOND, "gone")
    cluster.delete_vm(T0 + 90 * SECOND, "gone")
    cluster.create_vm(T0 + 30 * SECOND, "again")
    cluster.delete_vm(T0 + 90 * SECOND, "again")
    cluster.create_vm(T0 + 150 * SECOND, "again")
    capture = cluster.capture(T0 + 5 * MINUTE)
    assert [vm["metadata"]["name"] for vm in capture.objects["VirtualMachine"]] == ["again"]
    report = report_of(bundle(capture, tmp_path / "b"))
    no_violation(report)
    for name in ("gone", "again"):
        vm = vm_of(report, name)
        (deleted,) = with_message(vm, "vm.deleted")
        assert rows(vm)[deleted].pos == "vm.go:1685"
        assert not with_message(vm, "vm.stop", "vm.stop-halted")  # no decision line
        on_delete = [v for v in verdicts(vm, "KV-RC-02") if deleted in v.rows]
        assert [v.status for v in on_delete] == ["explained"], on_delete
        assert statuses(vm, "KV-RC-03") == {"explained"}
    assert len(with_message(vm_of(report, "again"), "vm.created")) == 2


def test_crash_loop_deletes_each_incarnation_once(tmp_path):
    """Every VMI of a crash loop is deleted once; the VM's SuccessfulDelete Events name each
    deleted VMI, so the rows before the only VMI object still get their own incarnations."""
    cluster = Cluster("class-2", T0)
    for index in range(3):
        cluster.fates[("looping", index)] = Fate("crash", 20 * SECOND)
    cluster.create_vm(T0 + 30 * SECOND, "looping")
    capture = cluster.capture(T0 + 4 * MINUTE)
    assert len(capture.objects["VirtualMachineInstance"]) == 1
    report = report_of(bundle(capture, tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "looping")
    deletes = with_message(vm, "vm.deleted")
    assert len(deletes) == 3 and vm.incarnations == 4
    assert len({rows(vm)[i].incarnation for i in deletes}) == 3
    assert [v.why for v in verdicts(vm, "KV-RC-03")] == ["one delete for this incarnation"] * 3


def test_create_retried_after_webhook_rejection(tmp_path):
    """A create the webhook rejects is retried at once; the retry's revision create collides
    with the revision the first attempt made, which the lagging informer does not show yet
    (vm.go:1726-1757, logged at vm.go:1286): no duplicate VMI create (KV-EX-01)."""
    cluster = Cluster("class-3", T0)
    for replica in cluster.replicas:
        replica.informer_lag_us = 100 * MS
    cluster.reject_vmi_creates(T0 + 20 * SECOND, "web", WEBHOOK_DENIED)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    report = report_of(bundle(cluster.capture(T0 + 2 * MINUTE), tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "web")
    (revision,) = with_message(vm, "vm.revision-failed")
    assert rows(vm)[revision].pos == "vm.go:1286"
    (on_revision,) = [v for v in verdicts(vm, "KV-EX-01") if revision in v.rows]
    assert on_revision.status == "explained" and "retried start" in on_revision.why
    assert len(with_message(vm, "vm.created")) == 1


def _dv_templates(vm: dict[str, object]) -> None:
    spec = vm["spec"]
    assert isinstance(spec, dict)
    spec["dataVolumeTemplates"] = []


def test_edit_outside_the_template_keeps_the_start_revision(tmp_path):
    """An edit outside spec.template bumps the generation and the VMI's vm-generation
    (vm.go:1438-1471); status.virtualMachineRevisionName keeps the start's (vm.go:1289)."""
    cluster = Cluster("class-4", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    cluster.edit_vm(T0 + 60 * SECOND, "web", _dv_templates, "edit spec outside the template")
    capture = cluster.capture(T0 + 2 * MINUTE)
    (vmi,) = capture.objects["VirtualMachineInstance"]
    assert vmi["metadata"]["annotations"]["kubevirt.io/vm-generation"] == "2"
    assert vmi["status"]["virtualMachineRevisionName"].endswith("-1")
    report = report_of(bundle(capture, tmp_path / "b"))
    no_violation(report)
    assert statuses(vm_of(report, "web"), "KV-SV-01") == {"explained"}


def test_stop_and_start_during_backoff(tmp_path):
    """virtctl stop makes the VM Halted, which clears status.startFailure (vm.go:1537-1551);
    the start that follows is immediate and the failure count starts again (KV-BO-01/02)."""
    cluster = Cluster("class-5", T0)
    for index in range(6):
        cluster.fates[("flaky", index)] = Fate("fail-start")
    cluster.create_vm(T0 + 30 * SECOND, "flaky")
    cluster.virtctl(T0 + 75 * SECOND, "stop", "flaky")  # inside the second wait (40-60 s)
    cluster.virtctl(T0 + 77 * SECOND, "start", "flaky")
    report = report_of(bundle(cluster.capture(T0 + 4 * MINUTE), tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "flaky")
    early = [v for v in verdicts(vm, "KV-BO-02") if v.status == "unverifiable"]
    assert early and all("user's request cleared the backoff" in v.why for v in early)
    waited = [int(rows(vm)[v.rows[0]].arg("seconds") or 0) for v in early]
    started = [seconds(vm, v.rows[0], v.rows[1]) for v in early]
    assert all(s < w for s, w in zip(started, waited, strict=True))  # started before the wait
    assert statuses(vm, "KV-BO-01") <= {"explained", "unverifiable"}


def test_slow_create_and_status_update(tmp_path):
    """startVMI makes two API calls and a status update can be slow: a create more than 1 s
    after its decision is still that decision's (KV-RC-02), a slow failed status update is
    still that reconcile's (KV-RC-04), and the VMI created under Always is no Halted create
    (KV-RS-05) though the VM is Halted at capture."""
    cluster = Cluster("class-6", T0)
    cluster.slow("VirtualMachineInstance", "create", 1500 * MS)
    cluster.slow("VirtualMachine", "update", 1200 * MS)
    cluster.create_vm(T0 + 30 * SECOND, "slow")
    cluster.set_strategy(T0 + 60 * SECOND, "slow", "Halted")
    report = report_of(bundle(cluster.capture(T0 + 2 * MINUTE), tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "slow")
    assert vm.strategy == "Halted"
    (created,) = with_message(vm, "vm.created")
    (decided,) = [v.rows[0] for v in verdicts(vm, "KV-RC-02") if created in v.rows]
    assert rows(vm)[decided].message_id == "vm.start" and seconds(vm, decided, created) > 1
    failed = with_message(vm, "vm.status-failed")
    slow = [i for i in failed if seconds(vm, decision_before(vm, i), i) > 1]
    assert slow
    assert statuses(vm, "KV-RC-04") == {"explained"}
    assert statuses(vm, "KV-RS-05") == {"explained"}


def decision_before(vm: VMCheck, index: int) -> int:
    """The last decision line before row ``index``."""
    decisions = [i for i in with_message(vm, "vm.start", "vm.stop-halted") if i < index]
    return decisions[-1]


def _crash_loop(seed: str) -> Capture:
    cluster = Cluster(seed, T0)
    for index in range(2):
        cluster.fates[("looping", index)] = Fate("crash", 20 * SECOND)
    cluster.create_vm(T0 + 30 * SECOND, "looping")
    return cluster.capture(T0 + 3 * MINUTE)


@pytest.mark.parametrize("how", ["two --log files", "concatenated on stdin"])
def test_lines_given_twice_are_one_history(capsys, monkeypatch, tmp_path, how):
    """Two overlapping snapshots of the leader's log, given as two files or concatenated on
    stdin, are one pod's lines: no second delete (KV-RC-03), no second replica acting
    (KV-LD-02), exit 0."""
    capture = _crash_loop("class-7")
    root = bundle(capture, tmp_path / "b")
    leader = log_of(capture, "looping")
    lines = lines_of(leader)
    third = len(lines) // 3
    snapshots = [lines[: 2 * third], lines[third:]]
    standby = [str(p) for p in sorted(root.rglob("*.log")) if leader.pod not in p.parts]
    args = [a for p in standby for a in ("--log", p)]
    if how == "two --log files":
        for index, snapshot in enumerate(snapshots):
            path = write_lines(tmp_path / f"snapshot-{index}.log", snapshot)
            args += ["--log", str(path)]
        code, out, _ = kvtrace(capsys, "check", "-A", *args, "-o", "json")
    else:
        feed_stdin(monkeypatch, "".join(snapshots[0] + snapshots[1]).encode())
        code, out, _ = kvtrace(capsys, "check", "-A", *args, "--log", "-", "-o", "json")
    (item,) = json.loads(out)["items"]
    assert (code, item["name"], item["violations"]) == (0, "looping", 0), item["findings"]
    assert item["incarnations"] == 3


def test_two_pods_logs_concatenated_on_stdin(capsys, monkeypatch, tmp_path):
    """``cat */current.log | kvtrace check -A --log -``: one stream holding both replicas'
    lines cannot say which replica acted; a container that acquired the lease never prints
    ``attempting to acquire`` again without exiting first, so the second one is another
    container's, and leadership is an open question, not a violation."""
    root = bundle(_crash_loop("two-pods"), tmp_path / "b")
    both = b"".join(p.read_bytes() for p in sorted(root.rglob("*.log")))
    feed_stdin(monkeypatch, both)
    code, out, _ = kvtrace(capsys, "check", "-A", "--log", "-", "-o", "json")
    (item,) = json.loads(out)["items"]
    assert (code, item["violations"]) == (0, 0)


def test_rerun_on_failure_restarted_after_succeeded(tmp_path):
    """RerunOnFailure starts again after Succeeded on a start request (virt-api's StartRequest
    for virtctl start) or when status.runStrategy differs from the spec (vm.go:1070, a switch
    away and back): an open question about the request, never a violation (KV-RS-03)."""
    cluster = Cluster("class-8", T0)
    for name in ("by-start", "by-switch"):
        cluster.fates[(name, 0)] = Fate("shutdown", 30 * SECOND)
        cluster.create_vm(T0 + 30 * SECOND, name, strategy="RerunOnFailure")
    cluster.virtctl(T0 + 100 * SECOND, "start", "by-start")
    cluster.set_strategy(T0 + 100 * SECOND, "by-switch", "Manual")
    cluster.set_strategy(T0 + 110 * SECOND, "by-switch", "RerunOnFailure")
    report = report_of(bundle(cluster.capture(T0 + 3 * MINUTE), tmp_path / "b"))
    no_violation(report)
    for name in ("by-start", "by-switch"):
        vm = vm_of(report, name)
        assert len(with_message(vm, "vm.created")) == 2
        again = [v for v in verdicts(vm, "KV-RS-03") if v.status != "explained"]
        assert [v.status for v in again] == ["unverifiable"]
        assert "start request or a strategy switch" in again[0].why


def test_once_stopped_by_virtctl(tmp_path):
    """virtctl stop turns a Once VM into Halted: later stops are Halted's (KV-RS-04)."""
    cluster = Cluster("class-9", T0)
    cluster.create_vm(T0 + 30 * SECOND, "once", strategy="Once")
    cluster.virtctl(T0 + 60 * SECOND, "stop", "once")
    cluster.virtctl(T0 + 90 * SECOND, "start", "once")
    cluster.virtctl(T0 + 120 * SECOND, "stop", "once")
    report = report_of(bundle(cluster.capture(T0 + 3 * MINUTE), tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "once")
    assert len(with_message(vm, "vm.deleted")) == 2
    assert statuses(vm, "KV-RS-04") == {"explained"}


def test_disruption_budget_requeue_is_not_the_vmi_controllers(capsys, tmp_path):
    """disruptionbudget.go:344 prints the VMI controller's requeue text when it fails to delete
    a PodDisruptionBudget an older KubeVirt made for the VMI: shown (it names the VMI), but not
    as the VMI controller's requeue, and no reconcile of the VM's is split by it."""
    cluster = Cluster("class-10", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    cluster.outage(T0 + 59 * SECOND + 500 * MS, 0, 4 * SECOND)  # the leader's API calls fail
    cluster.leftover_pdb(T0 + 60 * SECOND, "web")
    cluster.virtctl(T0 + 60 * SECOND, "restart", "web")
    root = bundle(cluster.capture(T0 + 2 * MINUTE), tmp_path / "b")
    budget = '"pos":"disruptionbudget.go:344"'
    logged = [line for p in root.rglob("*.log") for line in p.read_text().splitlines()]
    assert any(budget in line and "default/web" in line for line in logged)
    code, out, _ = kvtrace(capsys, "timeline", "default/web", "-b", str(root), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"]["model"]["violations"] == 0
    budget_rows = [i for i in doc["items"] if i["pos"] == "disruptionbudget.go:344"]
    assert budget_rows and {(i["category"], i["messageID"]) for i in budget_rows} == {("log", None)}
    ids = {i["messageID"] for i in doc["items"]}
    assert {"vm.delete-failed", "vm.requeue", "vm.deleted", "vm.created"} <= ids
    code, out, _ = kvtrace(capsys, "check", "-A", "-b", str(root))
    assert code == 0 and "0 violations" in out


def test_delete_and_start_15ms_apart(tmp_path):
    """A launcher pod force-deleted: the VMI fails, is deleted and, with no pod to wait for, is
    gone at once; the next reconcile starts its successor some 15 ms after the delete. The
    code returns after every stop (vm.go:1016), so that is two reconciles, not one."""
    cluster = Cluster("class-11-1", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    cluster.force_delete_pods(T0 + 60 * SECOND, "web")
    report = report_of(bundle(cluster.capture(T0 + 2 * MINUTE), tmp_path / "b"))
    no_violation(report)
    vm = vm_of(report, "web")
    (pair,) = verdicts(vm, "KV-RC-01")
    deleted, started = pair.rows
    assert rows(vm)[deleted].message_id == "vm.deleted"
    assert rows(vm)[started].message_id == "vm.start"
    assert 0.001 < seconds(vm, deleted, started) < 0.020
    assert pair.status == "explained"


# --- a-e: cases from real pastes -----------------------------------------------------------
def test_excerpt_starting_at_a_create(capsys, tmp_path):
    """A paste that begins at ``Started VM by creating`` (vm.go:1341) lacks its decision line:
    missing evidence, an open question (KV-RC-02), never a violation."""
    cluster = Cluster("paste-a", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    capture = cluster.capture(T0 + 2 * MINUTE)
    leader = lines_of(log_of(capture, "web"))
    first = next(i for i, line in enumerate(leader) if '"pos":"vm.go:1341"' in line)
    excerpt = write_lines(tmp_path / "excerpt.log", leader[first:])
    code, out, _ = kvtrace(capsys, "check", "-A", "--log", str(excerpt), "-o", "json")
    (item,) = json.loads(out)["items"]
    assert (code, item["violations"]) == (0, 0)
    decided = [f for f in item["findings"] if f["rule"] == "KV-RC-02"]
    assert [f["status"] for f in decided] == ["unverifiable"]
    assert "decision line before this vm.created call is not in the evidence" in decided[0]["why"]


def _split_brain() -> Capture:
    """leader_split_brain of sample-logs/make_samples.py: the leader stalls right after a start
    decision, past the lease; the standby takes over; the old leader resumes and acts."""
    return sample_capture("leader-split-brain")


def _timeline(capsys, *args: str) -> dict:
    code, out, err = kvtrace(capsys, "timeline", *args, "-o", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("vm", ["default/api-1", "default/api-2"])
def test_window_never_changes_verdicts(capsys, tmp_path, vm):
    """A window that hides the start of the history (the leader's acquisition included) shows
    fewer rows and the same verdicts: the split brain stays, leadership stays known."""
    root = str(bundle(_split_brain(), tmp_path / "b"))
    whole = _timeline(capsys, vm, "-b", root)
    acquired = [i["time"] for i in whole["items"] if i["messageID"] == "leader.acquired"]
    since = timefmt.micro(timefmt.from_iso(acquired[-1]) + SECOND)  # past every acquisition
    windowed = _timeline(capsys, vm, "-b", root, "--since", since, "--until", "1m")
    assert 0 < len(windowed["items"]) < len(whole["items"])
    assert "leader.acquired" not in {i["messageID"] for i in windowed["items"]}
    assert windowed["status"]["model"] == whole["status"]["model"]
    findings = json.dumps(windowed["status"]["model"]["findings"])
    assert "no leader-election lines" not in findings
    if vm == "default/api-2":
        rules = [(f["rule"], f["status"]) for f in windowed["status"]["model"]["findings"]]
        assert ("KV-LD-02", "violation") in rules


def test_reversed_window_is_a_usage_error(capsys, tmp_path):
    cluster = Cluster("paste-c", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    root = str(bundle(cluster.capture(T0 + 2 * MINUTE), tmp_path / "b"))
    code, out, err = kvtrace(
        capsys,
        "timeline",
        "default/web",
        "-b",
        root,
        "--since",
        "2026-12-08T14:01:00Z",
        "--until",
        "2026-12-08T14:00:30Z",
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: --since 2026-12-08T14:01:00Z is after --until 2026-12-08T14:00:30Z: the window "
        "would be empty\n"
    )


def test_duration_counts_back_from_the_evidence(capsys, tmp_path):
    """``--log F --since 15m``: no capture time, so 15 minutes back from the log's last line,
    not from the wall clock."""
    cluster = Cluster("paste-d", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    cluster.virtctl(T0 + 10 * MINUTE, "restart", "web")
    cluster.virtctl(T0 + 30 * MINUTE, "restart", "web")
    capture = cluster.capture(T0 + 32 * MINUTE)
    log = write_lines(tmp_path / "controller.log", lines_of(log_of(capture, "web")))
    whole = _timeline(capsys, "default/web", "--log", str(log))
    windowed = _timeline(capsys, "default/web", "--log", str(log), "--since", "15m")
    last = max(timefmt.from_iso(i["time"]) for i in whole["items"])
    floor = last - 15 * MINUTE
    kept = [i for i in whole["items"] if timefmt.from_iso(i["time"]) >= floor]
    assert [i["row"] for i in windowed["items"]] == [i["row"] for i in kept]
    assert 0 < len(kept) < len(whole["items"])


def test_split_brain_everywhere(capsys, tmp_path):
    """A deposed leader acting after the standby took the lease: leader history exits 3, check
    -A exits 3 with KV-LD-02, and the VM's timeline marks the rows."""
    root = str(bundle(_split_brain(), tmp_path / "b"))
    code, _, _ = kvtrace(capsys, "leader", "history", "-b", root)
    assert code == 3
    code, out, _ = kvtrace(capsys, "check", "-A", "-b", root, "-o", "json")
    violated = {
        (i["name"], f["rule"])
        for i in json.loads(out)["items"]
        for f in i["findings"]
        if f["status"] == "violation"
    }
    assert (code, violated) == (3, {("api-2", "KV-LD-02")})
    code, out, _ = kvtrace(capsys, "timeline", "default/api-2", "-b", root)
    marked = [line for line in out.splitlines() if line.rstrip().endswith("✗ KV-LD-02")]
    assert code == 0 and len(marked) == 2
    assert "✗ KV-LD-02 (error): " in out and "(split brain)" in out


# --- VMs known from logs, and pastes a terminal reshaped ------------------------------------
def test_vm_named_only_by_vmi_requeues(capsys, tmp_path):
    """A paste of only the VMI controller's ``reenqueuing VirtualMachineInstance`` lines
    (vmi.go:288) names a VM; the same text from disruptionbudget.go:344 names none."""
    capture = _crash_loop("vmi-keys")
    leader = lines_of(log_of(capture, "looping"))
    requeues = [line for line in leader if '"pos":"vmi.go:288"' in line]
    assert requeues and all("default/looping" in line for line in requeues)
    paste = write_lines(tmp_path / "requeues.log", requeues)
    code, out, _ = kvtrace(capsys, "check", "-A", "--log", str(paste), "-o", "json")
    assert code == 0 and [i["name"] for i in json.loads(out)["items"]] == ["looping"]
    code, out, _ = kvtrace(capsys, "timeline", "default/looping", "--log", str(paste), "-o", "json")
    assert code == 0
    assert {i["messageID"] for i in json.loads(out)["items"]} == {"vmi.requeue"}

    cluster = Cluster("budget-only", T0)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    cluster.outage(T0 + 59 * SECOND + 500 * MS, 0, 4 * SECOND)
    cluster.leftover_pdb(T0 + 60 * SECOND, "web")
    budget = [
        line
        for line in lines_of(log_of(cluster.capture(T0 + 2 * MINUTE), "web"))
        if '"pos":"disruptionbudget.go:344"' in line
    ]
    assert budget and all("reenqueuing VirtualMachineInstance default/web" in x for x in budget)
    paste = write_lines(tmp_path / "budget.log", budget)
    code, _, err = kvtrace(capsys, "check", "-A", "--log", str(paste))
    assert code == 1 and "no VMs at all in this evidence" in err


def _hard_wrapped(text: str, width: int) -> str:
    """What a terminal of ``width`` columns makes of each long line, copied back as text."""
    out = []
    for line in text.splitlines():
        out += [line[k : k + width] for k in range(0, len(line), width)] or [""]
    return "\n".join(out) + "\n"


def _pasted(tmp_path: Path) -> tuple[Path, Path]:
    """``kubectl logs`` output of the leader, as saved and as copied from an 80-column
    terminal that hard-wrapped every long line."""
    bodies = log_of(_crash_loop("hard-wrap"), "looping").bodies()
    plain, wrapped = tmp_path / "saved" / "web.log", tmp_path / "pasted" / "web.log"
    for path, text in ((plain, bodies), (wrapped, _hard_wrapped(bodies, 80))):
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
    assert len(wrapped.read_text().splitlines()) > 2 * len(bodies.splitlines())
    return plain, wrapped


def test_hard_wrapped_paste_is_joined_again(tmp_path):
    """Every JSON line split into 80-character pieces is joined again: the same rows from JSON
    lines and the same verdicts as the unwrapped log. (A klog line, not JSON, stays cut: the
    two leader-election lines drop out, and STARTING controllers still shows the lead.)"""
    plain, wrapped = _pasted(tmp_path)

    def seen(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[str, str, str]]]:
        vm = vm_of(report_of(None, [path]), "looping")
        shown = [
            (r.time.at if r.time else None, r.what, r.pos, r.incarnation)
            for r in rows(vm)
            if not (r.pos or "").startswith("leaderelection.go")
        ]
        judged = sorted((v.rule, v.status, v.why) for v in vm.assessment.verdicts)
        return shown, judged

    unwrapped = seen(plain)
    assert len(unwrapped[0]) > 20 and seen(wrapped) == unwrapped
    assert "violation" not in {status for _, status, _ in unwrapped[1]}


def test_timeline_of_a_hard_wrapped_paste(capsys, tmp_path):
    plain, wrapped = _pasted(tmp_path)

    def shown(path: Path) -> list[tuple[str, str, str, str | None]]:
        doc = _timeline(capsys, "default/looping", "--log", str(path))
        return [
            (i["time"], i["what"], i["pos"], i["verdict"])
            for i in doc["items"]
            if not (i["pos"] or "").startswith("leaderelection.go")  # klog lines stay cut
        ]

    assert len(shown(plain)) > 20
    assert shown(wrapped) == shown(plain)


# --- what a VM is, and lines that must reach it ------------------------------------------------
def _with_other_objects_lines(capture: Capture, vm: str) -> Capture:
    """The leader's log with the lines other objects get at default verbosity: the VM
    controller's DataVolume add handler (vm.go:2175, 2182) and the migration controller waiting
    to schedule a target pod (migration.go:1355), written through kvsim's writer as v1.9.0 prints
    them, each logged with its own object (log.go:238-255)."""
    changed = copy.copy(capture)
    changed.logs = [(copy.copy(log), instance) for log, instance in capture.logs]
    log = log_of(changed, vm)
    log.lines = list(log.lines)
    at = log.lines[-1].at + 1_000
    disk = LoggedObject(
        "default", f"{vm}-rootdisk", "5b0f0b2e-1c1a-4e2d-9c6a-0d2f6e7b8a91", "DataVolume"
    )
    log.kv(at, "info", "Looking for DataVolume Ref", "vm.go:2175", disk)
    log.kv(
        at + 40, "info", f"DataVolume created because {vm}-rootdisk was added.", "vm.go:2182", disk
    )
    move = LoggedObject(
        "default",
        f"{vm}-migration-x7k2q",
        "1d6a1e0c-7a51-4b7e-8f55-3c2b1a0d9e8f",
        "VirtualMachineInstanceMigration",
    )
    log.kv(
        at + 900,
        "info",
        "Waiting to schedule target pod for migration because there are already multiple pods "
        f"running for vmi default/{vm}",
        "migration.go:1355",
        move,
    )
    return changed


def test_a_datavolume_or_a_migration_is_not_a_vm(capsys, tmp_path):
    cluster = Cluster("what-a-vm-is", T0)
    cluster.create_vm(T0 + 30 * SECOND, "db")
    root = bundle(_with_other_objects_lines(cluster.capture(T0 + 2 * MINUTE), "db"), tmp_path / "b")
    logs = [str(p) for p in sorted(root.rglob("*.log"))]
    for evidence in (["--bundle", str(root)], [a for p in logs for a in ("--log", p)]):
        code, out, err = kvtrace(capsys, "check", "-A", *evidence, "-o", "json")
        assert code == 0, err
        assert [i["name"] for i in json.loads(out)["items"]] == ["db"]
        for other in ("db-rootdisk", "db-migration-x7k2q"):
            code, _, err = kvtrace(capsys, "timeline", f"default/{other}", *evidence)
            assert code == 1 and f"no VirtualMachine default/{other}" in err


def test_expectations_lines_reach_the_vm(tmp_path):
    """At logVerbosity 4 the VM controller's expectations print the VM key
    (expectations.go:123-344): set on each create and delete, met when the informer sees it."""
    cluster = Cluster("expectations", T0)
    cluster.fates[("web", 0)] = Fate("crash", 40 * SECOND)
    cluster.create_vm(T0 + 30 * SECOND, "web")
    for replica in cluster.replicas:
        replica.verbosity = 4
    root = bundle(cluster.capture(T0 + 3 * MINUTE), tmp_path / "b")
    for logs_only in (False, True):
        logs = sorted(root.rglob("*.log")) if logs_only else []
        vm = vm_of(report_of(None if logs_only else root, logs), "web")
        seen = {r.message_id for r in rows(vm) if r.pos and r.pos.startswith("expectations.go")}
        assert {
            "vm.expectations-unrecorded",
            "vm.expectations-state",
            "vm.expectations-deletions",
        } <= seen
        assert not [v for v in vm.assessment.verdicts if v.status == "violation"]
