"""Every rule of the model on histories run by the simulator of v1.9.0's virt-controller (kvsim):
one where the rule holds, one where it is broken or the evidence cannot decide.

What the code guarantees by its shape (RS-01, RS-02, RS-04's stop, RS-05, RC-02, RC-04's
re-enqueue) only a lost, duplicated or foreign line can contradict, so those rules are tripped by
tampering with a capture: a line lost, or a foreign line written through kvsim's own writer. The
object rules (SV-02, SV-03, PH-02, PH-03) are tripped by an object changed on its way to the
operator. The rest are tripped by what kvsim runs: code faults, lost informer events, a standby
that acts without the lease, a leader that stalls past its lease.

Each history is run once per module (the builders are cached) and never changed: every tamper
works on a copy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import cache

from kvsim import timefmt
from kvsim.apiserver import Obj
from kvsim.cluster import Capture, Cluster
from kvsim.histories import WEBHOOK_TIMEOUT
from kvsim.kernel import SECOND
from kvsim.logs import Line
from kvsim.nodes import Fate
from kvtrace.model.engine import Assessment
from kvtrace.model.rules_reconcile import limiter_delay
from kvtrace.model.rules_startvmi import legacy_firmware_uuid
from kvtrace.model.verdicts import INCONSISTENT
from kvtrace.timeline.build import Timeline
from tests.simulated import (
    assessed,
    copied,
    first_line,
    statuses,
    violated_rules,
    vm_lines,
    with_object,
    with_vm_line,
    without_lines,
    without_objects,
)

START = timefmt.from_iso("2026-12-08T14:00:00Z")
MINUTE = 60 * SECOND
NAME = "vm1"
VMI = "VirtualMachineInstance"

Judged = tuple[Timeline, Assessment]


# --- histories -------------------------------------------------------------------------------
@cache
def crash_restarts() -> Capture:
    """An Always VM whose guest crashes three times, 40 s into each run: each time the leader
    deletes the Failed VMI and, once it is gone, creates the next (no backoff: each had run)."""
    cluster = Cluster("rules-crash-restarts", START)
    for index in range(3):
        cluster.fates[(NAME, index)] = Fate("crash", 40 * SECOND)
    cluster.create_vm(START + 30 * SECOND, NAME)
    return cluster.capture(START + 5 * MINUTE)


@cache
def restarted() -> Capture:
    """``virtctl restart`` of a running Always VM (vm.go:985, then 1005 on a Running VMI)."""
    cluster = Cluster("rules-restarted", START)
    cluster.create_vm(START + 30 * SECOND, NAME)
    cluster.virtctl(START + 90 * SECOND, "restart", NAME)
    return cluster.capture(START + 3 * MINUTE)


@cache
def once(after: str = "") -> Capture:
    """A Once VM whose guest shuts down: the Succeeded VMI stays. ``after``: "switched" (to
    Halted and back to Once: the Halted branch deletes the VMI and Once starts again) or
    "vmi-deleted" (someone deletes the VMI with kubectl; Once starts again)."""
    cluster = Cluster(f"rules-once-{after}", START)
    cluster.fates[(NAME, 0)] = Fate("shutdown", 60 * SECOND)
    cluster.create_vm(START + 30 * SECOND, NAME, strategy="Once")
    if after == "switched":
        cluster.set_strategy(START + 2 * MINUTE, NAME, "Halted")
        cluster.set_strategy(START + 3 * MINUTE, NAME, "Once")
    elif after == "vmi-deleted":
        cluster.at(START + 2 * MINUTE, lambda: cluster.api.delete(VMI, "default", NAME))
    return cluster.capture(START + 4 * MINUTE)


@cache
def halted_then_started() -> Capture:
    """An Always VM switched to Halted (vm.go:1134 deletes its VMI), then ``virtctl start``,
    which turns it into Always before anything is created."""
    cluster = Cluster("rules-halted", START)
    cluster.create_vm(START + 30 * SECOND, NAME)
    cluster.set_strategy(START + 90 * SECOND, NAME, "Halted")
    cluster.virtctl(START + 150 * SECOND, "start", NAME)
    return cluster.capture(START + 4 * MINUTE)


@cache
def create_after_delete(verbosity: int) -> Capture:
    """The code fault whose stop branch does not return: one reconcile deletes the Failed VMI
    and starts its successor."""
    cluster = Cluster(f"rules-create-after-delete-v{verbosity}", START)
    cluster.fates[(NAME, 0)] = Fate("crash", 60 * SECOND)
    cluster.create_vm(START + 30 * SECOND, NAME)
    for replica in cluster.replicas:
        replica.faults.create_after_delete = True
        replica.verbosity = verbosity
    return cluster.capture(START + 4 * MINUTE)


@cache
def vm_deleted() -> Capture:
    """The VM is deleted while it runs: its deletion path deletes the VMI with no decision line
    (vm.go:3236-3249), and the VM is gone from the capture."""
    cluster = Cluster("rules-vm-deleted", START)
    cluster.create_vm(START + 30 * SECOND, NAME)
    cluster.delete_vm(START + 90 * SECOND, NAME)
    return cluster.capture(START + 3 * MINUTE)


def _deleted_twice(capture: Capture) -> bool:
    """Two SuccessfulDelete Events of the VM (one per replica's recorder) name one VMI."""
    deleted = Counter(
        event["message"].rsplit(" ", 1)[-1]
        for event in capture.objects["Event"]
        if event["reason"] == "SuccessfulDelete"
        and event["involvedObject"]["kind"] == "VirtualMachine"
    )
    return any(count > 1 for count in deleted.values())


@cache
def standby_acting() -> Capture:
    """The standby runs its controllers without the lease (a code fault), alongside the leader:
    when the guest crashes both replicas delete the Failed VMI. The first seed where both
    deletes went through (each replica saw the VMI before the other's delete reached it)."""
    for seed in range(30):
        cluster = Cluster(f"rules-standby-acting-{seed}", START)
        for index in range(3):  # the two VMI controllers may each make a launcher pod
            cluster.fates[(NAME, index)] = Fate("crash", 60 * SECOND)
        cluster.replicas[1].run_without_lease = True
        cluster.create_vm(START + 30 * SECOND, NAME)
        capture = cluster.capture(START + 4 * MINUTE)
        if _deleted_twice(capture):
            return capture
    raise AssertionError("no seed in which both replicas deleted the Failed VMI")


@cache
def webhook_rejections() -> Capture:
    """The VMI create webhook times out on the first nine attempts: each failure is re-enqueued
    and retried by the work queue's per-key limiter, or sooner by an informer event."""
    cluster = Cluster("rules-webhook", START)
    cluster.reject_vmi_creates(START + 20 * SECOND, NAME, WEBHOOK_TIMEOUT, times=9)
    cluster.create_vm(START + 30 * SECOND, NAME)
    return cluster.capture(START + 3 * MINUTE)


def _relabel(vm: Obj) -> None:
    vm["metadata"].setdefault("labels", {})["tier"] = "frontend"


@cache
def stale_cache() -> Capture:
    """The leader's informer misses the VMI's add and updates; five minutes later the create
    expectation expires, a label edit re-enqueues the VM, and the leader creates again."""
    cluster = Cluster("rules-stale-cache", START)
    cluster.create_vm(START + 40 * SECOND, NAME)
    cluster.drop_event(START + 39 * SECOND, 0, VMI, NAME, "ADDED")
    cluster.drop_event(START + 39 * SECOND, 0, VMI, NAME, "MODIFIED", 50)
    cluster.edit_vm(START + 6 * MINUTE, NAME, _relabel, "kubectl label vm")
    return cluster.capture(START + 7 * MINUTE)


def _more_memory(vm: Obj) -> None:
    domain = vm["spec"]["template"]["spec"]["domain"]
    domain["memory"]["guest"] = domain["resources"]["requests"]["memory"] = "4Gi"


@cache
def wrong_revision() -> Capture:
    """A template edit (generation 2) and a restart, with the fault that names the previous
    generation's start revision in the new VMI's status."""
    cluster = Cluster("rules-wrong-revision", START)
    cluster.create_vm(START + 30 * SECOND, NAME)
    cluster.edit_vm(START + 2 * MINUTE, NAME, _more_memory, "edit spec.template")
    cluster.virtctl(START + 3 * MINUTE, "restart", NAME)

    def fault() -> None:
        for replica in cluster.replicas:
            replica.faults.revision_generation_offset = -1

    cluster.at(START + 2 * MINUTE + SECOND, fault)
    return cluster.capture(START + 5 * MINUTE)


@cache
def crash_loop(variant: str = "") -> Capture:
    """An Always VM whose launcher fails before the guest runs, every time: the controller
    delays each start for the backoff ('Waiting N more seconds', vm.go:1027). ``variant``:
    "ignoring" (the code fault that starts without consulting status.startFailure) or "cleared"
    (the user's ``virtctl stop`` and ``start`` during the second wait clear the backoff)."""
    cluster = Cluster(f"rules-crash-loop-{variant}", START)
    for index in range(6):
        cluster.fates[(NAME, index)] = Fate("fail-start")
    cluster.create_vm(START + 30 * SECOND, NAME)
    if variant == "ignoring":
        for replica in cluster.replicas:
            replica.faults.ignore_backoff = True
    elif variant == "cleared":
        cluster.virtctl(START + 60 * SECOND, "stop", NAME)
        cluster.virtctl(START + 62 * SECOND, "start", NAME)
    return cluster.capture(START + 4 * MINUTE)


@cache
def split_brain() -> Capture:
    """The leader's node stalls for 25 s right after a start decision; the standby takes the
    lease and starts the VM; the old leader resumes and creates on its stale view."""
    cluster = Cluster("rules-split-brain", START)
    cluster.create_vm(START + 60 * SECOND, NAME)
    cluster.replicas[0].faults.stall_after_start_decision = 25 * SECOND
    return cluster.capture(START + 4 * MINUTE)


@cache
def judged(build: Callable[..., Capture], *args: object) -> Judged:
    """The VM's timeline and verdicts in the history ``build(*args)``."""
    return assessed(build(*args), NAME)


# --- reading verdicts ------------------------------------------------------------------------
def rows_saying(timeline: Timeline, text: str) -> list[int]:
    """Log rows whose message starts with ``text``."""
    return [i for i, r in enumerate(timeline.rows) if r.origin == "log" and r.what.startswith(text)]


def whys(assessment: Assessment, rule: str, status: str | None = None) -> list[str]:
    return [
        v.why
        for v in assessment.verdicts
        if v.rule == rule and (status is None or v.status == status)
    ]


def only_line(timeline: Timeline, text: str) -> int:
    rows = rows_saying(timeline, text)
    assert len(rows) == 1, (text, rows)
    return rows[0]


# --- the healthy history ---------------------------------------------------------------------
def test_healthy_restarts_are_all_explained():
    timeline, assessment = judged(crash_restarts)
    assert len(rows_saying(timeline, "Started VM by creating")) == 4
    assert violated_rules(assessment) == set()
    assert assessment.counts()["unverifiable"] == 0


# --- run strategies --------------------------------------------------------------------------
HALTED_START = "Starting VM due to runStrategy: Halted"  # vm.go:1032's text, printed for Halted


def test_rs01_decision_text_must_fit_the_strategy():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-RS-01") == {"explained"}
    capture = crash_restarts()
    decision = first_line(capture, NAME, "Starting VM due to runStrategy: Always")
    foreign = with_vm_line(capture, decision, HALTED_START, "vm.go:1032", after_us=20 * SECOND)
    timeline, bad = assessed(foreign, NAME)
    row = only_line(timeline, HALTED_START)
    assert statuses(bad, "KV-RS-01", row) == {"unverifiable"}
    assert statuses(bad, "KV-RS-01") == {"explained", "unverifiable"}
    assert all(w.endswith(INCONSISTENT) for w in whys(bad, "KV-RS-01", "unverifiable"))
    assert violated_rules(bad) == set()


def test_rs02_always_stops_a_running_vmi_only_on_request():
    timeline, good = judged(restarted)
    assert statuses(good, "KV-RS-02") == {"explained"}
    first_stop = rows_saying(timeline, "Stopping VM with VMI in phase Running")[0]
    [request] = [v.rows[0] for v in good.verdicts if v.rule == "KV-RS-02" and first_stop in v.rows]
    assert timeline.rows[request].message_id == "vm.restart-request"

    capture = crash_restarts()
    created = first_line(capture, NAME, "Started VM by creating")
    unasked = "Stopping VM with VMI in phase Running and VM runStrategy: Always"  # vm.go:1005
    foreign = with_vm_line(capture, created, unasked, "vm.go:1005", after_us=20 * SECOND)
    timeline, bad = assessed(foreign, NAME)
    row = only_line(timeline, unasked)
    assert statuses(bad, "KV-RS-02", row) == {"unverifiable"}
    assert statuses(bad, "KV-RS-02") == {"explained", "unverifiable"}
    assert violated_rules(bad) == set()


def test_rs04_once_starts_once_and_has_no_stop_branch():
    _, good = judged(once)
    assert statuses(good, "KV-RS-04") == {"explained"}
    capture = once()
    created = first_line(capture, NAME, "Started VM by creating")
    stop = "Stopping VM with VMI in phase Running and VM runStrategy: Once"  # vm.go:1005
    timeline, bad = assessed(with_vm_line(capture, created, stop, "vm.go:1005"), NAME)
    row = only_line(timeline, stop)
    assert statuses(bad, "KV-RS-04", row) == {"unverifiable"}
    assert whys(bad, "KV-RS-04", "unverifiable") == [
        f"a stop decision under Once, which has no stop branch: {INCONSISTENT}"
    ]
    assert violated_rules(bad) == set()


def test_rs04_once_starting_again_needs_its_vmi_deleted():
    _, switched = judged(once, "switched")
    assert statuses(switched, "KV-RS-04") == {"explained"}
    assert any("deleted under another strategy" in w for w in whys(switched, "KV-RS-04"))
    _, deleted = judged(once, "vmi-deleted")
    assert statuses(deleted, "KV-RS-04") == {"explained", "unverifiable"}
    assert any("who deleted it is not in the evidence" in w for w in whys(deleted, "KV-RS-04"))
    assert violated_rules(deleted) == set()


def test_rs05_halted_never_creates():
    timeline, good = judged(halted_then_started)
    assert statuses(good, "KV-RS-05") == {"explained"}
    assert len(rows_saying(timeline, "Started VM by creating")) == 2  # the restart went via Always
    capture = halted_then_started()
    restart = [line for line in vm_lines(capture, NAME) if line.msg.startswith("Starting VM")][-1]
    timeline, bad = assessed(with_vm_line(capture, restart, HALTED_START, "vm.go:1032"), NAME)
    decision = only_line(timeline, HALTED_START)
    assert statuses(bad, "KV-RS-05", decision) == {"unverifiable"}
    assert statuses(bad, "KV-RS-05") == {"explained", "unverifiable"}
    assert violated_rules(bad) == set()


# --- reconciles ------------------------------------------------------------------------------
def test_rc01_delete_and_create_never_share_a_reconcile():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-RC-01") == {"explained"}
    _, verbose = judged(create_after_delete, 4)
    assert "violation" in statuses(verbose, "KV-RC-01")
    # the same fault at default verbosity: a VMI without finalizers is gone at once, so the
    # next reconcile could start it microseconds later; only verbosity 4 decides
    _, quiet = judged(create_after_delete, 2)
    assert statuses(quiet, "KV-RC-01") == {"unverifiable"}


def test_rc02_api_calls_follow_a_decision_and_repeats_are_not_deletes():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-RC-02") == {"explained"}
    assert any("repeats while the VMI terminates" in w for w in whys(good, "KV-RC-02"))
    _, deleted = judged(vm_deleted)
    assert statuses(deleted, "KV-RC-02") == {"explained"}
    assert any("the VM was being deleted" in w for w in whys(deleted, "KV-RC-02"))

    capture = crash_restarts()
    decision = first_line(capture, NAME, "Starting VM due to runStrategy")
    timeline, bad = assessed(without_lines(capture, lambda line: line == decision.line), NAME)
    orphan = rows_saying(timeline, "Started VM by creating")[0]
    assert statuses(bad, "KV-RC-02", orphan) == {"unverifiable"}
    assert violated_rules(bad) == set()


def test_rc03_one_delete_per_incarnation():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-RC-03") == {"explained"}
    timeline, twice = judged(standby_acting)
    assert "violation" in statuses(twice, "KV-RC-03")
    for found in (v for v in twice.violations() if v.rule == "KV-RC-03"):
        assert "deleted twice (SuccessfulDelete ×2)" in found.why
        sources = {timeline.rows[i].source for i in found.rows}
        assert len(sources) == 2  # one delete line in each replica's log
    # without the Events, two delete lines for one VMI may only mean a create line is lost
    capture = copied(standby_acting())
    capture.objects["Event"] = []
    _, no_events = assessed(capture, NAME)
    assert statuses(no_events, "KV-RC-03") == {"unverifiable"}


REQUEUE = re.compile(r'"msg":"re-enqueuing VirtualMachine default/vm1"')


def test_rc04_failed_reconcile_ends_in_requeue():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-RC-04") == {"explained"}
    capture = crash_restarts()
    _, lost = assessed(without_lines(capture, lambda line: bool(REQUEUE.search(line.body))), NAME)
    assert statuses(lost, "KV-RC-04") == {"unverifiable"}
    unexplained = Counter(whys(lost, "KV-RC-04"))
    assert unexplained.pop("the log ends right after the failure", 0) <= 1  # the last one
    assert set(unexplained) == {
        f"a failed reconcile with no re-enqueuing line after it: {INCONSISTENT}"
    }

    failure = first_line(capture, NAME, "Updating the VirtualMachine status failed.")

    def after_failure(line: Line) -> bool:
        return line.at >= failure.line.at and line != failure.line

    timeline, cut = assessed(without_lines(capture, after_failure), NAME)
    row = only_line(timeline, "Updating the VirtualMachine status failed.")
    assert statuses(cut, "KV-RC-04", row) == {"unverifiable"}
    assert whys(cut, "KV-RC-04", "unverifiable") == ["the log ends right after the failure"]


def test_rc04_limiter_delays_are_the_work_queue_defaults():
    """client-go's default_rate_limiters.go:50-56 (vendored at v1.9.0): 5 ms·2^(n-1), 1.28 s at
    n=9, 655.36 s at n=18, then 1000 s."""
    assert [limiter_delay(n) for n in (1, 2, 3, 9, 18)] == [0.005, 0.01, 0.02, 1.28, 655.36]
    assert limiter_delay(19) == limiter_delay(64) == limiter_delay(10_000) == 1000.0


RETRY = re.compile(r"retried (?P<gap>[\d.]+)s after failure #(?P<n>\d+)(?P<rest>.*)")


def test_rc04_retries_are_explained_by_the_limiter_or_by_an_informer_event():
    _, assessment = judged(webhook_rejections)
    assert statuses(assessment, "KV-RC-04") == {"explained"}
    retries = [m for w in whys(assessment, "KV-RC-04") if (m := RETRY.match(w))]
    paced = [m for m in retries if m["rest"].startswith(": the work queue waits")]
    early = [m for m in retries if "before the limiter's" in m["rest"]]
    assert len(paced) >= 4 and early
    assert len(paced) + len(early) == len(retries)
    for m in paced:
        delay = limiter_delay(int(m["n"]))
        assert m["rest"] == f": the work queue waits {delay:g}s"
        assert float(m["gap"]) + 0.001 >= delay
    for m in early:
        assert float(m["gap"]) < limiter_delay(int(m["n"]))
        assert "an informer event re-added the key" in m["rest"]


# --- expectations ----------------------------------------------------------------------------
def test_ex01_no_duplicate_create():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-EX-01") == {"explained"}
    timeline, bad = judged(stale_cache)
    found = [v for v in bad.violations() if v.rule == "KV-EX-01"]
    assert found and all("stale-cache duplicate create" in v.why for v in found)
    own, failed, reason = found[0].rows  # the VMI it had made, vm.go:1336 and the 448 saying why
    assert timeline.rows[own].message_id == "vm.created"
    assert timeline.rows[failed].message_id == "vm.create-failed"
    assert "already exists" in (timeline.rows[reason].reason or "")
    assert violated_rules(bad) == {"KV-EX-01"}


def test_ex01_only_already_exists_makes_a_failed_create_a_duplicate():
    _, webhook = judged(webhook_rejections)
    assert statuses(webhook, "KV-EX-01") == {"explained"}
    assert len([w for w in whys(webhook, "KV-EX-01") if "the work queue retries it" in w]) == 9
    # without the 448 lines the failed creates carry no reason
    capture = webhook_rejections()
    _, silent = assessed(
        without_lines(capture, lambda line: "Reconciling the VirtualMachine failed." in line.body),
        NAME,
    )
    assert statuses(silent, "KV-EX-01") == {"explained", "unverifiable"}
    assert (
        whys(silent, "KV-EX-01", "unverifiable")
        == ["the create failed; why is not in the evidence"] * 9
    )


# --- what startVMI writes --------------------------------------------------------------------
def test_sv01_revision_name():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-SV-01") == {"explained"}
    _, bad = judged(wrong_revision)
    assert statuses(bad, "KV-SV-01") == {"violation"}
    assert violated_rules(bad) == {"KV-SV-01"}


def _only_foreground_finalizer(vmi: Obj) -> None:
    vmi["metadata"]["finalizers"] = ["kubevirt.io/foregroundDeleteVirtualMachine"]


def test_sv02_vmi_metadata():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-SV-02") == {"explained"}
    bad_capture = with_object(crash_restarts(), VMI, NAME, _only_foreground_finalizer)
    _, bad = assessed(bad_capture, NAME)
    assert statuses(bad, "KV-SV-02") == {"violation"}
    assert violated_rules(bad) == {"KV-SV-02"}
    _, no_vmi = judged(vm_deleted)
    assert statuses(no_vmi, "KV-SV-02") == {"unverifiable"}


def _legacy_firmware(vmi: Obj) -> None:
    """The legacy uuid5 of the name, though the template has a UUID of its own."""
    vmi["spec"]["domain"]["firmware"]["uuid"] = legacy_firmware_uuid(NAME)


def _no_spec(vmi: Obj) -> None:
    del vmi["spec"]  # an export that kept metadata and status only


def _no_firmware(vmi: Obj) -> None:
    del vmi["spec"]["domain"]["firmware"]  # startVMI always sets one (vm.go:1933-1948)


def test_sv03_firmware_uuid_follows_the_template():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-SV-03") == {"explained"}
    _, bad = assessed(with_object(crash_restarts(), VMI, NAME, _legacy_firmware), NAME)
    assert statuses(bad, "KV-SV-03") == {"violation"}
    assert violated_rules(bad) == {"KV-SV-03"}


def test_sv03_a_vmi_without_its_spec_is_unverifiable_and_a_missing_uuid_is_not():
    _, trimmed = assessed(with_object(crash_restarts(), VMI, NAME, _no_spec), NAME)
    assert statuses(trimmed, "KV-SV-03") == {"unverifiable"}
    _, unset = assessed(with_object(crash_restarts(), VMI, NAME, _no_firmware), NAME)
    assert statuses(unset, "KV-SV-03") == {"violation"}


@cache
def firmware_edited(edit: str) -> Capture:
    """The template's firmware UUID is changed (or removed) while the VMI runs: legal, the
    mutator fills it only on create (vm-mutator.go:86-91), and the running VMI keeps the UUID it
    was started with (vm.go:1933-1948); a restart then takes the new one."""
    cluster = Cluster(f"rules-firmware-{edit}", START)
    cluster.create_vm(START + 30 * SECOND, NAME)

    def change(vm: Obj) -> None:
        firmware = vm["spec"]["template"]["spec"]["domain"]["firmware"]
        if edit == "set":
            firmware["uuid"] = "0b6f4d2e-3c1a-4f5e-9d8c-7a6b5c4d3e2f"
        else:
            firmware.pop("uuid")

    cluster.edit_vm(START + 2 * MINUTE, NAME, change, "edit firmware uuid")
    if edit == "set-and-restart":
        cluster.virtctl(START + 3 * MINUTE, "restart", NAME)
    return cluster.capture(START + 5 * MINUTE)


def test_sv03_the_template_is_the_one_the_vmi_was_started_from():
    for edit in ("set", "drop"):
        _, running = judged(firmware_edited, edit)
        # the start revision in the evidence holds the template of the VMI's start
        assert statuses(running, "KV-SV-03") == {"explained"}, edit
        _, without = assessed(without_objects(firmware_edited(edit), "ControllerRevision"), NAME)
        assert statuses(without, "KV-SV-03") == {"unverifiable"}, edit
        assert not violated_rules(without)


def test_sv03_legacy_uuid5_of_the_name():
    assert legacy_firmware_uuid("testvm") == "5a9fc181-957e-5c32-9e5a-2de5e9673531"
    assert legacy_firmware_uuid("vm-fedora") == "c9dc132f-1bb1-5f88-9891-deed35a6d803"
    assert legacy_firmware_uuid("a") == "8d9794ca-8c84-5204-b98a-721424eaae6f"


# --- VMI phases ------------------------------------------------------------------------------
def _stamps(vmi: Obj) -> list[dict[str, str]]:
    stamps: list[dict[str, str]] = vmi["status"]["phaseTransitionTimestamps"]
    return stamps


def _unknown_phase(vmi: Obj) -> None:
    _stamps(vmi).append(
        {
            "phase": "Unknown",
            "phaseTransitionTimestamp": _stamps(vmi)[-1]["phaseTransitionTimestamp"],
        }
    )


def _running_twice(vmi: Obj) -> None:
    running = next(s for s in _stamps(vmi) if s["phase"] == "Running")
    _stamps(vmi).append(dict(running))


@cache
def phases_of(variant: str) -> Capture:
    """One Always VM that starts and runs: as the release does it; with the nodes' clocks 50 s
    behind (virt-handler stamps Running on the node's clock); with the fault that patches the
    Running VMI back to Scheduled."""
    cluster = Cluster(f"rules-phases-{variant}", START)
    cluster.create_vm(START + 30 * SECOND, NAME)
    if variant == "node-clock-behind":
        for node in cluster.node_names:
            cluster.nodes.skew_us[node] = -50 * SECOND
    if variant == "regression":
        for replica in cluster.replicas:
            replica.faults.phase_regression = True
    return cluster.capture(START + 3 * MINUTE)


def _running_listed_first(vmi: Obj) -> None:
    stamps = _stamps(vmi)
    stamps.insert(0, stamps.pop(next(i for i, s in enumerate(stamps) if s["phase"] == "Running")))


def test_ph01_phases_are_entered_in_order():
    _, good = judged(phases_of, "release")
    assert statuses(good, "KV-PH-01") == {"explained"}
    _, back = judged(phases_of, "regression")
    assert statuses(back, "KV-PH-01") == {"explained", "violation"}
    assert any("status.phase is Scheduled after" in w for w in whys(back, "KV-PH-01", "violation"))
    assert violated_rules(back) == {"KV-PH-01"}
    _, reordered = assessed(
        with_object(phases_of("release"), VMI, NAME, _running_listed_first), NAME
    )
    assert any("entered after" in w for w in whys(reordered, "KV-PH-01", "violation"))


def test_ph01_stamps_from_a_clock_behind_are_not_a_regression():
    _, skewed = judged(phases_of, "node-clock-behind")
    assert statuses(skewed, "KV-PH-01") == {"explained"}
    assert any("disagree on the time" in w for w in whys(skewed, "KV-PH-01"))
    assert not violated_rules(skewed)


@cache
def rerun(variant: str) -> Capture:
    """A RerunOnFailure VM whose guest fails (restarted: vm.go:1059 appends a start request),
    or shuts down cleanly: not restarted; restarted by ``virtctl start``; restarted by the fault
    that treats Succeeded like Failed."""
    cluster = Cluster(f"rules-rerun-{variant}", START)
    how = "crash" if variant == "failed" else "shutdown"
    cluster.fates[(NAME, 0)] = Fate(how, 40 * SECOND)
    cluster.fates[(NAME, 1)] = Fate("shutdown", 10 * MINUTE)
    cluster.create_vm(START + 30 * SECOND, NAME, strategy="RerunOnFailure")
    if variant == "started":
        cluster.virtctl(START + 2 * MINUTE, "start", NAME)
    if variant == "fault":
        for replica in cluster.replicas:
            replica.faults.rerun_after_succeeded = True
    return cluster.capture(START + 4 * MINUTE)


def test_rs03_rerun_on_failure_restarts_after_failed_only():
    _, failed = judged(rerun, "failed")
    assert statuses(failed, "KV-RS-03") == {"explained"}
    _, stays = judged(rerun, "succeeded")
    assert statuses(stays, "KV-RS-03") <= {"explained"}
    for variant in ("started", "fault"):  # the same lines: only the audit log tells them apart
        _, again = judged(rerun, variant)
        assert statuses(again, "KV-RS-03") == {"explained", "unverifiable"}, variant
        assert any("audit log" in w for w in whys(again, "KV-RS-03", "unverifiable")), variant
        assert not violated_rules(again), variant


def test_ph02_unknown_and_duplicate_phases():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-PH-02") == set()  # nothing to say about a clean phase list
    for change, why in (
        (_unknown_phase, "phase Unknown is never set"),
        (_running_twice, "2 timestamps for phase Running"),
    ):
        _, bad = assessed(with_object(crash_restarts(), VMI, NAME, change), NAME)
        assert statuses(bad, "KV-PH-02") == {"violation"}
        assert any(why in w for w in whys(bad, "KV-PH-02"))
    _, no_vmi = judged(vm_deleted)
    assert statuses(no_vmi, "KV-PH-02") == {"unverifiable"}


def _unlabelled(vmi: Obj) -> None:
    del vmi["metadata"]["labels"]["kubevirt.io/nodeName"]


def _labelled_elsewhere(vmi: Obj) -> None:
    node = vmi["status"]["nodeName"]
    vmi["metadata"]["labels"]["kubevirt.io/nodeName"] = "node-c" if node != "node-c" else "node-b"


def test_ph03_handover_sets_node_label_and_status():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-PH-03") == {"explained"}
    for change in (_unlabelled, _labelled_elsewhere):
        _, bad = assessed(with_object(crash_restarts(), VMI, NAME, change), NAME)
        assert statuses(bad, "KV-PH-03") == {"violation"}
        assert violated_rules(bad) == {"KV-PH-03"}
    _, no_vmi = judged(vm_deleted)
    assert statuses(no_vmi, "KV-PH-03") == {"unverifiable"}


# --- start-failure backoff -------------------------------------------------------------------
def test_bo01_backoff_after_a_start_failure():
    _, ran = judged(crash_restarts)
    assert statuses(ran, "KV-BO-01") == {"explained"}
    assert all("had reached Running" in w for w in whys(ran, "KV-BO-01"))
    _, delayed = judged(crash_loop)
    assert statuses(delayed, "KV-BO-01") == {"explained"}
    assert all("delayed this start for the backoff" in w for w in whys(delayed, "KV-BO-01"))


def test_bo01_a_start_soon_after_a_vmi_whose_run_is_unknown_is_unverifiable():
    """A deleted VMI leaves no phase timestamps: whether it ran is not in the evidence, so a
    start without any backoff line cannot be judged."""
    _, ignoring = judged(crash_loop, "ignoring")
    assert statuses(ignoring, "KV-BO-01") == {"unverifiable"}
    assert all("reached Running is not in the evidence" in w for w in whys(ignoring, "KV-BO-01"))
    assert violated_rules(ignoring) == set()


def test_bo02_announced_wait_is_honoured():
    _, good = judged(crash_loop)
    assert statuses(good, "KV-BO-02") == {"explained"}
    _, cleared = judged(crash_loop, "cleared")
    assert statuses(cleared, "KV-BO-02") == {"explained", "unverifiable"}
    assert all(
        "unless a user's request cleared the backoff" in w
        for w in whys(cleared, "KV-BO-02", "unverifiable")
    )
    assert violated_rules(cleared) == set()


def test_bo02_a_wait_beyond_the_cap_is_not_the_release():
    capture = crash_loop()
    delay = first_line(capture, NAME, "Delaying start of VM")
    too_long = (
        "Delaying start of VM Starting VM with 'runStrategy: Always' due to start failure "
        "backoff. Waiting 400 more seconds before starting."
    )  # vm.go:1027, past the 300 s cap (vm.go:132)
    timeline, bad = assessed(with_vm_line(capture, delay, too_long, "vm.go:1027"), NAME)
    row = only_line(timeline, too_long)
    assert statuses(bad, "KV-BO-02", row) == {"unverifiable"}
    assert whys(bad, "KV-BO-02", "unverifiable") == [
        f"a wait of 400s exceeds the 300s cap: {INCONSISTENT}"
    ]


# --- leadership ------------------------------------------------------------------------------
def test_ld01_only_the_lease_holder_acts():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-LD-01") == {"explained"}
    timeline, bad = judged(standby_acting)
    assert "violation" in statuses(bad, "KV-LD-01")
    standby = {timeline.rows[v.rows[-1]].source for v in bad.violations() if v.rule == "KV-LD-01"}
    assert len(standby) == 1


def test_ld01_without_lease_lines_is_unverifiable():
    capture = crash_restarts()
    created = first_line(capture, NAME, "Starting VM due to runStrategy").line.at
    _, excerpt = assessed(without_lines(capture, lambda line: line.at < created), NAME)
    assert statuses(excerpt, "KV-LD-01") == {"unverifiable"}
    assert whys(excerpt, "KV-LD-01") == ["no leader-election lines in the evidence"]


def test_ld02_split_brain():
    _, good = judged(crash_restarts)
    assert statuses(good, "KV-LD-02") == {"explained"}
    _, bad = judged(split_brain)
    assert statuses(bad, "KV-LD-02") == {"violation"}
    assert violated_rules(bad) == {"KV-LD-02"}


# --- the facts rules reason over -------------------------------------------------------------
def test_position_queries_agree_with_a_scan_of_the_rows():
    """Facts.between/last_before/first_after/count_before (bisection) give what a plain scan of
    the rows gives, at every row and for one id and merged ids."""
    from kvtrace.model.facts import derive

    timeline, _ = judged(crash_restarts)
    facts = derive(timeline)
    for ids in (("vm.created",), ("vm.stop",), ("vm.created", "vm.deleted")):
        rows = [i for i, r in enumerate(facts.rows) if r.origin == "log" and r.message_id in ids]
        assert len(rows) >= 4 and facts.by_message(*ids) == rows
        for index in range(-1, len(facts.rows) + 1):
            before = [i for i in rows if i < index]
            after = [i for i in rows if i > index]
            assert facts.last_before(index, *ids) == (before[-1] if before else None)
            assert facts.first_after(index, *ids) == (after[0] if after else None)
            assert facts.count_before(index, *ids) == len(before)
            assert facts.between(index, index + 7, *ids) == [i for i in after if i < index + 7]
