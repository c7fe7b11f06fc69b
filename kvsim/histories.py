"""Random histories a cluster can really go through, and the faults the model exists to catch.

``legitimate(seed)`` draws VMs of every run strategy and drives them with what users and the
cluster do: virtctl start/stop/restart, run-strategy switches, spec edits inside and outside
the template, VM deletes and re-creates under the same name, guests that crash, shut down or
never start, webhook rejections, slow API calls, informer lag, replica crashes and short stalls.
Every one of these is something v1.9.0's code handles as designed, so a checker must find no
violation in them.

``with_fault(seed, fault)`` adds one deliberate departure from the code (or from the cluster's
guarantees) to such a history; the name says which rule it should trip.

Histories with live migrations, drains and node failures, on clusters that model virt-handler's
side of them, are in :mod:`kvsim.migration_histories` (``migrations``, ``drain``,
``node_failure``, ``with_migration_fault``), re-exported here. The histories above never
migrate, and stay as they were. Histories of the pool, VMIRS, snapshot and restore controllers
(``pool_update``, ``replicaset``, ``snapshot_restore``, on clusters built with ``pools=True`` /
``snapshots=True``) are in :mod:`kvsim.pool_histories`, re-exported here too.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kvsim.apiserver import Obj
from kvsim.cluster import Cluster
from kvsim.history import T0, History
from kvsim.informer import DropRule
from kvsim.kernel import MS, SECOND
from kvsim.migration_histories import (  # noqa: F401  (the live-migration histories, re-exported)
    MIGRATION_FAULTS,
    MIGRATION_HISTORIES,
    drain,
    migrations,
    node_failure,
    with_migration_fault,
)
from kvsim.nodes import Fate
from kvsim.pool_histories import (  # noqa: F401  (the workload-controller histories, re-exported)
    POOL_HISTORIES,
    pool_update,
    replicaset,
    snapshot_restore,
)
from kvsim.releases import SIMULATED, at_least

STRATEGIES = ("Always", "RerunOnFailure", "Manual", "Halted", "Once")
WEBHOOK_TIMEOUT = (
    'Internal error occurred: failed calling webhook "virtualmachineinstances-create-validator'
    '.kubevirt.io": failed to call webhook: Post "https://virt-api.kubevirt.svc:443/'
    'virtualmachineinstances-validate-create?timeout=10s": context deadline exceeded'
)
WEBHOOK_DENIED = (
    'admission webhook "virtualmachineinstances-create-validator.kubevirt.io" denied the request: '
    "spec.domain.resources.requests.memory '1Gi' is greater than the namespace quota"
)
FAULTS = (
    "duplicate-create",
    "delete-create-one-reconcile",
    "delete-create-one-reconcile-v4",
    "rerun-after-succeeded",
    "backoff-broken",
    "non-leader-action",
    "split-brain",
    "phase-regression",
    "wrong-revision",
    "second-launcher-pod",
)


def _fate(rng: random.Random) -> Fate | None:
    roll = rng.random()
    if roll < 0.35:
        return None
    if roll < 0.6:
        return Fate("crash", rng.randint(5, 240) * SECOND)
    if roll < 0.8:
        return Fate("shutdown", rng.randint(5, 240) * SECOND)
    return Fate("fail-start")


def _template_edit(vm: Obj) -> None:
    domain = vm["spec"]["template"]["spec"]["domain"]
    sizes = ("1Gi", "2Gi", "3Gi")
    size = sizes[(sizes.index(domain["memory"]["guest"]) + 1) % 3]
    domain["memory"]["guest"] = size
    domain["resources"]["requests"]["memory"] = size


def _relabel(vm: Obj) -> None:
    vm["metadata"].setdefault("labels", {})["team"] = "storage"


def _label_edit(vm: Obj) -> None:
    """A spec change outside ``spec.template``: the generation moves, the template does not."""
    vm["spec"].setdefault("dataVolumeTemplates", [])
    vm["spec"]["dataVolumeTemplates"] = []
    vm["spec"]["runStrategy"] = vm["spec"].get("runStrategy") or "Always"
    vm["spec"].pop("running", None)


def _vm_actions(cluster: Cluster, rng: random.Random, name: str, start: int, end: int) -> None:
    strategy = rng.choice(STRATEGIES)
    legacy = rng.random() < 0.1 and strategy in ("Always", "Halted")
    if legacy:
        cluster.create_vm(start, name, strategy=None, running=strategy == "Always")
    else:
        cluster.create_vm(start, name, strategy=strategy)
    for index in range(12):
        fate = _fate(rng)
        if fate is not None:
            cluster.fates[(name, index)] = fate
    when = start + rng.randint(3, 60) * SECOND
    while when < end:
        _one_action(cluster, rng, name, when)
        when += rng.randint(2, 150) * SECOND


def _one_action(cluster: Cluster, rng: random.Random, name: str, when: int) -> None:
    roll = rng.random()
    if roll < 0.45:
        cluster.virtctl(when, rng.choice(("start", "stop", "restart")), name)
    elif roll < 0.6:
        cluster.set_strategy(when, name, rng.choice(STRATEGIES))
    elif roll < 0.7:
        cluster.edit_vm(when, name, _template_edit, "edit spec.template")
    elif roll < 0.78:
        cluster.edit_vm(when, name, _label_edit, "edit spec outside the template")
    elif roll < 0.86:
        cluster.delete_vm(when, name)
        cluster.create_vm(when + rng.randint(1, 90) * SECOND, name, strategy=rng.choice(STRATEGIES))
    elif roll < 0.93:
        message = rng.choice((WEBHOOK_TIMEOUT, WEBHOOK_DENIED))
        cluster.reject_vmi_creates(when, name, message, rng.randint(1, 3))
    else:
        cluster.delete_vm(when, name)


def _cluster_events(cluster: Cluster, rng: random.Random, end: int) -> None:
    if rng.random() < 0.3:
        cluster.slow("VirtualMachineInstance", "create", rng.randint(200, 2_500) * MS)
    if rng.random() < 0.2:
        cluster.slow("VirtualMachine", "update", rng.randint(200, 1_500) * MS)
    if rng.random() < 0.25:
        cluster.crash(T0 + rng.randint(120, max(121, (end - T0) // SECOND)) * SECOND, 0)
    if rng.random() < 0.25:
        stall = rng.randint(1, 9) * SECOND  # shorter than the renew deadline: no failover
        cluster.freeze(T0 + rng.randint(120, max(121, (end - T0) // SECOND)) * SECOND, 0, stall)
    for replica in cluster.replicas:
        if rng.random() < 0.2:
            replica.informer_lag_us = rng.randint(5, 400) * MS
    for node in cluster.node_names:
        cluster.nodes.skew_us[node] = rng.randint(-800, 800) * MS  # NTP-kept node clocks
        if rng.random() < 0.1:  # a node whose clock is not kept: up to 90 s either way
            cluster.nodes.skew_us[node] = rng.randint(-90, 90) * SECOND


def legitimate(
    seed: int, vm_count: int | None = None, minutes: int | None = None, release: str = SIMULATED
) -> History:
    """A random legitimate history; ``release``: whose call-site positions the logs print."""
    rng = random.Random(seed)
    replicas = rng.choice((1, 2, 2, 3))
    cluster = Cluster(f"history-{seed}", T0, replicas_count=replicas, release=release)
    span = (minutes or rng.randint(4, 25)) * 60 * SECOND
    end = T0 + 60 * SECOND + span
    names = tuple(f"vm-{i}" for i in range(vm_count or rng.randint(1, 3)))
    for name in names:
        _vm_actions(cluster, rng, name, T0 + rng.randint(30, 120) * SECOND, end)
    _cluster_events(cluster, rng, end)
    verbose = rng.random() < 0.15  # logVerbosity.virtController: 4, as someone debugging sets it
    if verbose and at_least(release, "v1.6.0"):  # earlier: glog texts kvsim does not write
        for replica in cluster.replicas:
            replica.verbosity = 4
    capture_at = end + rng.randint(1, 600) * SECOND
    return History(seed, cluster, capture_at, names)


# --- faults ----------------------------------------------------------------------------------
def with_fault(seed: int, fault: str) -> History:
    """``fault`` done to VM ``vm-0`` (an Always VM, unless the fault needs another strategy)
    among up to two VMs living a random legitimate life. The code faults apply to ``vm-0``
    only; a replica that runs without the lease, or stalls, acts on every VM."""
    rng = random.Random(f"{seed}/{fault}")
    cluster = Cluster(f"fault-{fault}-{seed}", T0, replicas_count=2)
    name = "vm-0"
    start = T0 + rng.randint(30, 90) * SECOND
    FAULT_SETUP[fault](cluster, rng, name, start)
    for replica in cluster.replicas:
        replica.faults.names = [name]
    capture_at = start + rng.randint(8, 15) * 60 * SECOND
    others = tuple(f"vm-{i}" for i in range(1, 1 + rng.randint(0, 2)))
    for other in others:
        _vm_actions(cluster, rng, other, T0 + rng.randint(30, 120) * SECOND, capture_at)
    cluster.inject(fault)
    return History(seed, cluster, capture_at, (name, *others))


def _duplicate_create(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    """The leader's VMI informer misses the add of the new VMI; five minutes later the
    expectation expires and the controller, seeing no VMI, starts the VM again."""
    cluster.create_vm(start, name)
    cluster.drop_event(start - SECOND, 0, "VirtualMachineInstance", name, "ADDED")
    cluster.drop_event(start - SECOND, 0, "VirtualMachineInstance", name, "MODIFIED")
    cluster.at(start + 2 * SECOND, lambda: _drop_all_vmi_events(cluster, name))
    relabel = start + 301 * SECOND + rng.randint(1, 60) * SECOND
    cluster.edit_vm(relabel, name, _relabel, "kubectl label vm")  # any update re-enqueues it


def _drop_all_vmi_events(cluster: Cluster, name: str) -> None:
    controller = cluster.replicas[0].vm_controller
    if controller is not None:
        rule = DropRule("VirtualMachineInstance", name, "MODIFIED", 50)
        controller.rt.informers.drops.append(rule)


def _delete_create(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.create_vm(start, name)
    cluster.fates[(name, 0)] = Fate("crash", rng.randint(20, 90) * SECOND)
    for replica in cluster.replicas:
        replica.faults.create_after_delete = True


def _delete_create_verbose(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    """The same bug with logVerbosity.virtController: 4, whose reconcile boundaries decide."""
    _delete_create(cluster, rng, name, start)
    for replica in cluster.replicas:
        replica.verbosity = 4


def _rerun_after_succeeded(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.create_vm(start, name, strategy="RerunOnFailure")
    cluster.fates[(name, 0)] = Fate("shutdown", rng.randint(20, 90) * SECOND)
    for replica in cluster.replicas:
        replica.faults.rerun_after_succeeded = True


def _backoff_broken(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.create_vm(start, name)
    for index in range(6):
        cluster.fates[(name, index)] = Fate("fail-start")
    for replica in cluster.replicas:
        replica.faults.ignore_backoff = True


def _non_leader(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.replicas[1].run_without_lease = True
    cluster.create_vm(start, name)


def _split_brain(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    """The leader's node stalls right after a start decision, past the lease; the standby takes
    over and starts the VM; the old leader resumes mid-reconcile and creates on its stale view
    before its renewal fails (client-go does not fence a deposed leader)."""
    cluster.create_vm(start, name)
    cluster.replicas[0].faults.stall_after_start_decision = rng.randint(25, 60) * SECOND


def _phase_regression(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.create_vm(start, name)
    for replica in cluster.replicas:
        replica.faults.phase_regression = True


def _second_launcher_pod(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    """The VMI controller, with the fault, creates a second launcher pod for a VMI that has one."""
    cluster.create_vm(start, name)
    for replica in cluster.replicas:
        replica.faults.second_launcher_pod = True


def _wrong_revision(cluster: Cluster, rng: random.Random, name: str, start: int) -> None:
    cluster.create_vm(start, name)
    for replica in cluster.replicas:
        replica.faults.revision_generation_offset = -1
    cluster.edit_vm(start + 20 * SECOND, name, _template_edit, "edit spec.template")
    cluster.virtctl(start + 40 * SECOND, "restart", name)


FAULT_SETUP: dict[str, Callable[[Cluster, random.Random, str, int], None]] = {
    "duplicate-create": _duplicate_create,
    "delete-create-one-reconcile": _delete_create,
    "delete-create-one-reconcile-v4": _delete_create_verbose,
    "rerun-after-succeeded": _rerun_after_succeeded,
    "backoff-broken": _backoff_broken,
    "non-leader-action": _non_leader,
    "split-brain": _split_brain,
    "phase-regression": _phase_regression,
    "wrong-revision": _wrong_revision,
    "second-launcher-pod": _second_launcher_pod,
}
