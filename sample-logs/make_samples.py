#!/usr/bin/env python3
"""Generate kvtrace's sample bundles from the simulator of v1.9.0's virt-controller (kvsim).

    python3 sample-logs/make_samples.py            # rewrite every sample under sample-logs/
    python3 sample-logs/make_samples.py --check    # regenerate into a temp dir and compare

Every sample is a history the simulator ran: users and the cluster act, the controllers do what
v1.9.0's code does (or, in a fault sample, what the injected fault makes them do), and the
capture is what a collector reads at that moment. Names, UIDs and times are invented and
deterministic; the log lines are v1.9.0's (texts, levels, positions, fields, kubelet prefixes).
The overhead samples under overhead/ come from their own generator.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kvsim import timefmt
from kvsim.bundle import write_bundle, write_must_gather
from kvsim.cluster import Capture, Cluster
from kvsim.kernel import MS, SECOND
from kvsim.nodes import Fate

HERE = Path(__file__).resolve().parent
MINUTE = 60 * SECOND


@dataclass(frozen=True)
class Sample:
    name: str
    layout: str  # kvtrace | must-gather
    story: str  # what happened, for the sample's README
    verdict: str  # what kvtrace check says of it
    build: Callable[[], Capture]


def at(text: str) -> int:
    return timefmt.from_iso(text)


def always_restart() -> Capture:
    start = at("2026-11-28T00:40:00Z")
    cluster = Cluster("always-restart", start)
    cluster.fates[("testvm", 0)] = Fate("crash", 100 * SECOND)
    cluster.create_vm(start + 10 * SECOND, "other-vm", strategy="Halted")
    cluster.create_vm(start + 30 * SECOND, "testvm")
    return cluster.capture(start + 4 * MINUTE + 51 * SECOND)


def older_release_rerun_on_failure() -> Capture:
    """KubeVirt v1.1.1: RerunOnFailure restarts a Failed VMI with no start request and keeps a
    Succeeded one (vm.go:916-954 at v1.1.1). The launcher pods are left out: kvsim renders them
    as v1.9.0 does, and v1.1.1's differ (verify-overhead's business, not this sample's)."""
    start = at("2026-11-29T21:30:00Z")
    cluster = Cluster("older-release-rerun-on-failure", start, release="v1.1.1")
    cluster.fates[("nightly-report", 0)] = Fate("crash", 90 * SECOND)
    cluster.fates[("nightly-report", 1)] = Fate("shutdown", 150 * SECOND)
    cluster.create_vm(start + 35 * SECOND, "nightly-report", strategy="RerunOnFailure")
    capture = cluster.capture(start + 9 * MINUTE)
    pods = capture.objects["Pod"]
    pods[:] = [p for p in pods if not p["metadata"]["name"].startswith("virt-launcher-")]
    return capture


def rerun_on_failure_succeeded() -> Capture:
    start = at("2026-11-28T03:10:00Z")
    cluster = Cluster("rerun-on-failure-succeeded", start)
    cluster.fates[("batch-job", 0)] = Fate("shutdown", 150 * SECOND)
    cluster.create_vm(start + 40 * SECOND, "batch-job", strategy="RerunOnFailure")
    return cluster.capture(start + 7 * MINUTE)


def fault_duplicate_create() -> Capture:
    """The leader's informer misses the new VMI's add and updates; five minutes later its
    expectation expires and a label edit re-enqueues the VM, which it starts again."""
    start = at("2026-12-02T09:00:00Z")
    cluster = Cluster("fault-duplicate-create", start)
    name = "web-frontend"
    cluster.create_vm(start + 40 * SECOND, name)
    cluster.drop_event(start + 39 * SECOND, 0, "VirtualMachineInstance", name, "ADDED")
    cluster.drop_event(start + 39 * SECOND, 0, "VirtualMachineInstance", name, "MODIFIED", 50)
    cluster.edit_vm(start + 6 * MINUTE, name, _relabel, "kubectl label vm")
    cluster.inject("informer missed the VMI's events (stale cache)")
    return cluster.capture(start + 7 * MINUTE)


def _relabel(vm: dict[str, object]) -> None:
    meta = vm["metadata"]
    assert isinstance(meta, dict)
    meta.setdefault("labels", {})["tier"] = "frontend"


def fault_rerun_after_succeeded() -> Capture:
    start = at("2026-12-03T11:20:00Z")
    cluster = Cluster("fault-rerun-after-succeeded", start)
    cluster.fates[("report-gen", 0)] = Fate("shutdown", 80 * SECOND)
    cluster.fates[("report-gen", 1)] = Fate("shutdown", 200 * SECOND)
    cluster.create_vm(start + 30 * SECOND, "report-gen", strategy="RerunOnFailure")
    for replica in cluster.replicas:
        replica.faults.rerun_after_succeeded = True
    cluster.inject("RerunOnFailure treats Succeeded like Failed")
    return cluster.capture(start + 6 * MINUTE)


def fault_delete_create() -> Capture:
    start = at("2026-12-04T15:00:00Z")
    cluster = Cluster("fault-delete-create-one-reconcile", start)
    cluster.fates[("cache-node", 0)] = Fate("crash", 70 * SECOND)
    cluster.create_vm(start + 30 * SECOND, "cache-node")
    for replica in cluster.replicas:
        replica.faults.create_after_delete = True
        replica.verbosity = 4
    cluster.inject("the stop branch does not return before starting")
    return cluster.capture(start + 5 * MINUTE)


def fault_phase_regression() -> Capture:
    start = at("2026-12-05T08:30:00Z")
    cluster = Cluster("fault-phase-regression", start)
    cluster.create_vm(start + 30 * SECOND, "api-server")
    for replica in cluster.replicas:
        replica.faults.phase_regression = True
    cluster.inject("the VMI controller takes a Running VMI back to Scheduled")
    return cluster.capture(start + 4 * MINUTE)


def node_clock_behind() -> Capture:
    start = at("2026-12-05T10:30:00Z")
    cluster = Cluster("node-clock-behind", start)
    cluster.create_vm(start + 30 * SECOND, "api-server")
    for node in cluster.node_names:
        cluster.nodes.skew_us[node] = -47 * SECOND  # the nodes' clocks run 47 s behind
    return cluster.capture(start + 4 * MINUTE)


def fault_wrong_revision() -> Capture:
    start = at("2026-12-06T13:00:00Z")
    cluster = Cluster("fault-wrong-revision-name", start)
    name = "db-replica"
    cluster.create_vm(start + 30 * SECOND, name)
    cluster.edit_vm(start + 2 * MINUTE, name, _more_memory, "edit spec.template")
    cluster.virtctl(start + 3 * MINUTE, "restart", name)
    cluster.at(start + 2 * MINUTE + SECOND, lambda: _revision_fault(cluster))
    cluster.inject("startVMI records the previous generation's revision name")
    return cluster.capture(start + 6 * MINUTE)


def _more_memory(vm: dict[str, object]) -> None:
    spec = vm["spec"]
    assert isinstance(spec, dict)
    domain = spec["template"]["spec"]["domain"]
    domain["memory"]["guest"] = domain["resources"]["requests"]["memory"] = "4Gi"


def _revision_fault(cluster: Cluster) -> None:
    for replica in cluster.replicas:
        replica.faults.revision_generation_offset = -1


def fault_backoff() -> Capture:
    start = at("2026-12-07T10:00:00Z")
    cluster = Cluster("fault-backoff-violated", start)
    for index in range(8):
        cluster.fates[("flaky-app", index)] = Fate("fail-start")
    cluster.create_vm(start + 30 * SECOND, "flaky-app")
    for replica in cluster.replicas:
        replica.faults.ignore_backoff = True
    cluster.inject("starts without consulting status.startFailure")
    return cluster.capture(start + 3 * MINUTE)


def fault_non_leader() -> Capture:
    start = at("2026-12-08T14:00:00Z")
    cluster = Cluster("fault-non-leader-action", start)
    cluster.replicas[1].run_without_lease = True
    cluster.replicas[0].informer_lag_us = 400 * MS  # the standby sees the new VM first
    cluster.create_vm(start + 3 * MINUTE, "batch-worker")
    cluster.inject("the standby runs its controllers without the lease")
    return cluster.capture(start + 9 * MINUTE)


def leader_failover_gap() -> Capture:
    start = at("2026-12-28T21:04:10Z")
    cluster = Cluster("leader-failover-gap", start)
    cluster.create_vm(start + 90 * SECOND, "web-1")
    cluster.outage(start + 12 * MINUTE, 0, 45 * SECOND)
    # the standby is a fresh pod: it first sees the stale record 12 s into the outage
    cluster.crash(start + 12 * MINUTE + 2 * SECOND, 1, restart_after=10 * SECOND)
    cluster.create_vm(start + 12 * MINUTE + 20 * SECOND, "web-2")
    return cluster.capture(start + 17 * MINUTE)


def leader_expired_holder_gone() -> Capture:
    start = at("2027-01-03T04:10:00Z")
    cluster = Cluster("leader-expired-holder-gone", start)
    cluster.create_vm(start + 60 * SECOND, "db-1")
    cluster.rollout(start + 20 * MINUTE, lock_forbidden=True)
    return cluster.capture(start + 23 * MINUTE + 15 * SECOND)


def leader_split_brain() -> Capture:
    start = at("2026-12-11T14:20:30Z")
    cluster = Cluster("leader-split-brain", start)
    cluster.create_vm(start + 60 * SECOND, "api-1")
    cluster.replicas[0].faults.stall_after_start_decision = 25 * SECOND
    cluster.replicas[0].faults.names = ["api-2"]
    cluster.create_vm(start + 5 * MINUTE, "api-2")
    cluster.create_vm(start + 5 * MINUTE + 8 * SECOND, "api-3")
    return cluster.capture(start + 9 * MINUTE)


def leader_endpoints_lock() -> Capture:
    start = at("2026-11-30T08:12:44Z")
    cluster = Cluster("leader-endpoints-lock", start, lock_kind="Endpoints")
    cluster.create_vm(start + 57 * SECOND, "legacy-1")
    return cluster.capture(start + 4 * MINUTE)


def migration_cluster(name: str, start: int) -> Cluster:
    cluster = Cluster(name, start, live_migration=True)
    cluster.create_vm(start + 20 * SECOND, "db-primary", eviction="LiveMigrate")
    cluster.create_vm(start + 40 * SECOND, "web-cache", eviction="LiveMigrate")
    return cluster


def live_migration() -> Capture:
    """``virtctl migrate default/db-primary``: the first attempt fails on the nodes (the
    source's libvirt gives up), the second one moves the VMI to another node."""
    start = at("2026-11-30T09:00:00Z")
    cluster = migration_cluster("live-migration", start)
    cluster.migration_fates[("db-primary", 0)] = "fail"
    cluster.migrate(start + 3 * MINUTE, "db-primary")
    cluster.migrate(start + 5 * MINUTE, "db-primary")
    return cluster.capture(start + 8 * MINUTE)


def drain_one_failed() -> Capture:
    """``kubectl drain`` of the node of ``default/db-primary``: the evacuation controller
    migrates its LiveMigrate VMIs; db-primary's first attempt fails, the next one succeeds."""
    start = at("2026-11-30T11:00:00Z")
    cluster = migration_cluster("drain-one-failed", start)
    cluster.migration_fates[("db-primary", 0)] = "fail"

    def drain() -> None:
        node = cluster.node_of("db-primary")
        if node is not None:
            cluster.drain(cluster.kernel.now, node)

    cluster.at(start + 3 * MINUTE, drain)
    return cluster.capture(start + 12 * MINUTE)


def node_failure_restart() -> Capture:
    """virt-handler on the node of ``default/ledger`` hangs, then the guest dies unseen; five
    minutes after the last heartbeat the node controller fails the VMI (node.go:278) and the
    VM controller starts a new one on another node."""
    start = at("2026-11-30T13:00:00Z")
    cluster = Cluster("node-failure-restart", start, live_migration=True)
    cluster.create_vm(start + 30 * SECOND, "ledger")

    def hang() -> None:
        node = cluster.node_of("ledger")
        if node is not None:
            cluster.handler_hangs(cluster.kernel.now, node)

    cluster.at(start + 3 * MINUTE, hang)
    cluster.guest_dies(start + 4 * MINUTE, "ledger")
    return cluster.capture(start + 14 * MINUTE)


def pool_proactive_update() -> Capture:
    """kvsim's pool history: pool ``web`` edits its template; the pool updates each VM and
    deletes its outdated VMI (pool.go:1636), the VM controller starts the new one."""
    from kvsim.histories import pool_update

    return pool_update(0).capture()


def snapshot_and_restore() -> Capture:
    """kvsim's snapshot history: an online snapshot of ``vm-0`` (freeze, volume snapshots,
    unfreeze), later the VM is stopped, restored from it and started again."""
    from kvsim.histories import snapshot_restore

    return snapshot_restore(0).capture()


SAMPLES = (
    Sample(
        "always-restart",
        "kvtrace",
        "`default/testvm` (runStrategy Always) runs; its guest crashes after 100 s, the VMI "
        "goes Failed, and the leader stops and deletes it (vm.go:1005, 1685) and starts a new "
        "one as soon as it is gone — no start-failure backoff, since the VMI had run. Two "
        "virt-controller replicas; the standby waits for the lease.",
        "no violation",
        always_restart,
    ),
    Sample(
        "must-gather-always-restart",
        "must-gather",
        "the same history as `always-restart/`, in KubeVirt's must-gather layout (no Lease, "
        "current logs only).",
        "no violation",
        always_restart,
    ),
    Sample(
        "rerun-on-failure-succeeded",
        "kvtrace",
        "`default/batch-job` (RerunOnFailure) shuts down cleanly: its VMI Succeeds, is "
        "deleted (vm.go:1052, 1685) and not started again.",
        "no violation",
        rerun_on_failure_succeeded,
    ),
    Sample(
        "older-release-rerun-on-failure",
        "kvtrace",
        "KubeVirt v1.1.1: `default/nightly-report` (RerunOnFailure) crashes after 90 s; the "
        "leader stops the Failed VMI and starts a new one with no start request, as v1.1 does "
        "(vm.go:926, 948 at v1.1.1). The second guest shuts down cleanly: its Succeeded VMI is "
        "kept, not deleted (from v1.2.0 it would be). kvtrace reads v1.1.1 from the KubeVirt CR "
        "and v1.1.0–v1.1.1 from the log lines, and judges by v1.1's code: KV-RS-06 explains "
        "both, KV-RS-02/03 (v1.2.0 on) are not applied. No launcher pods in this bundle.",
        "no violation",
        older_release_rerun_on_failure,
    ),
    Sample(
        "fault-duplicate-create",
        "kvtrace",
        "`default/web-frontend` (Always): the leader's informer never sees its VMI; five "
        "minutes later the create expectation expires, a label edit re-enqueues the VM, and "
        "the controller starts it again: the create collides with the VMI it had made "
        "(`already exists`).",
        "KV-EX-01 violated",
        fault_duplicate_create,
    ),
    Sample(
        "fault-rerun-after-succeeded",
        "kvtrace",
        "`default/report-gen` (RerunOnFailure), with the fault that treats Succeeded like "
        "Failed: its VMI Succeeds and is started again. A user's `virtctl start` prints the "
        "same lines, so the evidence cannot tell.",
        "KV-RS-03 unverifiable: the API server's audit log would decide",
        fault_rerun_after_succeeded,
    ),
    Sample(
        "fault-delete-create-one-reconcile",
        "kvtrace",
        "`default/cache-node` (Always) at logVerbosity 4, with the fault that does not return "
        "after the stop: one reconcile deletes the Failed VMI and decides the next start.",
        "KV-RC-01 violated (its reconcile boundaries, `Started processing vm`, decide); KV-SV-02 "
        "too, a consequence: the stale cache's finalizer patch of the deleted VMI, sent by name, "
        "lands on its successor",
        fault_delete_create,
    ),
    Sample(
        "fault-phase-regression",
        "kvtrace",
        "`default/api-server` (Always) starts and runs; the VMI controller, with the fault, "
        "patches the Running VMI back to `Scheduled` (no new stamp: a phase is stamped once).",
        "KV-PH-01 violated (`status.phase` behind a phase the VMI had entered)",
        fault_phase_regression,
    ),
    Sample(
        "node-clock-behind",
        "kvtrace",
        "`default/api-server` (Always) starts normally, but every node's clock runs 47 s "
        "behind: virt-handler stamps `Running` 45 s before the controller's `Scheduled`. The "
        "stamps' list order is the order of the phases, so this is a clock to fix, not a "
        "regression.",
        "no violation; KV-PH-01 explains the order and names the clock disagreement",
        node_clock_behind,
    ),
    Sample(
        "fault-wrong-revision-name",
        "kvtrace",
        "`default/db-replica` (Always): its template is edited (generation 2) and it is "
        "restarted; startVMI, with the fault, records the previous generation's revision name "
        "in the new VMI's status.",
        "KV-SV-01 violated",
        fault_wrong_revision,
    ),
    Sample(
        "fault-backoff-violated",
        "kvtrace",
        "`default/flaky-app` (Always): every launcher pod fails before the guest runs, and "
        "the controller, with the fault, restarts it without waiting for the start-failure "
        "backoff. A user's stop and start clears the backoff with no line at default "
        "verbosity, so the evidence cannot tell.",
        "KV-BO-01 unverifiable: the API server's audit log would decide",
        fault_backoff,
    ),
    Sample(
        "fault-non-leader-action",
        "kvtrace",
        "`default/batch-worker`: the standby replica, which logged only `attempting to "
        "acquire leader lease`, runs its controllers without the lease and acts on the VM "
        "alongside the leader.",
        "KV-LD-01 violated",
        fault_non_leader,
    ),
    Sample(
        "live-migration",
        "kvtrace",
        "`virtctl migrate default/db-primary` twice: the first migration fails on the nodes "
        "(the source's libvirt gives up: `source node reported migration failed`), the second "
        "moves the VMI to another node. Each VMIM is a lane of db-primary's timeline.",
        "no violation; 2 migrations, 1 failed",
        live_migration,
    ),
    Sample(
        "drain-one-failed",
        "kvtrace",
        "`kubectl drain` of the node of `default/db-primary`: the eviction webhook marks its "
        "LiveMigrate VMIs and the evacuation controller migrates them; db-primary's first "
        "attempt fails, the next one succeeds and the drain completes.",
        "no violation; db-primary: 2 migrations, 1 failed",
        drain_one_failed,
    ),
    Sample(
        "node-failure-restart",
        "kvtrace",
        "virt-handler on the node of `default/ledger` hangs and the guest dies unseen; five "
        "minutes after the last heartbeat the node controller fails the VMI (`Moving vmi "
        "ledger in namespace default on unresponsive node to failed state`, node.go:278) and "
        "the VM controller starts a new one on another node.",
        "no violation; the first incarnation ended by a node failure",
        node_failure_restart,
    ),
    Sample(
        "pool-proactive-update",
        "kvtrace",
        "a VirtualMachinePool `web` edits its VM template; the pool updates each VM and, for a "
        "running one, deletes its outdated VMI (`Proactive update of VM default/web-0 by "
        "deleting outdated VMI`, pool.go:1636); the VM controller starts a new VMI from the new "
        "template. The first incarnation of each VM ends by a pool update.",
        "no violation",
        pool_proactive_update,
    ),
    Sample(
        "snapshot-restore",
        "kvtrace",
        "an online VirtualMachineSnapshot of `default/vm-0` (the guest is frozen and unfrozen "
        "around the volume snapshots); later the VM is stopped, restored from the snapshot and "
        "started again. The snapshot's and the restore's Events and lines are in vm-0's "
        "timeline.",
        "no violation",
        snapshot_and_restore,
    ),
    Sample(
        "leader-failover-gap",
        "kvtrace",
        "the leader's node loses the API for 45 s; its renewal round fails, it logs `failed "
        "to renew lease` and `leaderelection lost` and restarts; the standby takes over, and "
        "`default/web-2`, created in the gap, starts once it leads.",
        "no violation; `leader history` reports the gap",
        leader_failover_gap,
    ),
    Sample(
        "leader-expired-holder-gone",
        "kvtrace",
        "virt-operator rolls virt-controller out; the new pods' role cannot read the Lease "
        "(klog `error retrieving resource lock … forbidden`), which still names the deleted "
        "old leader and has expired.",
        "no violation; `leader status` exits 3",
        leader_expired_holder_gone,
    ),
    Sample(
        "leader-split-brain",
        "kvtrace",
        "the leader's node stalls for 25 s right after it decided to start `default/api-2`; "
        "the standby takes over and starts `api-2` and `api-3`; the old leader resumes, "
        "finishes its start on a stale view and only gives up its lease 10 s later.",
        "KV-LD-02 violated (split brain)",
        leader_split_brain,
    ),
    Sample(
        "leader-endpoints-lock",
        "kvtrace",
        "the lock of KubeVirt before v1.3: no Lease, an Endpoints `kubevirt/virt-controller` "
        "whose `control-plane.alpha.kubernetes.io/leader` annotation holds the record "
        "(v1.9.0-shaped logs).",
        "no violation",
        leader_endpoints_lock,
    ),
)

TOP = """# sample-logs

Incidents run by the simulator of KubeVirt v1.9.0's virt-controller (`kvsim/`): what users and
the cluster did, what the controllers did about it (with one injected fault in the `fault-`
samples), and what a collector read at the end. Regenerate with `python3
sample-logs/make_samples.py` (deterministic; commit the output; `--check` compares).
`overhead/` holds constructed launcher pods for `kvtrace verify-overhead` (`overhead/CASES.md`).

"""


def readme(sample: Sample, capture: Capture) -> str:
    actions = "\n".join(
        f"- {timefmt.micro(a.at)} {a.who}: {a.what} {a.target}"
        + (f" ({a.outcome})" if a.outcome not in ("ok", "") else "")
        for a in capture.actions
    )
    injected = "".join(f"\nInjected fault: {f}.\n" for f in capture.injected)
    return (
        f"# {sample.name}\n\n{sample.story}\n\n`kvtrace check -A`: {sample.verdict}.\n"
        f"{injected}\nWhat happened (captured {timefmt.micro(capture.captured_at)}):\n\n"
        f"{actions}\n"
    )


def generate(out: Path) -> None:
    lines = [TOP]
    for sample in SAMPLES:
        capture = sample.build()
        text = readme(sample, capture)
        root = out / sample.name
        if sample.layout == "must-gather":
            write_must_gather(capture, root, sample.name, readme=text)
        else:
            write_bundle(capture, root, fmt="yaml", readme=text)
        lines.append(f"- `{sample.name}/` — {sample.story} `check`: {sample.verdict}.\n")
    (out / "README.md").write_text("".join(lines), encoding="utf-8")


def _differences(fresh: Path) -> list[str]:
    bad = []
    for sample in [*(s.name for s in SAMPLES), "README.md"]:
        made, kept = fresh / sample, HERE / sample
        if made.is_file():
            if not kept.is_file() or not filecmp.cmp(made, kept, shallow=False):
                bad.append(sample)
            continue
        files = {p.relative_to(made) for p in made.rglob("*") if p.is_file()}
        committed = (
            {p.relative_to(kept) for p in kept.rglob("*") if p.is_file()}
            if kept.exists()
            else set()
        )
        for rel in sorted(files | committed):
            if (
                rel not in files
                or rel not in committed
                or not filecmp.cmp(made / rel, kept / rel, shallow=False)
            ):
                bad.append(f"{sample}/{rel}")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--check", action="store_true", help="regenerate into a temp dir and compare"
    )
    args = parser.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            bad = _differences(Path(tmp))
        if bad:
            print("out of date:", *bad, sep="\n  ")
            return 1
        print("samples are up to date")
        return 0
    for sample in SAMPLES:
        shutil.rmtree(HERE / sample.name, ignore_errors=True)
    generate(HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
