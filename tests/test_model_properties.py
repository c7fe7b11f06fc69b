"""Property tests over the simulator of v1.9.0's virt-controller (kvsim): any history Hypothesis
draws for one VM passes the model; the same kind of history with one fault is reported as that
fault's rule, and no rule the fault does not break.

A history is a run strategy, how each incarnation of the VM ends on its own (a guest crash or
shutdown, a launcher that fails before the guest runs, or none), what users do and when
(virtctl start/stop/restart, run-strategy switches, template edits, webhook rejections), and
the cluster (one to three replicas, verbosity 2 or 4, informer lag). kvsim runs it as v1.9.0's
code does; ``tests/test_model_simulated.py`` adds damaged evidence and many VMs per history.

Each property runs a fixed number of examples (``KVTRACE_EXAMPLES``, default 60, a few seconds);
run more by hand: ``KVTRACE_EXAMPLES=500 python -m pytest tests/test_model_properties.py``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvsim import timefmt
from kvsim.apiserver import Obj
from kvsim.cluster import Capture, Cluster
from kvsim.histories import WEBHOOK_DENIED, WEBHOOK_TIMEOUT
from kvsim.kernel import MS, SECOND
from kvsim.nodes import Fate
from tests.simulated import assessed, violated_rules

EXAMPLES = int(os.environ.get("KVTRACE_EXAMPLES", "60"))
BUDGET = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
START = timefmt.from_iso("2026-12-08T14:00:00Z")
NAME = "web"
STRATEGIES = ("Always", "RerunOnFailure", "Manual", "Halted", "Once")
CREATED = START + 30 * SECOND


@dataclass(frozen=True)
class Recipe:
    """One VM's history: what happens to it, and the cluster it runs in."""

    strategy: str
    fates: tuple[Fate | None, ...]  # how incarnation 0, 1, … ends on its own
    actions: tuple[tuple[int, str], ...]  # (seconds after the previous action, what)
    replicas: int
    verbosity: int
    lag_ms: int  # extra informer lag of the first replica
    seed: int


seconds = st.integers(min_value=5, max_value=240).map(lambda s: s * SECOND)
fates = st.one_of(
    st.none(),
    st.builds(Fate, st.sampled_from(("crash", "shutdown")), seconds),
    st.just(Fate("fail-start")),
)
ACTIONS = (
    "virtctl start",
    "virtctl stop",
    "virtctl restart",
    *(f"runStrategy={s}" for s in STRATEGIES),
    "edit spec.template",
    "webhook rejects",
)
actions = st.tuples(st.integers(min_value=2, max_value=150), st.sampled_from(ACTIONS))


def recipes(min_replicas: int = 1) -> st.SearchStrategy[Recipe]:
    return st.builds(
        Recipe,
        strategy=st.sampled_from(STRATEGIES),
        fates=st.lists(fates, max_size=6).map(tuple),
        actions=st.lists(actions, max_size=6).map(tuple),
        replicas=st.integers(min_value=min_replicas, max_value=3),
        verbosity=st.sampled_from((2, 4)),
        lag_ms=st.integers(min_value=0, max_value=400),
        seed=st.integers(min_value=0, max_value=2**16),
    )


def _more_memory(vm: Obj) -> None:
    domain = vm["spec"]["template"]["spec"]["domain"]
    size = "3Gi" if domain["memory"]["guest"] == "2Gi" else "2Gi"
    domain["memory"]["guest"] = domain["resources"]["requests"]["memory"] = size


def _act(cluster: Cluster, when: int, what: str, seed: int) -> None:
    if what.startswith("virtctl "):
        cluster.virtctl(when, what.removeprefix("virtctl "), NAME)
    elif what.startswith("runStrategy="):
        cluster.set_strategy(when, NAME, what.removeprefix("runStrategy="))
    elif what == "edit spec.template":
        cluster.edit_vm(when, NAME, _more_memory, what)
    else:
        message = (WEBHOOK_TIMEOUT, WEBHOOK_DENIED)[seed % 2]
        cluster.reject_vmi_creates(when, NAME, message, times=1 + seed % 3)


def cluster_for(recipe: Recipe, strategy: str | None = None) -> tuple[Cluster, int]:
    """The cluster with the recipe scheduled, and when its last action happens."""
    cluster = Cluster(f"property-{recipe.seed}", START, replicas_count=recipe.replicas)
    cluster.create_vm(CREATED, NAME, strategy=strategy or recipe.strategy)
    for index, fate in enumerate(recipe.fates):
        if fate is not None:
            cluster.fates[(NAME, index)] = fate
    for replica in cluster.replicas:
        replica.verbosity = recipe.verbosity
    cluster.replicas[0].informer_lag_us = recipe.lag_ms * MS
    when = CREATED
    for gap, what in recipe.actions:
        when += gap * SECOND
        _act(cluster, when, what, recipe.seed)
    return cluster, when


def capture_of(cluster: Cluster, last: int) -> Capture:
    return cluster.capture(last + 3 * 60 * SECOND)


@BUDGET
@given(recipes())
def test_the_controllers_own_behaviour_has_no_violations(recipe: Recipe):
    cluster, last = cluster_for(recipe)
    _, assessment = assessed(capture_of(cluster, last), NAME)
    assert violated_rules(assessment) == set(), [(v.rule, v.why) for v in assessment.violations()]


# --- one fault in such a history -------------------------------------------------------------
def _relabel(vm: Obj) -> None:
    vm["metadata"].setdefault("labels", {})["tier"] = "frontend"


def stale_cache(recipe: Recipe) -> Capture:
    """The leader's VMI informer misses the new VMI's add and updates; once the create
    expectation has expired (5 min) a label edit re-enqueues the VM and it is started again."""
    cluster, _ = cluster_for(replace(recipe, strategy="Always", fates=(), actions=()))
    cluster.drop_event(CREATED - SECOND, 0, "VirtualMachineInstance", NAME, "ADDED")
    cluster.drop_event(CREATED - SECOND, 0, "VirtualMachineInstance", NAME, "MODIFIED", 50)
    relabel = CREATED + (301 + recipe.seed % 60) * SECOND
    cluster.edit_vm(relabel, NAME, _relabel, "kubectl label vm")
    return cluster.capture(relabel + 60 * SECOND)


def create_after_delete(recipe: Recipe) -> Capture:
    """The code fault whose Always stop branch does not return (vm.go:1016), at verbosity 4:
    the first incarnation ends on its own, and one reconcile deletes it and starts the next;
    what users do comes after."""
    first = recipe.fates[0] if recipe.fates else None
    if first is None or first.how == "fail-start":
        first = Fate("crash", 60 * SECOND)
    ended = (first.after + 30 * SECOND) // SECOND
    actions = recipe.actions
    if actions:  # what users do comes after the first ending
        actions = ((actions[0][0] + ended, actions[0][1]), *actions[1:])
    background = replace(
        recipe, strategy="Always", fates=(first, *recipe.fates[1:]), actions=actions, verbosity=4
    )
    cluster, last = cluster_for(background)
    for replica in cluster.replicas:
        replica.faults.create_after_delete = True
    return capture_of(cluster, max(last, CREATED + ended * SECOND))


def standby_acting(recipe: Recipe) -> Capture:
    """The standby runs its controllers without the lease (a code fault)."""
    cluster, last = cluster_for(replace(recipe, strategy="Always"))
    cluster.replicas[1].run_without_lease = True
    return capture_of(cluster, last)


def wrong_revision(recipe: Recipe) -> Capture:
    """startVMI names the previous generation's start revision (a code fault), through template
    edits and restarts of a VM that keeps running."""
    edits = tuple(
        (gap, what)
        for gap, _ in recipe.actions[:3]
        for what in ("edit spec.template", "virtctl restart")
    )
    cluster, last = cluster_for(
        replace(recipe, strategy="Always", fates=(), actions=edits or ((20, "virtctl restart"),))
    )
    for replica in cluster.replicas:
        replica.faults.revision_generation_offset = -1
    return capture_of(cluster, last)


def split_brain(recipe: Recipe) -> Capture:
    """The leader's node stalls past its lease right after its first start decision; the
    standby takes over; the old leader resumes and acts on its stale view."""
    cluster, last = cluster_for(replace(recipe, strategy="Always"))
    cluster.replicas[0].faults.stall_after_start_decision = (25 + recipe.seed % 35) * SECOND
    return capture_of(cluster, last)


# Each fault, the rule it breaks, and the rules its consequences may break as well: two replicas
# acting on one VM both delete its final VMI (KV-RC-03) or both create one, the second colliding
# with the first (KV-EX-01), and both VMI controllers may create a launcher pod (KV-PO-01); the reconcile that deleted and created at once then removes the VM
# finalizer it meant for the deleted VMI by name, from its successor (KV-SV-02).
FAULTS = {
    "stale-cache": (stale_cache, "KV-EX-01", set()),
    "create-after-delete": (create_after_delete, "KV-RC-01", {"KV-SV-02"}),
    "standby-acting": (standby_acting, "KV-LD-01", {"KV-EX-01", "KV-RC-03", "KV-PO-01"}),
    "wrong-revision": (wrong_revision, "KV-SV-01", set()),
    "split-brain": (split_brain, "KV-LD-02", {"KV-EX-01", "KV-RC-03", "KV-PO-01"}),
}


@BUDGET
@given(recipes(min_replicas=2), st.sampled_from(sorted(FAULTS)))
def test_one_fault_is_reported_as_its_rule(recipe: Recipe, fault: str):
    build, rule, consequences = FAULTS[fault]
    _, assessment = assessed(build(recipe), NAME)
    violated = violated_rules(assessment)
    assert rule in violated
    assert violated <= {rule, *consequences}, [(v.rule, v.why) for v in assessment.violations()]
