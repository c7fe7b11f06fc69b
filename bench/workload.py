"""What happens in the bench cluster, and when: the VMs, what their users do to them, how their
guests end, the leader's crash, and the faults injected on purpose.

Every action goes through :class:`kvsim.cluster.Cluster`; what the controllers then do and log
is kvsim's. VM ``i`` is ``vm-{i:05d}`` in ``namespace_of(i)``. Each VM draws a run strategy, a
pace (most VMs are quiet, a few are busy) and a fate for each of its incarnations (runs on,
crashes, shuts down, never starts; a few crash-loop for hours).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from kvsim import timefmt
from kvsim.cluster import Cluster
from kvsim.histories import WEBHOOK_DENIED, WEBHOOK_TIMEOUT
from kvsim.kernel import SECOND
from kvsim.nodes import Fate

NAMESPACES = ("default", "team-a", "team-b", "prod")
START = timefmt.from_iso("2026-11-28T00:00:00Z")
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
STRATEGY_MIX = (
    ("Always", 0.55),
    ("RerunOnFailure", 0.15),
    ("Manual", 0.15),
    ("Halted", 0.10),
    ("Once", 0.05),
)
# (share of VMs, mean minutes between two things their users do)
PACES = ((0.60, 150.0), (0.33, 25.0), (0.07, 5.0))
RESTART_AFTER = 45 * SECOND  # the crashed leader's container comes back after this
FAULT_WINDOW = 15 * MINUTE  # a fault's evidence is complete this long after it starts

# The faults a bench VM can carry, each with the rules whose verdicts it must turn into
# violations: first the rule it exists to trip (tests/test_model_simulated.py EXPECTED, with
# "violation" strength), then what else it does. The delete-and-create bug patches the VMI it
# read, finalizer removal included, and so strips the VM controller's finalizer from the
# successor it has just created under the same name (KV-SV-02). A replica has one CodeFaults,
# whose ``names`` select the VMs for all its code faults, so a shard carries at most one code
# fault; duplicate-create is an informer fault and goes anywhere.
RULES_OF_FAULT = {
    "duplicate-create": ("KV-EX-01",),
    "wrong-revision": ("KV-SV-01",),
    "phase-regression": ("KV-PH-01",),
    "delete-create-one-reconcile-v4": ("KV-RC-01", "KV-SV-02"),
}
INFORMER_FAULT = "duplicate-create"


def vm_name(index: int) -> str:
    return f"vm-{index:05d}"


def namespace_of(index: int) -> str:
    return NAMESPACES[index % len(NAMESPACES)]


@dataclass(frozen=True)
class Timeline:
    """The moments every shard shares: the control plane must be the same in all of them."""

    start: int  # the replicas start
    created_by: int  # every VM exists by then
    failover: int  # the leader (replica 0) crashes; replica 1 takes the lease
    end: int  # the last user action
    capture_at: int

    @property
    def fault_window(self) -> tuple[int, int]:
        """When an injected fault may start: replica 0 leads from then until it is decided."""
        return self.start + 2 * MINUTE, self.failover - FAULT_WINDOW


def timeline(hours: float) -> Timeline:
    span = max(int(hours * HOUR), 40 * MINUTE)
    return Timeline(
        start=START,
        created_by=START + max(2 * MINUTE, span // 10),
        failover=START + span // 2,
        end=START + span,
        capture_at=START + span + 3 * MINUTE,
    )


def code_fault_of_shard(shard: int, verbosity: int) -> str:
    kinds = ["wrong-revision", "phase-regression"]
    if verbosity >= 4:  # its reconcile boundaries are only logged at verbosity 4
        kinds.append("delete-create-one-reconcile-v4")
    return kinds[shard % len(kinds)]


def plan_faults(seed: int, vms: int, every: int, shard_size: int, verbosity: int) -> dict[int, str]:
    """About one VM in ``every`` gets a fault (at least one). kvsim's fault setups create their
    VM in ``default``, so the faulty VMs are among those of that namespace."""
    if every <= 0:
        return {}
    rng = random.Random(f"{seed}/faults")
    candidates = [i for i in range(vms) if namespace_of(i) == "default"]
    chosen = sorted(rng.sample(candidates, min(len(candidates), max(1, round(vms / every)))))
    return {
        i: INFORMER_FAULT if rng.random() < 0.5 else code_fault_of_shard(i // shard_size, verbosity)
        for i in chosen
    }


# --- a legitimate VM -------------------------------------------------------------------------
def _pick(rng: random.Random, weighted: tuple[tuple[Any, float], ...]) -> Any:
    roll = rng.random()
    for value, share in weighted:
        roll -= share
        if roll < 0:
            return value
    return weighted[-1][0]


def _fates(cluster: Cluster, rng: random.Random, name: str, incarnations: int) -> None:
    """A fate for each of the ``incarnations`` the VM may have (each of its users' actions
    starts at most one, and so does each crash); a crash loop, if any, at a random one."""
    crash_loop = rng.randrange(incarnations) if rng.random() < 0.05 else -1
    loop_length = rng.randint(5, 40)
    for index in range(incarnations + loop_length):
        if crash_loop <= index < crash_loop + loop_length:
            cluster.fates[(name, index)] = Fate("fail-start")
            continue
        roll = rng.random()
        if roll < 0.12:
            cluster.fates[(name, index)] = Fate("crash", rng.randint(60, 3 * 3600) * SECOND)
        elif roll < 0.22:
            cluster.fates[(name, index)] = Fate("shutdown", rng.randint(60, 3 * 3600) * SECOND)
        elif roll < 0.26:
            cluster.fates[(name, index)] = Fate("fail-start")


def _resize(vm: dict[str, Any]) -> None:
    """A template change: the guest's memory steps through 1Gi, 2Gi and 3Gi."""
    domain = vm["spec"]["template"]["spec"]["domain"]
    sizes = ("1Gi", "2Gi", "3Gi")
    size = sizes[(sizes.index(domain["memory"]["guest"]) + 1) % len(sizes)]
    domain["memory"]["guest"] = size
    domain["resources"]["requests"]["memory"] = size


def _label(vm: dict[str, Any]) -> None:
    """``kubectl label vm``: metadata only, the generation stays."""
    labels = vm["metadata"].setdefault("labels", {})
    labels["bench.kvtrace.io/touched"] = str(int(labels.get("bench.kvtrace.io/touched", "0")) + 1)


def _one_action(cluster: Cluster, rng: random.Random, name: str, namespace: str, when: int) -> None:
    roll = rng.random()
    if roll < 0.42:
        cluster.virtctl(when, rng.choice(("start", "stop", "restart")), name, namespace)
    elif roll < 0.54:
        strategy = _pick(rng, STRATEGY_MIX)
        cluster.set_strategy(when, name, strategy, namespace)
    elif roll < 0.66:
        cluster.edit_vm(when, name, _resize, "edit spec.template", namespace)
    elif roll < 0.72:
        cluster.edit_vm(when, name, _label, "kubectl label vm", namespace)
    elif roll < 0.82:
        cluster.delete_vm(when, name, namespace)
        again = when + rng.randint(1, 90) * SECOND
        cluster.create_vm(again, name, namespace, _pick(rng, STRATEGY_MIX))
    elif roll < 0.97:
        message = rng.choice((WEBHOOK_TIMEOUT, WEBHOOK_DENIED))
        cluster.reject_vmi_creates(when, name, message, rng.randint(1, 3))
        cluster.virtctl(when + rng.randint(1, 20) * SECOND, "restart", name, namespace)
    else:  # gone for a while: its owner re-creates it later
        cluster.delete_vm(when, name, namespace)
        again = when + rng.randint(10, 180) * MINUTE
        cluster.create_vm(again, name, namespace, _pick(rng, STRATEGY_MIX))


def plan_vm(cluster: Cluster, rng: random.Random, index: int, moments: Timeline) -> None:
    """Create VM ``index`` and schedule everything its users do until ``moments.end``."""
    name, namespace = vm_name(index), namespace_of(index)
    strategy = _pick(rng, STRATEGY_MIX)
    created = moments.start + rng.randint(30 * SECOND, moments.created_by - moments.start)
    if strategy in ("Always", "Halted") and rng.random() < 0.1:  # the older ``running:`` field
        cluster.create_vm(created, name, namespace, None, running=strategy == "Always")
    else:
        cluster.create_vm(created, name, namespace, strategy)
    mean_gap = _pick(rng, tuple((minutes, share) for share, minutes in PACES)) * MINUTE
    _fates(cluster, rng, name, int(2 * (moments.end - created) / mean_gap) + 4)
    when = created + int(rng.expovariate(1 / mean_gap))
    while when < moments.end:
        _one_action(cluster, rng, name, namespace, when)
        when += max(SECOND, int(rng.expovariate(1 / mean_gap)))
