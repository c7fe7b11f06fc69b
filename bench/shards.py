"""The bench cluster, simulated as shards run in parallel and merged into one capture.

kvsim is pure Python, and some of what v1.9.0's controllers do costs time in proportion to the
objects in the cache (every VMI reconcile lists the launcher pods, every VM reconcile the
controller revisions), so one cluster of thousands of VMs would take hours. The bench cluster is
therefore run as shards of :data:`SHARD_SIZE` VMs. Every shard is the same cluster: the same seed
gives the same virt-controller pods, started at the same moments, with the same leader crash at
the same instant; only what happens to the VMs differs, drawn from the shard's own API server
and node randomness. The merged capture is the history one cluster with all those VMs had:

- each virt-controller container's log is the primary shard's log (start-up, election, the
  controllers' start) plus the VM lines every other shard's same container wrote;
- the objects are the primary's plus every other shard's objects outside ``kubevirt`` (VMs,
  VMIs, launcher pods, revisions, their Events) and the nodes that host their VMIs;
- the Lease, its Events and the virt-controller pods are the primary's.

The merge checks what makes that sound, and raises :class:`MergeError` otherwise: every shard
ran the same containers; a shard's lines outside the control plane all belong to its own VMs;
and each falls inside the primary's leadership of that container (acquired before it, alive
after it). The primary is the first shard for which that holds: the new leader's acquisition
after the crash varies by a few ms to a retry period between shards, so one whose leader
acquired no later than any other's is taken.

What the shards do not share: each has its own work queues (so the merged leader ran 3 VM
workers per shard, not 3 in all), its own rate limiter bucket, and its own resourceVersion
sequence (kvtrace reads resourceVersion only to keep the newest copy of an object).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from workload import (
    INFORMER_FAULT,
    NAMESPACES,
    RESTART_AFTER,
    Timeline,
    namespace_of,
    plan_vm,
    vm_name,
)

from kvsim.cluster import Capture, Cluster
from kvsim.histories import FAULT_SETUP
from kvsim.kernel import MS
from kvsim.logs import ContainerLog, Line
from kvsim.replica import CONTROLLER_STARTS, NAMESPACE

SHARD_SIZE = 50
# virt-operator's default. With a second standby, which of the two takes the lease after the
# crash is a race that goes one way in some shards and the other in others: no merge then.
REPLICAS = 2
ACQUIRED = "leaderelection.go:271"  # "successfully acquired lease kubevirt/virt-controller"
# The call sites of what virt-controller's main (kvsim.replica) prints, as opposed to its
# controllers: start-up, leader election, informers, each controller's "Starting …" line.
CONTROL_PLANE_FILES = ("application.go:", "leaderelection.go:", "virtinformers.go:")
CONTROL_PLANE_SITES = frozenset(pos for _, pos in CONTROLLER_STARTS)

VM_KEY = re.compile(rf"\b(?:{'|'.join(NAMESPACES)})/vm-\d{{5}}\b")
LogId = tuple[str, str, str, str]  # namespace, pod, container, "current" | "previous"


class MergeError(Exception):
    """The shards cannot be one cluster's history; the message says which and why."""


@dataclass(frozen=True)
class ShardSpec:
    seed: int
    index: int
    first: int  # VM indices first … last - 1
    last: int
    moments: Timeline
    faults: tuple[tuple[int, str], ...]  # (VM index, fault) of this shard's VMs
    verbosity: int


def shard_specs(
    seed: int, vms: int, moments: Timeline, faults: dict[int, str], verbosity: int
) -> list[ShardSpec]:
    specs = []
    for index, first in enumerate(range(0, vms, SHARD_SIZE)):
        last = min(vms, first + SHARD_SIZE)
        mine = tuple((i, fault) for i, fault in sorted(faults.items()) if first <= i < last)
        specs.append(ShardSpec(seed, index, first, last, moments, mine, verbosity))
    return specs


# --- one shard -------------------------------------------------------------------------------
def run_shard(spec: ShardSpec) -> Capture:
    cluster = Cluster(f"bench-{spec.seed}", spec.moments.start, replicas_count=REPLICAS)
    # Constructed from the seed alone, the control plane is the same in every shard; from here
    # on the API server and the nodes draw from the shard's own streams.
    cluster.api.rng = random.Random(f"api/bench-{spec.seed}/{spec.index}")
    cluster.nodes.rng = random.Random(f"nodes/bench-{spec.seed}/{spec.index}")
    clocks = random.Random(f"bench-{spec.seed}/clocks")
    for node in cluster.node_names:
        cluster.nodes.skew_us[node] = clocks.randint(-800, 800) * MS  # NTP-kept node clocks
    for replica in cluster.replicas:
        replica.verbosity = spec.verbosity
    rng = random.Random(f"bench-{spec.seed}/{spec.index}")
    faulty = dict(spec.faults)
    for index in range(spec.first, spec.last):
        if index not in faulty:
            plan_vm(cluster, rng, index, spec.moments)
    _inject(cluster, rng, spec)
    cluster.crash(spec.moments.failover, 0, restart_after=RESTART_AFTER)
    return cluster.capture(spec.moments.capture_at)


def _inject(cluster: Cluster, rng: random.Random, spec: ShardSpec) -> None:
    """kvsim's fault setups, restricted by ``CodeFaults.names`` to the shard's faulty VMs."""
    code_faulty = []
    for index, fault in spec.faults:
        start = rng.randint(*spec.moments.fault_window)
        FAULT_SETUP[fault](cluster, rng, vm_name(index), start)
        cluster.inject(f"{fault}: {namespace_of(index)}/{vm_name(index)}")
        if fault != INFORMER_FAULT:
            code_faulty.append(vm_name(index))
    for replica in cluster.replicas:
        replica.faults.names = list(code_faulty)


# --- the merge -------------------------------------------------------------------------------
def control_plane(line: Line) -> bool:
    return line.site.startswith(CONTROL_PLANE_FILES) or line.site in CONTROL_PLANE_SITES


def _log_ids(capture: Capture) -> list[LogId]:
    return [(log.namespace, log.pod, log.container, instance) for log, instance in capture.logs]


def _acquired(log: ContainerLog) -> int | None:
    return next((line.at for line in log.lines if line.site == ACQUIRED), None)


def _leaders(capture: Capture) -> list[tuple[str, str]]:
    """The containers that acquired the lease, as (pod, "current" | "previous")."""
    return [(log.pod, instance) for log, instance in capture.logs if _acquired(log) is not None]


def _workload(capture: Capture) -> dict[LogId, list[Line]]:
    return {
        (log.namespace, log.pod, log.container, instance): [
            line for line in log.lines if not control_plane(line)
        ]
        for log, instance in capture.logs
    }


def _check_own(spec: ShardSpec, lines: list[Line]) -> None:
    """Every workload line of a shard names one of its VMs (or an object in their namespaces):
    a line of the control plane that :func:`control_plane` does not know would otherwise be
    merged once per shard. A key may stand anywhere in the message (the expectations lines
    print it mid-sentence)."""
    keys = {f"{namespace_of(i)}/{vm_name(i)}" for i in range(spec.first, spec.last)}
    for line in lines:
        if '"namespace":"' in line.body and f'"namespace":"{NAMESPACE}"' not in line.body:
            continue
        named = set(VM_KEY.findall(line.body))
        if not named or not named <= keys:
            raise MergeError(
                f"shard {spec.index}: a line neither of the control plane nor of its VMs "
                f"({line.site}): {line.body[:160]} — add its site to CONTROL_PLANE_SITES"
            )


def _ends(capture: Capture) -> dict[LogId, int]:
    """When each container ended: the start of the pod's next container, or the capture."""
    ends, first_line = {}, {}
    for log, instance in capture.logs:
        first_line[(log.pod, instance)] = min((line.at for line in log.lines), default=0)
    for log, instance in capture.logs:
        after = first_line.get((log.pod, "current")) if instance == "previous" else None
        ends[(log.namespace, log.pod, log.container, instance)] = after or capture.captured_at
    return ends


Spans = dict[LogId, tuple[int, int]]  # the first and last workload line of each container


def _spans(workload: dict[LogId, list[Line]]) -> Spans:
    return {
        log_id: (min(line.at for line in lines), max(line.at for line in lines))
        for log_id, lines in workload.items()
        if lines
    }


def _fits(primary: Capture, spans: list[Spans]) -> bool:
    """Does every shard's workload fall inside the primary's leadership of each container?"""
    acquired = {
        (log.namespace, log.pod, log.container, i): _acquired(log) for log, i in primary.logs
    }
    ends = _ends(primary)
    for shard in spans:
        for log_id, (first, last) in shard.items():
            start = acquired[log_id]
            if start is None or first <= start or last > ends[log_id]:
                return False
    return True


def merge(specs: list[ShardSpec], captures: list[Capture]) -> Capture:
    ids = _log_ids(captures[0])
    for spec, capture in zip(specs, captures, strict=True):
        if _log_ids(capture) != ids or capture.captured_at != captures[0].captured_at:
            raise MergeError(f"shard {spec.index} ran other virt-controller containers")
    leaders = _leaders(captures[0])
    for spec, capture in zip(specs, captures, strict=True):
        if _leaders(capture) != leaders:
            raise MergeError(
                f"shard {spec.index}: {_leaders(capture)} took the lease, in shard 0 {leaders}"
            )
    workloads = [_workload(capture) for capture in captures]
    for spec, workload in zip(specs, workloads, strict=True):
        for lines in workload.values():
            _check_own(spec, lines)
    spans = [_spans(workload) for workload in workloads]
    chosen = next((k for k, c in enumerate(captures) if _fits(c, spans)), None)
    if chosen is None:
        raise MergeError("no shard's leadership covers every shard's VM lines")
    primary = captures[chosen]
    others = [k for k in range(len(captures)) if k != chosen]
    logs = []
    for log, instance in primary.logs:
        log_id = (log.namespace, log.pod, log.container, instance)
        lines = list(log.lines)
        for k in others:
            lines.extend(workloads[k][log_id])
        logs.append(
            (ContainerLog(log.namespace, log.pod, log.container, log.seed, lines), instance)
        )
    actions = list(primary.actions)
    injected = list(primary.injected)
    for k in others:
        actions.extend(a for a in captures[k].actions if a.who != "cluster")
        injected.extend(captures[k].injected)
    actions.sort(key=lambda action: action.at)
    objects = _merge_objects(primary, [captures[k] for k in others])
    return Capture(primary.captured_at, objects, logs, actions, injected, primary.kubevirt_version)


def _merge_objects(primary: Capture, others: list[Capture]) -> dict[str, list[dict[str, object]]]:
    objects = {kind: list(items) for kind, items in primary.objects.items()}
    nodes = {node["metadata"]["name"] for node in objects.get("Node", [])}
    for capture in others:
        for kind, items in capture.objects.items():
            merged = objects.setdefault(kind, [])
            for obj in items:
                meta = obj["metadata"]
                if kind == "Node" and meta["name"] not in nodes:
                    nodes.add(meta["name"])
                    merged.append(obj)
                elif meta.get("namespace") in NAMESPACES:
                    merged.append(obj)
    for items in objects.values():
        items.sort(key=lambda obj: (obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
    return objects
