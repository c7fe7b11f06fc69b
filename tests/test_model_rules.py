"""Every rule of the model: one scenario where it holds, one where it is violated (or, where
evidence is missing, unverifiable)."""

from __future__ import annotations

from tests.scenario import LEADER, STANDBY, Scenario, at, statuses, uid_for, violated_rules

RUNNING = ["Pending", "Scheduling", "Scheduled", "Running"]


def phases(start: float, names: list[str], step: float = 1.0) -> list[tuple[str, object]]:
    return [(name, at(start + i * step)) for i, name in enumerate(names)]


def restart(
    strategy: str = "Always", *, wait: float = 0.19, ran: bool = True, keep_old: bool = False
) -> Scenario:
    """A VMI ends Failed, is deleted, and a new one is created ``wait`` s after the decision."""
    s = Scenario(strategy)
    s.lease(LEADER, at(0), at(16))
    s.lease(STANDBY, at(1), None)
    old, new = uid_for("vmi", 1), uid_for("vmi", 2)
    if keep_old:
        names = [*RUNNING, "Failed"] if ran else ["Pending", "Scheduling", "Scheduled", "Failed"]
        s.vmi(old, at(50), phases(50, names), deleting=at(100))
    s.stop(at(100), "Failed")
    s.delete(at(100.012), "Failed")
    s.stop(at(100.09), "Failed")
    s.start(at(100 + wait))
    s.created(at(100 + wait + 0.017))
    s.vmi(new, at(100 + wait + 0.017), phases(101 + wait, RUNNING))
    return s


def test_healthy_restart_is_all_explained():
    _, assessment = restart(keep_old=True).assess()
    assert violated_rules(assessment) == set()
    assert assessment.counts()["unverifiable"] == 0


def test_rs01_text_must_fit_the_strategy():
    s = restart()
    s.vm_line(at(300), "Starting VM due to runStrategy: Halted", "vm.go:1032")
    _, ok = restart().assess()
    _, bad = s.assess()
    assert statuses(ok, "KV-RS-01") == {"explained"}
    assert "violation" in statuses(bad, "KV-RS-01")


def test_rs02_always_stops_only_final_or_requested():
    s = restart()
    s.stop(at(400), "Running")
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-RS-02")
    s2 = restart()
    s2.vm_line(
        at(400),
        "processing forced restart request for VMI with phase Running and VM runStrategy: Always",
        "vm.go:985",
    )
    s2.stop(at(400.001), "Running")
    _, ok = s2.assess()
    assert statuses(ok, "KV-RS-02") == {"explained"}


def test_rs03_rerun_on_failure_never_restarts_after_succeeded():
    ok = restart("RerunOnFailure")
    _, good = ok.assess()
    assert statuses(good, "KV-RS-03") == {"explained"}
    s = Scenario("RerunOnFailure")
    s.lease(LEADER, at(0), at(16))
    s.stop(at(100), "Succeeded")
    s.delete(at(100.01), "Succeeded")
    s.start(at(101))
    s.created(at(101.02))
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-RS-03"}


def test_rs04_once_never_stops_or_restarts():
    s = Scenario("Once")
    s.lease(LEADER, at(0), at(16))
    s.start(at(100))
    s.created(at(100.02))
    _, ok = s.assess()
    assert statuses(ok, "KV-RS-04") == {"explained"}
    s.delete(at(200), "Succeeded")
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-RS-04")


def test_rs05_halted_never_creates():
    s = Scenario("Halted")
    s.lease(LEADER, at(0), at(16))
    s.vm_line(
        at(100), "Stopping VM with VMI in phase Running due to runStrategy: Halted", "vm.go:1134"
    )
    s.delete(at(100.01), "Running")
    _, ok = s.assess()
    assert statuses(ok, "KV-RS-05") == {"explained"}
    s.created(at(200))
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-RS-05")


def test_rc01_delete_and_create_never_share_a_reconcile():
    s = Scenario("Always")
    s.lease(LEADER, at(0), at(16))
    s.stop(at(100), "Failed")
    s.delete(at(100.01), "Failed")
    s.start(at(100.02))
    s.created(at(100.03))
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-RC-01"}
    _, ok = restart().assess()
    assert statuses(ok, "KV-RC-01") == {"explained"}


def test_rc02_api_calls_follow_a_decision_and_repeats_are_not_deletes():
    _, ok = restart().assess()
    whys = [v.why for v in ok.verdicts if v.rule == "KV-RC-02"]
    assert any("repeats while the VMI terminates" in w for w in whys)
    s = Scenario("Always")
    s.lease(LEADER, at(0), at(16))
    s.created(at(100))
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-RC-02")


def test_rc03_one_delete_per_incarnation():
    s = restart()
    s.delete(at(100.05), "Failed")
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-RC-03")
    _, ok = restart().assess()
    assert statuses(ok, "KV-RC-03") == {"explained"}


def test_rc04_failed_reconcile_ends_in_requeue():
    reason = 'Operation cannot be fulfilled on virtualmachines.kubevirt.io "vm1": the object has been modified'
    s = restart()
    s.vm_line(
        at(300),
        "Updating the VirtualMachine status failed.",
        "vm.go:453",
        level="error",
        reason=reason,
    )
    s.requeue(at(300.0001), reason)
    _, ok = s.assess()
    assert statuses(ok, "KV-RC-04") == {"explained"}
    s2 = restart()
    s2.vm_line(
        at(300),
        "Updating the VirtualMachine status failed.",
        "vm.go:453",
        level="error",
        reason=reason,
    )
    s2.stop(at(400), "Failed")  # later lines exist, but no re-enqueue followed the failure
    _, bad = s2.assess()
    assert "violation" in statuses(bad, "KV-RC-04")


def test_ex01_no_duplicate_create():
    s = restart()
    s.start(at(200))
    s.created(at(200.02))
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-EX-01")
    _, ok = restart().assess()
    assert statuses(ok, "KV-EX-01") == {"explained"}


def test_rc04_limiter_delays_are_the_work_queue_defaults():
    """client-go's default_rate_limiters.go:50-56 (vendored at v1.9.0): 5 ms·2^(n-1), 1.28 s at
    n=9, 655.36 s at n=18, then 1000 s."""
    from kvtrace.model.rules_reconcile import limiter_delay

    assert [limiter_delay(n) for n in (1, 2, 3, 9, 18)] == [0.005, 0.01, 0.02, 1.28, 655.36]
    assert limiter_delay(19) == limiter_delay(64) == limiter_delay(10_000) == 1000.0


def failing_chain(retries_after: list[float]) -> Scenario:
    """A VM whose start keeps failing in the webhook: each attempt is re-enqueued, and the next
    attempt comes ``retries_after[k]`` seconds after the k-th re-enqueue."""
    s = restart()
    reason = "Failure while starting VMI: Internal error occurred: failed calling webhook"
    t = 300.0
    for gap in [*retries_after, None]:
        s.start(at(t))
        s.vm_line(at(t + 0.01), "Failed to create VirtualMachineInstance: /", "vm.go:1336")
        s.vm_line(
            at(t + 0.0102),
            "Reconciling the VirtualMachine failed.",
            "vm.go:448",
            level="error",
            reason=reason,
        )
        s.requeue(at(t + 0.0104), reason)
        if gap is not None:
            t += 0.0104 + gap
    return s


def retry_whys(assessment) -> list[str]:
    return [v.why for v in assessment.verdicts if v.rule == "KV-RC-04" and "retried" in v.why]


def test_rc04_retries_are_explained_by_the_limiter_or_by_an_informer_event():
    _, paced = failing_chain([0.006, 0.011, 0.021]).assess()
    assert retry_whys(paced) == [
        "retried 0.006s after failure #1: the work queue waits 0.005s",
        "retried 0.011s after failure #2: the work queue waits 0.01s",
        "retried 0.021s after failure #3: the work queue waits 0.02s",
    ]
    _, early = failing_chain([0.006, 0.002]).assess()
    whys = retry_whys(early)
    assert len(whys) == 2 and "before the limiter's 0.01s: an informer event" in whys[1]
    assert "violation" not in statuses(early, "KV-RC-04")


def failed_create(reason: str | None) -> Scenario:
    """A restart whose first create attempt fails (vm.go:1336, then 448 and 348 when a reason
    is logged), retried successfully by the work queue."""
    s = restart()
    s.start(at(200))
    s.vm_line(at(200.01), "Failed to create VirtualMachineInstance: /", "vm.go:1336")
    if reason is not None:
        failed = f"Failure while starting VMI: {reason}"
        s.vm_line(
            at(200.0102),
            "Reconciling the VirtualMachine failed.",
            "vm.go:448",
            level="error",
            reason=failed,
        )
        s.requeue(at(200.0104), failed)
    return s


def test_ex01_only_already_exists_makes_a_failed_create_a_duplicate():
    webhook = 'Internal error occurred: failed calling webhook "virtualmachineinstances-create-validator.kubevirt.io": context deadline exceeded'
    _, timeout = failed_create(webhook).assess()
    assert "violation" not in statuses(timeout, "KV-EX-01")
    assert any(
        v.rule == "KV-EX-01" and "the work queue retries it" in v.why for v in timeout.verdicts
    )
    _, collision = failed_create(
        'virtualmachineinstances.kubevirt.io "vm1" already exists'
    ).assess()
    found = [v for v in collision.violations() if v.rule == "KV-EX-01"]
    assert len(found) == 1 and "stale-cache duplicate create" in found[0].why
    assert len(found[0].rows) == 2  # the 1336 line and the 448 line that says why
    _, silent = failed_create(None).assess()
    assert "violation" not in statuses(silent, "KV-EX-01")
    assert "unverifiable" in statuses(silent, "KV-EX-01")


def test_sv01_revision_name():
    _, ok = restart().assess()
    assert statuses(ok, "KV-SV-01") == {"explained"}
    s = restart()
    s.vmis[-1]["status"]["virtualMachineRevisionName"] = f"revision-start-vm-{s.vm_uid}-7"
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-SV-01"}


def test_sv02_vmi_metadata():
    s = restart()
    s.vmis[-1]["metadata"]["finalizers"] = ["kubevirt.io/foregroundDeleteVirtualMachine"]
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-SV-02"}


def test_sv03_firmware_uuid_follows_template_or_legacy_formula():
    s = restart()
    s.vmis[-1]["spec"]["domain"]["firmware"]["uuid"] = uid_for("somewhere else")
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-SV-03"}
    _, ok = restart().assess()
    assert statuses(ok, "KV-SV-03") == {"explained"}


def test_sv03_a_vmi_without_its_spec_is_unverifiable_and_a_missing_uuid_is_not():
    trimmed = restart()
    del trimmed.vmis[-1]["spec"]  # an export that kept metadata and status only
    _, assessment = trimmed.assess()
    assert statuses(assessment, "KV-SV-03") == {"unverifiable"}
    unset = restart()
    del unset.vmis[-1]["spec"]["domain"]["firmware"]  # startVMI always sets one (vm.go setup)
    _, assessment = unset.assess()
    assert statuses(assessment, "KV-SV-03") == {"violation"}


def test_sv03_legacy_uuid5_of_the_name():
    from kvtrace.model.rules_startvmi import legacy_firmware_uuid

    assert legacy_firmware_uuid("testvm") == "5a9fc181-957e-5c32-9e5a-2de5e9673531"
    assert legacy_firmware_uuid("vm-fedora") == "c9dc132f-1bb1-5f88-9891-deed35a6d803"
    assert legacy_firmware_uuid("a") == "8d9794ca-8c84-5204-b98a-721424eaae6f"


def test_ph01_phase_regression():
    s = restart()
    s.vmis[-1]["status"]["phaseTransitionTimestamps"] = [
        {"phase": "Pending", "phaseTransitionTimestamp": "2026-11-28T00:01:41Z"},
        {"phase": "Scheduling", "phaseTransitionTimestamp": "2026-11-28T00:01:41Z"},
        {"phase": "Scheduled", "phaseTransitionTimestamp": "2026-11-28T00:01:50Z"},
        {"phase": "Running", "phaseTransitionTimestamp": "2026-11-28T00:01:44Z"},
    ]
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-PH-01"}


def test_ph02_unknown_and_duplicate_phases():
    s = restart()
    s.vmis[-1]["status"]["phaseTransitionTimestamps"].append(
        {"phase": "Unknown", "phaseTransitionTimestamp": "2026-11-28T00:01:50Z"}
    )
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-PH-02")
    _, ok = restart().assess()
    assert statuses(ok, "KV-PH-02") == set()  # nothing to say about a clean phase list


def test_ph03_handover_sets_node_label_and_status():
    s = restart()
    s.vmis[-1]["metadata"]["labels"] = {}
    _, bad = s.assess()
    assert violated_rules(bad) == {"KV-PH-03"}
    _, ok = restart().assess()
    assert statuses(ok, "KV-PH-03") == {"explained"}


def test_bo01_backoff_after_a_start_failure():
    _, bad = restart(wait=2, ran=False, keep_old=True).assess()
    assert violated_rules(bad) == {"KV-BO-01"}
    _, ok = restart(wait=12, ran=False, keep_old=True).assess()
    assert statuses(ok, "KV-BO-01") == {"explained"}
    _, ran = restart(wait=0.19, ran=True, keep_old=True).assess()
    assert statuses(ran, "KV-BO-01") == {"explained"}


def test_bo01_unknown_whether_the_vmi_ran_is_unverifiable():
    _, unknown = restart(wait=0.19).assess()
    assert statuses(unknown, "KV-BO-01") == {"unverifiable"}


def test_bo02_announced_wait_is_honoured():
    s = restart(wait=15, ran=False, keep_old=True)
    s.backoff(at(100.5), 13)
    _, ok = s.assess()
    assert statuses(ok, "KV-BO-02") == {"explained"}
    s2 = restart(wait=15, ran=False, keep_old=True)
    s2.backoff(at(110), 13)
    _, bad = s2.assess()
    assert "violation" in statuses(bad, "KV-BO-02")


def test_ld01_only_the_lease_holder_acts():
    _, ok = restart().assess()
    assert statuses(ok, "KV-LD-01") == {"explained"}
    s = restart()
    s.stop(at(500), "Failed", pod=STANDBY)
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-LD-01")


def test_ld01_without_lease_lines_is_unverifiable():
    s = Scenario("Always")
    s.stop(at(100), "Failed")
    s.delete(at(100.01), "Failed")
    _, unknown = s.assess()
    assert statuses(unknown, "KV-LD-01") == {"unverifiable"}


def test_ld02_split_brain():
    s = restart()
    s.lease(STANDBY, at(1), at(90))  # both replicas believe they lead
    s.stop(at(100.05), "Failed", pod=STANDBY)
    _, bad = s.assess()
    assert "violation" in statuses(bad, "KV-LD-02")
    _, ok = restart().assess()
    assert statuses(ok, "KV-LD-02") == {"explained"}


def test_position_queries_agree_with_a_scan_of_the_rows():
    """Facts.between/last_before/first_after/count_before (bisection) give what a plain scan of
    the rows gives, at every row and for one id and merged ids."""
    from kvtrace.model.facts import derive

    s = restart(keep_old=True)
    for k in range(3):
        s.stop(at(200 + k * 40), "Failed")
        s.delete(at(200.01 + k * 40), "Failed")
        s.start(at(230 + k * 40))
        s.created(at(230.02 + k * 40))
    facts = derive(s.timeline())
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
