"""Random histories of the workload controllers of v1.9.0, on clusters that run them
(``Cluster(pools=True)``, ``Cluster(snapshots=True)``):

* ``pool_update(seed)``: a VirtualMachinePool of 2–3 VMs; its VM template is edited; the pool
  controller updates each VM's spec, then deletes each outdated VMI (the proactive update) and
  the VM controller starts a new one from the new template.
* ``replicaset(seed)``: a VirtualMachineInstanceReplicaSet scaled up, then down.
* ``snapshot_restore(seed)``: an online snapshot of a running VM (the guest is frozen and
  thawed); later the VM is restored from it — either stopped first, or restored while it runs,
  in which case the restore waits until the user stops it — and then started again.

Every history here is something v1.9.0 does as designed.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kvsim.cluster import Cluster
from kvsim.history import T0, History
from kvsim.kernel import SECOND
from kvsim.pool_vms import POOL
from kvsim.replicaset import RS


def _cluster(
    name: str, rng: random.Random, pools: bool = False, snapshots: bool = False
) -> Cluster:
    replicas = rng.choice((1, 2, 2))
    cluster = Cluster(name, T0, replicas_count=replicas, pools=pools, snapshots=snapshots)
    for node in cluster.node_names:
        cluster.nodes.skew_us[node] = rng.randint(-800, 800) * 1_000
    return cluster


def pool_update(seed: int) -> History:
    """A pool of 2–3 VMs whose template's memory is changed once (or twice)."""
    rng = random.Random(f"pool-update/{seed}")
    cluster = _cluster(f"pool-update-{seed}", rng, pools=True)
    pool, size = "web", rng.randint(2, 3)
    cluster.create_pool(T0 + rng.randint(20, 60) * SECOND, pool, size)
    when = T0 + rng.randint(180, 300) * SECOND
    cluster.edit_pool_memory(when, pool, rng.choice(("3Gi", "4Gi")))
    if rng.random() < 0.3:  # a second edit once the first update has rolled out
        when += rng.randint(180, 300) * SECOND
        cluster.edit_pool_memory(when, pool, "1Gi")
    capture_at = when + rng.randint(4, 8) * 60 * SECOND
    return History(seed, cluster, capture_at, tuple(f"{pool}-{i}" for i in range(size)))


def replicaset(seed: int) -> History:
    """A replica set of 1–2 VMIs scaled up to 3–4, then down to 1–2."""
    rng = random.Random(f"replicaset/{seed}")
    cluster = _cluster(f"replicaset-{seed}", rng, pools=True)
    name = "batch"
    cluster.create_replicaset(T0 + rng.randint(20, 60) * SECOND, name, rng.randint(1, 2))
    up = T0 + rng.randint(150, 240) * SECOND
    cluster.scale(up, RS, name, rng.randint(3, 4))
    down = up + rng.randint(150, 300) * SECOND
    cluster.scale(down, RS, name, rng.randint(1, 2))
    capture_at = down + rng.randint(3, 6) * 60 * SECOND
    return History(seed, cluster, capture_at, ())


def snapshot_restore(seed: int) -> History:
    """An online snapshot of ``vm-0``; later a restore, then a start."""
    rng = random.Random(f"snapshot-restore/{seed}")
    cluster = _cluster(f"snapshot-restore-{seed}", rng, snapshots=True)
    cluster.create_vm(T0 + rng.randint(20, 60) * SECOND, "vm-0")
    when = T0 + rng.randint(150, 240) * SECOND
    cluster.snapshot_vm(when, "vm-0-snap", "vm-0")
    when += rng.randint(120, 300) * SECOND
    stop_first = rng.random() < 0.5
    if stop_first:
        cluster.virtctl(when, "stop", "vm-0")
        when += rng.randint(40, 90) * SECOND
        cluster.restore_vm(when, "vm-0-restore", "vm-0", "vm-0-snap")
    else:  # the restore waits for the VM to be powered off (WaitGracePeriod)
        cluster.restore_vm(when, "vm-0-restore", "vm-0", "vm-0-snap")
        when += rng.randint(30, 120) * SECOND
        cluster.virtctl(when, "stop", "vm-0")
    when += rng.randint(60, 120) * SECOND
    cluster.virtctl(when, "start", "vm-0")
    capture_at = when + rng.randint(3, 6) * 60 * SECOND
    return History(seed, cluster, capture_at, ("vm-0",))


POOL_HISTORIES: dict[str, Callable[[int], History]] = {
    "pool-update": pool_update,
    "replicaset": replicaset,
    "snapshot-restore": snapshot_restore,
}
__all__ = ["POOL", "POOL_HISTORIES", "pool_update", "replicaset", "snapshot_restore"]
