"""Property tests: timelines generated from the controller's own behaviour pass the model; the same
timelines with one injected fault fail exactly that fault's rule.

The generator follows v1.9.0's ``syncRunStrategy`` (vm.go:970-1178) and the crash-loop backoff
(vm.go:1477-1603): random run strategy, random VMI endings (Succeeded/Failed, reached Running or
not), random repeats of stop decisions while a VMI terminates, random waits, and the leader's and
standby's lines in separate replica logs.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvtrace.model.rules_backoff import maximum_delay, minimum_delay
from tests.scenario import LEADER, STANDBY, Scenario, at, uid_for, violated_rules

RUNNING = ["Pending", "Scheduling", "Scheduled", "Running"]


@dataclass
class Life:
    phase: str  # how the VMI ended
    ran: bool  # whether it reached Running
    lifetime: float
    repeats: int
    restart_gap: float
    jitter: float


lives = st.builds(
    Life,
    phase=st.sampled_from(["Succeeded", "Failed"]),
    ran=st.booleans(),
    lifetime=st.floats(min_value=20, max_value=400),
    repeats=st.integers(min_value=0, max_value=2),
    restart_gap=st.floats(min_value=0.05, max_value=2.0),
    jitter=st.floats(min_value=0.0, max_value=1.0),
)


class Simulator:
    """Writes what v1.9.0 virt-controller logs for one VM, and the objects left behind."""

    def __init__(self, strategy: str) -> None:
        self.s = Scenario(strategy, name="web")
        self.s.lease(LEADER, at(0), at(16))
        self.s.lease(STANDBY, at(1), None)
        self.t = 100.0
        self.generation = 1
        self.incarnation = 0
        self.failures = 0

    def create(self) -> None:
        self.s.start(at(self.t))
        self.t += 0.017
        self.s.created(at(self.t))
        self.incarnation += 1

    def end(self, life: Life) -> None:
        self.t += life.lifetime
        phase = life.phase
        self.s.stop(at(self.t), phase)
        self.s.delete(at(self.t + 0.011), phase)
        for k in range(life.repeats):
            self.s.stop(at(self.t + 0.08 + 0.3 * k), phase)
        self.failures = 0 if life.ran else self.failures + 1

    def wait_for_restart(self, life: Life) -> None:
        if self.failures == 0:
            self.t += life.restart_gap + 0.5
            return
        low, high = minimum_delay(self.failures), maximum_delay(self.failures)
        delay = low + (high - low) * life.jitter
        self.s.backoff(at(self.t + 0.5), int(delay - 0.5))
        self.t += delay + 0.2

    def current_vmi(self) -> None:
        created = self.t
        self.s.vmi(
            uid_for("vmi", self.incarnation),
            at(created),
            [(p, at(created + 1 + i)) for i, p in enumerate(RUNNING)],
        )


def simulate_always(ends: list[Life]) -> Simulator:
    sim = Simulator("Always")
    sim.create()
    for life in ends:
        sim.end(life)
        sim.wait_for_restart(life)
        sim.create()
    sim.current_vmi()
    return sim


def simulate_rerun(ends: list[Life]) -> Simulator:
    sim = Simulator("RerunOnFailure")
    sim.create()
    for life in ends:
        sim.end(life)
        if life.phase == "Succeeded":
            return sim  # RerunOnFailure leaves a Succeeded VM stopped
        sim.wait_for_restart(life)
        sim.create()
    sim.current_vmi()
    return sim


def simulate_manual(ends: list[Life]) -> Simulator:
    sim = Simulator("Manual")
    sim.create()
    for life in ends:
        sim.t += life.lifetime
        quirky = (
            "Running with VMI in phase Stopping VM due to stop request and VM runStrategy: Manual"
        )
        sim.s.vm_line(at(sim.t), quirky, "vm.go:1094")
        sim.s.delete(at(sim.t + 0.01), "Running")
        for k in range(life.repeats):
            sim.s.vm_line(at(sim.t + 0.1 + 0.3 * k), quirky, "vm.go:1094")
        sim.t += 5 + life.restart_gap
        sim.create()
    sim.current_vmi()
    return sim


def simulate_once(ends: list[Life]) -> Simulator:
    sim = Simulator("Once")
    sim.create()
    sim.current_vmi()
    return sim


SIMULATORS = {
    "Always": simulate_always,
    "RerunOnFailure": simulate_rerun,
    "Manual": simulate_manual,
    "Once": simulate_once,
}
scenarios = st.tuples(st.sampled_from(sorted(SIMULATORS)), st.lists(lives, max_size=4))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_the_controllers_own_behaviour_has_no_violations(case):
    strategy, ends = case
    sim = SIMULATORS[strategy](ends)
    _, assessment = sim.s.assess()
    assert violated_rules(assessment) == set(), [
        v for v in assessment.verdicts if v.status == "violation"
    ]


def inject_delete_and_create_together(sim: Simulator) -> None:
    sim.t += 500
    sim.s.stop(at(sim.t), "Failed")
    sim.s.delete(at(sim.t + 0.005), "Failed")
    sim.s.start(at(sim.t + 0.010))
    sim.s.created(at(sim.t + 0.015))


def inject_duplicate_create(sim: Simulator) -> None:
    sim.t += 500
    sim.s.start(at(sim.t))
    sim.s.created(at(sim.t + 0.02))


def inject_standby_action(sim: Simulator) -> None:
    sim.t += 500
    sim.s.stop(at(sim.t), "Failed", pod=STANDBY)


def inject_phase_regression(sim: Simulator) -> None:
    entries = sim.s.vmis[-1]["status"]["phaseTransitionTimestamps"]
    running = next(e for e in entries if e["phase"] == "Running")
    scheduled = next(e for e in entries if e["phase"] == "Scheduled")
    running["phaseTransitionTimestamp"], scheduled["phaseTransitionTimestamp"] = (
        "2026-11-28T00:00:30Z",
        "2026-11-28T23:00:00Z",
    )


def inject_wrong_revision(sim: Simulator) -> None:
    sim.s.vmis[-1]["status"]["virtualMachineRevisionName"] = f"revision-start-vm-{sim.s.vm_uid}-9"


FAULTS = {
    "KV-RC-01": inject_delete_and_create_together,
    "KV-EX-01": inject_duplicate_create,
    "KV-LD-01": inject_standby_action,
    "KV-PH-01": inject_phase_regression,
    "KV-SV-01": inject_wrong_revision,
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lives, max_size=3), st.sampled_from(sorted(FAULTS)))
def test_one_injected_fault_is_reported_as_exactly_its_rule(ends, rule):
    sim = simulate_always(ends)
    FAULTS[rule](sim)
    _, assessment = sim.s.assess()
    assert violated_rules(assessment) == {rule}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lives.filter(lambda life: life.phase == "Failed"), max_size=2))
def test_rerun_on_failure_restarted_after_succeeded_is_reported(ends):
    sim = simulate_rerun([*ends, Life("Succeeded", True, 60, 0, 0.2, 0)])
    sim.t += 30
    sim.create()
    _, assessment = sim.s.assess()
    assert violated_rules(assessment) == {"KV-RS-03"}
