"""Random histories with live migrations, on clusters that model virt-handler's heartbeats and
migration side (``Cluster(live_migration=True)``), and the faults around them.

* ``migrations(seed)``: VMs (with ``evictionStrategy: LiveMigrate``) moved by ``virtctl
  migrate``: most migrations succeed, at least one fails on the nodes (the source's libvirt
  gives up), one is deleted by its user before its target is ready, and one runs while the
  other two nodes are cordoned, so its target pod stays unschedulable until the controller
  deletes it after 300 s and the migration fails.
* ``drain(seed)``: the node of ``vm-0`` is drained; the evacuation controller migrates its
  LiveMigrate VMIs, the first attempt of ``vm-0`` fails on the nodes, the next one (after the
  20 s backoff) succeeds and the drain completes.
* ``node_failure(seed)``: virt-handler on the node of ``vm-0`` hangs, the guest dies unseen; five
  minutes after the last heartbeat the node controller fails the VMI and the VM controller
  starts a new one on another node.
* ``workload_update(seed)``: KubeVirt is updated to a new virt-launcher image; the workload
  updater migrates each running VM off the outdated launcher.
* ``with_migration_fault(seed, fault)``: one of :data:`MIGRATION_FAULTS` done to ``vm-0``.

Every history here is something v1.9.0 does as designed except the injected fault.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kvsim.cluster import Cluster
from kvsim.history import T0, History
from kvsim.kernel import SECOND

MIGRATION_FAULTS = (
    "second-target-pod",
    "node-change-without-migration",
    "evacuate-forbidden",
    "target-pod-left",
)
NODES = ("node-a", "node-b", "node-c")


def _cluster(name: str, rng: random.Random) -> Cluster:
    cluster = Cluster(name, T0, replicas_count=rng.choice((1, 2, 2)), live_migration=True)
    for node in cluster.node_names:
        cluster.nodes.skew_us[node] = rng.randint(-800, 800) * 1_000
    return cluster


def _vms(cluster: Cluster, rng: random.Random, count: int, strategy: str = "LiveMigrate") -> None:
    for index in range(count):
        chosen = strategy if index == 0 else rng.choice((strategy, strategy, "None"))
        cluster.create_vm(T0 + rng.randint(20, 60) * SECOND, f"vm-{index}", eviction=chosen)


def migrations(seed: int) -> History:
    """Successful and failed ``virtctl migrate`` runs, and one whose target cannot be placed."""
    rng = random.Random(f"migrations/{seed}")
    cluster = _cluster(f"migrations-{seed}", rng)
    names = tuple(f"vm-{i}" for i in range(rng.randint(2, 3)))
    for name in names:
        cluster.create_vm(T0 + rng.randint(20, 60) * SECOND, name, eviction="LiveMigrate")
    when = T0 + rng.randint(120, 180) * SECOND
    attempts: dict[str, int] = {}
    count = rng.randint(3, 5)
    failing = rng.randrange(count)  # at least one fails on the nodes
    for index in range(count):
        name = rng.choice(names)
        attempt = attempts.get(name, 0)
        attempts[name] = attempt + 1
        if index == failing or rng.random() < 0.25:
            cluster.migration_fates[(name, attempt)] = "fail"
        cluster.migrate(when, name)
        when += rng.randint(60, 150) * SECOND
    cluster.migrate(when, names[-1])  # cancelled before its target is ready
    cluster.cancel_migration(when + rng.randint(500, 1_500) * 1_000, names[-1])
    when += rng.randint(60, 120) * SECOND
    _unschedulable_migration(cluster, names[0], when)
    capture_at = when + (300 + rng.randint(60, 240)) * SECOND
    return History(seed, cluster, capture_at, names)


def _unschedulable_migration(cluster: Cluster, name: str, when: int) -> None:
    """The two nodes ``name`` is not on are cordoned; its migration cannot place a target."""

    def cordon_others() -> None:
        here = cluster.node_of(name)
        for node in NODES:
            if node != here:
                cluster.cordon(cluster.kernel.now, node)
                cluster.cordon(cluster.kernel.now + 420 * SECOND, node, unschedulable=False)

    cluster.at(when, cordon_others)
    cluster.migrate(when + 5 * SECOND, name)


def drain(seed: int) -> History:
    """``kubectl drain`` of the node of ``vm-0``, whose first migration fails."""
    rng = random.Random(f"drain/{seed}")
    cluster = _cluster(f"drain-{seed}", rng)
    _vms(cluster, rng, rng.randint(2, 4))
    cluster.migration_fates[("vm-0", 0)] = "fail"
    when = T0 + rng.randint(150, 240) * SECOND
    cluster.at(when, lambda: _drain_node_of(cluster, "vm-0"))
    capture_at = when + rng.randint(6, 12) * 60 * SECOND
    return History(seed, cluster, capture_at, tuple(f"vm-{i}" for i in range(4)))


def _drain_node_of(cluster: Cluster, name: str) -> None:
    node = cluster.node_of(name)
    if node is not None:
        cluster.drain(cluster.kernel.now, node)


def node_failure(seed: int) -> History:
    """virt-handler on the node of ``vm-0`` hangs, then the guest dies unseen."""
    rng = random.Random(f"node-failure/{seed}")
    cluster = _cluster(f"node-failure-{seed}", rng)
    names = tuple(f"vm-{i}" for i in range(rng.randint(1, 3)))
    for name in names:
        cluster.create_vm(T0 + rng.randint(20, 60) * SECOND, name)
    when = T0 + rng.randint(150, 240) * SECOND

    def hang() -> None:
        node = cluster.node_of("vm-0")
        if node is not None:
            cluster.handler_hangs(cluster.kernel.now, node)

    cluster.at(when, hang)
    cluster.guest_dies(when + rng.randint(20, 120) * SECOND, "vm-0")
    capture_at = when + rng.randint(10, 16) * 60 * SECOND
    return History(seed, cluster, capture_at, names)


NEW_LAUNCHER = "quay.io/kubevirt/virt-launcher:v1.9.1"


def workload_update(seed: int) -> History:
    """KubeVirt is updated: virt-controller's launcher image changes, and the workload updater
    migrates every running LiveMigratable VMI off the outdated one. With the ``Evict`` method
    instead (odd seeds) it evicts each VMI's pod: ``vm-0`` (evictionStrategy None) loses its pod
    and its VM starts a new VMI; the webhook refuses the others (LiveMigrate) and marks them,
    and the evacuation controller migrates them."""
    rng = random.Random(f"workload-update/{seed}")
    methods = ("Evict",) if seed % 2 else ("LiveMigrate",)
    cluster = Cluster(
        f"workload-update-{seed}",
        T0,
        replicas_count=rng.choice((1, 2, 2)),
        live_migration=True,
        workload_updates=True,
        workload_update_methods=methods,
    )
    names = tuple(f"vm-{i}" for i in range(rng.randint(1, 3)))
    for name in names:
        evicted = "Evict" in methods and name == "vm-0"
        strategy = "None" if evicted else "LiveMigrate"
        cluster.create_vm(T0 + rng.randint(20, 60) * SECOND, name, eviction=strategy)
    when = T0 + rng.randint(150, 240) * SECOND
    cluster.upgrade_launcher(when, NEW_LAUNCHER)
    return History(seed, cluster, when + rng.randint(5, 9) * 60 * SECOND, names)


MIGRATION_HISTORIES: dict[str, Callable[[int], History]] = {
    "migrations": migrations,
    "drain": drain,
    "node-failure": node_failure,
    "workload-update": workload_update,
}


# --- faults ----------------------------------------------------------------------------------
def with_migration_fault(seed: int, fault: str) -> History:
    """``fault`` done to ``vm-0`` (the code faults apply to it only)."""
    rng = random.Random(f"{seed}/{fault}")
    cluster = _cluster(f"fault-{fault}-{seed}", rng)
    capture_at = FAULT_SETUP[fault](cluster, rng)
    for replica in cluster.replicas:
        replica.faults.names = ["vm-0"]
    cluster.inject(fault)
    return History(seed, cluster, capture_at, ("vm-0", "vm-1"))


def _second_target_pod(cluster: Cluster, rng: random.Random) -> int:
    """The migration controller creates two target pods for one attempt."""
    _vms(cluster, rng, 2)
    for replica in cluster.replicas:
        replica.faults.second_target_pod = True
    when = T0 + rng.randint(120, 200) * SECOND
    cluster.migrate(when, "vm-0")
    return when + rng.randint(4, 8) * 60 * SECOND


def _node_change(cluster: Cluster, rng: random.Random) -> int:
    """The hand-off moves ``status.nodeName`` to the target; the migration then fails."""
    _vms(cluster, rng, 2)
    for replica in cluster.replicas:
        replica.faults.node_change_without_migration = True
    cluster.migration_fates[("vm-0", 0)] = "fail"
    when = T0 + rng.randint(120, 200) * SECOND
    cluster.migrate(when, "vm-0")
    return when + rng.randint(4, 8) * 60 * SECOND


def _evacuate_forbidden(cluster: Cluster, rng: random.Random) -> int:
    """A drain marks an ``External`` VMI (the webhook does); evacuation migrates it anyway."""
    _vms(cluster, rng, 2, strategy="External")
    for replica in cluster.replicas:
        replica.faults.evacuate_forbidden = True
    when = T0 + rng.randint(150, 240) * SECOND
    cluster.at(when, lambda: _drain_node_of(cluster, "vm-0"))
    return when + rng.randint(5, 9) * 60 * SECOND


def _target_pod_left(cluster: Cluster, rng: random.Random) -> int:
    """The other nodes stay cordoned, so the target pod of ``vm-0`` cannot be placed; the
    controller never deletes it after its 300 s unschedulable timeout."""
    _vms(cluster, rng, 2)
    for replica in cluster.replicas:
        replica.faults.target_pod_left = True
    when = T0 + rng.randint(120, 200) * SECOND

    def cordon_others() -> None:
        here = cluster.node_of("vm-0")
        for node in NODES:
            if node != here:
                cluster.cordon(cluster.kernel.now, node)

    cluster.at(when, cordon_others)
    cluster.migrate(when + 5 * SECOND, "vm-0")
    return when + rng.randint(9, 13) * 60 * SECOND


FAULT_SETUP: dict[str, Callable[[Cluster, random.Random], int]] = {
    "second-target-pod": _second_target_pod,
    "node-change-without-migration": _node_change,
    "evacuate-forbidden": _evacuate_forbidden,
    "target-pod-left": _target_pod_left,
}
