#!/usr/bin/env python3
"""Generate the ``leader-*`` sample bundles for ``kvtrace leader`` (deterministic; commit them).

    python3 sample-logs/make_leader_samples.py           # rewrite sample-logs/leader-*/
    python3 sample-logs/make_leader_samples.py --check   # regenerate into a temp dir and diff

Reuses make_samples.py's writers (v1.9.0 line shapes, kubelet --timestamps prefix, kubectl YAML)
and adds what leadership needs: previous.log of a restarted container, restart counts, the
Endpoints lock of pre-v1.3 releases. Leader-election behaviour follows client-go's
leaderelection.go as vendored at v1.9.0 (retries 252-275, renewal rounds 278-299, expiry
461-470).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_samples import (
    HERE,
    KUBEVIRT_NS,
    STARTED_MSG,
    ControllerLog,
    FaultScene,
    Ids,
    became_leader,
    fmt_s,
    k_list,
    make_controller_pod,
    make_event,
    make_kubevirt,
    make_lease,
    make_node,
    make_revision,
    normal_phases,
    start_lines,
    startup,
    t_us,
    to_yaml,
    vm_key,
    vm_status_running,
    vmi_ref,
    write,
    write_kvtrace_bundle,
)

LOCK = "kubevirt/virt-controller"
RENEW_FAILED = f"failed to renew lease {LOCK}: context deadline exceeded"
API = "https://10.96.0.1:443/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/virt-controller"


class Replica:
    """One virt-controller pod: its current container's log and, after a restart, the previous."""

    def __init__(self, scene: LeaderScene, *, node: str, ip: str, created: int) -> None:
        self.name = f"virt-controller-{scene.rs_hash}-" + scene.ids.suffix()
        self.uid, self.node, self.ip, self.created = scene.ids.uuid4(), node, ip, created
        self.current = ControllerLog(self.name, f"{scene.name}-{self.name}-current")
        self.previous: ControllerLog | None = None
        self.started = created + 1_150_000
        self.finished: int | None = None

    def restart(self, finished: int, started: int) -> None:
        """The container exited (leaderelection lost → exit 1) and the kubelet started a new one."""
        self.previous, self.finished, self.started = self.current, finished, started
        self.current = ControllerLog(self.name, f"{self.name}-after-restart")

    def pod(self, rs_hash: str, rv: str) -> dict[str, Any]:
        pod = make_controller_pod(
            name=self.name, uid=self.uid, rs_hash=rs_hash, created=self.created,
            started=self.started, ready=self.started + 15_700_000, rv=rv, node=self.node,
            ip=self.ip,
        )  # fmt: skip
        if self.finished is not None:
            status = pod["status"]["containerStatuses"][0]
            status["restartCount"] = 1
            status["lastState"] = {
                "terminated": {
                    "containerID": "containerd://" + Ids(self.uid + "old").hexstr(64),
                    "exitCode": 1,
                    "finishedAt": fmt_s(self.finished),
                    "reason": "Error",
                    "startedAt": fmt_s(self.created + 1_150_000),
                }
            }
        return pod


class LeaderScene(FaultScene):
    """FaultScene's VM helpers (VM, VMI, launcher pod, Events); replicas and the lock are ours."""

    def __init__(self, name: str, *, rv_start: int, rs_hash: str, node: str, node_ip: str) -> None:
        super().__init__(
            name, rv_start=rv_start, rs_hash=rs_hash, leader_start=t_us("2026-01-01T00:00:00"),
            acquire_after=15_000_000, node=node, node_ip=node_ip,
        )  # fmt: skip
        self.replicas: list[Replica] = []
        self.vms: list[dict[str, Any]] = []
        self.vmis: list[dict[str, Any]] = []
        self.pods: list[dict[str, Any]] = []
        self.revisions: list[dict[str, Any]] = []

    def replica(self, *, node: str, ip: str, created: int) -> Replica:
        r = Replica(self, node=node, ip=ip, created=created)
        self.replicas.append(r)
        return r

    def started_vm(
        self, log: ControllerLog, name: str, created: int, pod_ip: str, decide: int | None = None
    ) -> None:
        """A VM whose create decision and VMI create the replica ``log`` logs (vm.go:1032,
        1341), with the VMI running and its launcher pod, revision and Events."""
        ids = self.ids
        vm_uid, vmi_uid, pod_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()
        decide = created + 251_337 if decide is None else decide
        t_created = start_lines(log, decide, vm_key(name, vm_uid), "Always", 33_412)
        phases = normal_phases(t_created, ids.rng)
        vm = self.vm(
            name, vm_uid, created=created, generation=1, strategy="Always",
            status=vm_status_running(ready_since=phases[-1][1], generation=1, strategy="Always"),
        )  # fmt: skip
        self.revisions.append(make_revision(vm, t_created - 19_870, self.rv(7)))
        launcher = f"virt-launcher-{name}-" + ids.suffix()
        vmi, pod = self.vmi_and_pod(
            vm, uid=vmi_uid, created=t_created - 8_211, phases=phases, pod_name=launcher,
            pod_uid=pod_uid, pod_ip=pod_ip,
        )  # fmt: skip
        self.vm_event(vm, "SuccessfulCreate", f"{STARTED_MSG}{name}", t_created + 171)
        self.event(
            vmi_ref(name, vmi_uid, str(self.rv.v - 2)), "SuccessfulCreate",
            f"Created virtual machine pod {launcher}", phases[1][1] - 3_114,
        )  # fmt: skip
        self.vms.append(vm)
        self.vmis.append(vmi)
        self.pods.append(pod)

    def lease_event(self, holder: str, us: int, lease_uid: str) -> dict[str, Any]:
        involved = {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "name": "virt-controller",
            "namespace": KUBEVIRT_NS, "uid": lease_uid,
        }  # fmt: skip
        return make_event(
            ns=KUBEVIRT_NS, involved=involved, reason="LeaderElection",
            message=f"{holder} became leader", us=us, component="virt-controller",
            rv=self.rv(self.ids.rng.randint(3, 40)), extra_ns=self.ids.rng.randint(0, 999),
        )  # fmt: skip

    def bundle(self, *, captured: int, locks: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        for vm in self.vms:
            vm["metadata"]["resourceVersion"] = self.rv(self.ids.rng.randint(5, 30))
        controllers = [
            r.pod(self.rs_hash, self.rv(self.ids.rng.randint(20, 90))) for r in self.replicas
        ]
        objects: dict[str, list[dict[str, Any]]] = {
            "VirtualMachine": self.vms,
            "VirtualMachineInstance": self.vmis,
            "Pod": [*self.pods, *controllers],
            "ControllerRevision": self.revisions,
            "Event": sorted(
                [*self.events, *locks.pop("Event", [])],
                key=lambda e: (e["metadata"]["namespace"], e["metadata"]["name"]),
            ),
            **locks,
            "KubeVirt": [
                make_kubevirt(uid=self.kv_uid, created=t_us("2026-10-02T09:30:20"), rv="1523")
            ],
            "Node": [
                make_node(
                    name=self.node,
                    uid=self.node_uid,
                    created=t_us("2026-10-02T09:15:40"),
                    rv=self.rv(17),
                    heartbeat=captured - 21_000_000,
                    ip=self.node_ip,
                )
            ],
        }
        return {"objects": objects, "replicas": self.replicas, "captured": captured}


def api_errors(log: ControllerLog, first: int, until: int, rng: random.Random, why: str) -> None:
    """klog E lines of failed tries every retry period with jitter (leaderelection.go:448)."""
    t = first
    while t < until:
        log.klog(t, "E", "leaderelection.go:448", f"error retrieving resource lock {LOCK}: {why}")
        t += rng.randint(2_000_000, 4_400_000)


def deposed(log: ControllerLog, renewed: int, gave_up: int, rng: random.Random) -> None:
    """A leader whose renewal round failed: klog E lines (leaderelection.go:441, 448, 484), then
    ``failed to renew lease`` (296-297) and ``leaderelection lost`` (application.go:1170-1172)."""
    timeout = f'Get "{API}?timeout=5s": context deadline exceeded'
    optimistic = f'Failed to update lock optimistically: Put "{API}?timeout=5s": context '
    log.klog(renewed + 7_000_411, "E", "leaderelection.go:441", optimistic
             + "deadline exceeded, falling back to slow path")  # fmt: skip
    api_errors(log, renewed + 7_000_902, gave_up - 600_000, rng, timeout)
    log.klog(gave_up, "I", "leaderelection.go:297", RENEW_FAILED)
    log.stdlib(gave_up + 311, "leaderelection lost")


def leased(
    holder: str, acquire: int, renew: int, transitions: int, sc: LeaderScene
) -> dict[str, Any]:
    return make_lease(
        holder=holder, acquire=acquire, renew=renew, transitions=transitions,
        created=t_us("2026-10-02T09:31:12"), rv=sc.rv(sc.ids.rng.randint(200, 900)),
        uid=sc.lease_uid,
    )  # fmt: skip


# ---- scenarios ------------------------------------------------------------------------------


def scenario_failover_gap() -> dict[str, Any]:
    """A loses its node's API connection, gives up 12 s after its last renewal and restarts; the
    only other replica is a fresh pod that first sees the stale record 9 s later and must wait
    15 s more: 26 s without a leader, and web-2 (created in the gap) waits for B."""
    sc = LeaderScene(
        "leader-failover-gap", rv_start=12_004_100, rs_hash="6c9d7f8b45", node="node-c04",
        node_ip="192.168.122.14",
    )  # fmt: skip
    rng = random.Random("leader-failover-gap-lines")
    t0 = t_us("2026-12-28T21:04:10.118273")
    a = sc.replica(node="node-c01", ip="10.244.0.51", created=t0 - 3_104_227)
    a_acquire = startup(a.current, t0) + 16_310_442
    became_leader(a.current, a_acquire, rng)
    sc.started_vm(a.current, "web-1", a_acquire + 95_402_118, "10.244.3.17")
    renewed = a_acquire + 702_118_834
    gave_up = renewed + 12_004_337
    deposed(a.current, renewed, gave_up, rng)
    a.restart(gave_up + 402_991, gave_up + 918_305)
    b = sc.replica(node="node-c02", ip="10.244.1.88", created=renewed + 18_311_902)
    b_acquire = startup(b.current, renewed + 20_004_518) + 16_907_112
    b_ready = became_leader(b.current, b_acquire, rng)
    sc.started_vm(b.current, "web-2", renewed + 25_611_040, "10.244.3.18", b_ready + 41_207)
    startup(a.current, renewed + 45_206_671)  # the partition healed: A waits behind B
    captured = renewed + 301_551_208
    lease = leased(b.name, b_acquire, captured - 912_004, 6, sc)
    event = sc.lease_event(b.name, b_acquire + 1_022, sc.lease_uid)
    return sc.bundle(captured=captured, locks={"Lease": [lease], "Event": [event]})


def scenario_expired_holder_gone() -> dict[str, Any]:
    """After an upgrade both new replicas are forbidden to read the Lease (a broken ClusterRole):
    it still names the deleted old leader and expired three minutes ago."""
    sc = LeaderScene(
        "leader-expired-holder-gone", rv_start=13_220_500, rs_hash="84f6b9c5d7",
        node="node-c05", node_ip="192.168.122.15",
    )  # fmt: skip
    rng = random.Random("leader-expired-holder-gone-lines")
    old_leader = "virt-controller-5d4c8b7f6a-" + sc.ids.suffix()
    gone = ControllerLog(old_leader, "gone")  # its logs went with the pod
    t0 = t_us("2027-01-03T06:40:02.771530")
    sc.started_vm(gone, "db-1", t0 - 5_402_118_004, "10.244.3.40")
    forbidden = (
        'leases.coordination.k8s.io "virt-controller" is forbidden: User '
        '"system:serviceaccount:kubevirt:kubevirt-controller" cannot get resource "leases" in '
        'API group "coordination.k8s.io" in the namespace "kubevirt"'
    )
    captured = t0 + 190_446_120
    for i, node in enumerate(("node-c01", "node-c02")):
        r = sc.replica(node=node, ip=f"10.244.{i}.6{i}", created=t0 + i * 412_006)
        attempt = startup(r.current, r.created + 1_208_113)
        api_errors(r.current, attempt + 4_118, captured - 300_000, rng, forbidden)
    lease = leased(old_leader, t0 - 8_802_551_309, t0 - 2_104_772, 2, sc)
    return sc.bundle(captured=captured, locks={"Lease": [lease]})


def scenario_split_brain() -> dict[str, Any]:
    """A's node freezes for 25 s; B takes over 17.9 s after A's last renewal and starts api-2
    and api-3; A resumes, its VMI controller retries api-1 against B's writes (conflicts),
    then it notices the lost lease and exits."""
    sc = LeaderScene(
        "leader-split-brain", rv_start=14_660_200, rs_hash="7f5c9d6b84", node="node-c06",
        node_ip="192.168.122.16",
    )  # fmt: skip
    rng = random.Random("leader-split-brain-lines")
    t0 = t_us("2026-12-11T14:20:31.604118")
    a = sc.replica(node="node-c01", ip="10.244.0.71", created=t0 - 3_002_915)
    b = sc.replica(node="node-c02", ip="10.244.1.72", created=t0 - 2_611_007)
    a_acquire = startup(a.current, t0) + 16_604_330
    became_leader(a.current, a_acquire, rng)
    startup(b.current, t0 + 1_377_212)
    sc.started_vm(a.current, "api-1", a_acquire + 60_118_402, "10.244.3.51")
    stall = a_acquire + 400_310_227
    b_acquire = stall - 402_118 + 17_918_604
    b_ready = became_leader(b.current, b_acquire, rng)
    sc.started_vm(b.current, "api-2", stall + 8_104_337, "10.244.3.52", b_ready + 38_911)
    resumed = stall + 25_003_118
    conflict = (
        'Operation cannot be fulfilled on virtualmachineinstances.kubevirt.io "api-1": the '
        "object has been modified; please apply your changes to the latest version and try again"
    )
    for delay in (0, 6_412):
        a.current.kv(resumed + delay, "info", "reenqueuing VirtualMachineInstance default/api-1",
                     "vmi.go:288", reason=conflict)  # fmt: skip
    a.current.klog(resumed + 301_227, "I", "leaderelection.go:297", RENEW_FAILED)
    a.current.stdlib(resumed + 301_540, "leaderelection lost")
    a.restart(resumed + 688_104, resumed + 1_104_552)
    sc.started_vm(b.current, "api-3", stall + 26_002_913, "10.244.3.53")
    startup(a.current, resumed + 1_302_008)
    captured = stall + 240_118_702
    lease = leased(b.name, b_acquire, captured - 1_204_331, 9, sc)
    event = sc.lease_event(b.name, b_acquire + 918, sc.lease_uid)
    return sc.bundle(captured=captured, locks={"Lease": [lease], "Event": [event]})


def scenario_endpoints_lock() -> dict[str, Any]:
    """The pre-v1.3 lock: no Lease, an Endpoints virt-controller whose annotation holds the
    election record (``control-plane.alpha.kubernetes.io/leader``; whole seconds,
    leaderTransitions)."""
    sc = LeaderScene(
        "leader-endpoints-lock", rv_start=9_118_300, rs_hash="59c7d8b6f4", node="node-c07",
        node_ip="192.168.122.17",
    )  # fmt: skip
    rng = random.Random("leader-endpoints-lock-lines")
    t0 = t_us("2026-11-30T08:12:44.302117")
    a = sc.replica(node="node-c01", ip="10.244.0.81", created=t0 - 3_118_006)
    b = sc.replica(node="node-c02", ip="10.244.1.82", created=t0 - 2_204_510)
    a_acquire = startup(a.current, t0) + 15_902_774
    became_leader(a.current, a_acquire, rng)
    startup(b.current, t0 + 988_403)
    sc.started_vm(a.current, "legacy-1", a_acquire + 41_550_208, "10.244.3.61")
    captured = a_acquire + 220_771_906
    record = {
        "holderIdentity": a.name,
        "leaseDurationSeconds": 15,
        "acquireTime": fmt_s(a_acquire),
        "renewTime": fmt_s(captured - 1_318_442),
        "leaderTransitions": 4,
    }
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "annotations": {
                "control-plane.alpha.kubernetes.io/leader": json.dumps(
                    record, separators=(",", ":")
                )
            },
            "creationTimestamp": "2025-06-02T11:40:09Z",
            "name": "virt-controller",
            "namespace": KUBEVIRT_NS,
            "resourceVersion": sc.rv(411),
            "uid": sc.ids.uuid4(),
        },
    }
    return sc.bundle(captured=captured, locks={"Endpoints": [endpoints]})


SAMPLES: list[tuple[str, Any, str]] = [
    (
        "leader-failover-gap",
        scenario_failover_gap,
        "the leader's node loses the API; its renewal round fails (klog E lines), it logs "
        "`failed to renew lease …` and `leaderelection lost` (end of previous.log) and restarts; "
        "the only other replica, a fresh pod, acquires 26.3 s later and then starts "
        "`default/web-2`, created in the gap. `leader status` 0, `leader history` 3.",
    ),
    (
        "leader-expired-holder-gone",
        scenario_expired_holder_gone,
        "after a rollout the Lease still names the deleted old leader and expired 3 min before "
        "capture; both new replicas are forbidden to read it and log only `attempting …` and "
        "klog E lines. `default/db-1` was started by the old leader. `leader status` 3, "
        "`leader history` 3.",
    ),
    (
        "leader-split-brain",
        scenario_split_brain,
        "the leader's node freezes for 25 s; the standby acquires after 17.9 s and starts "
        "`default/api-2` and `default/api-3`; the old leader resumes, re-enqueues "
        "`default/api-1` twice on conflicts, then logs `failed to renew lease` and "
        "`leaderelection lost`. `leader status` 0, `leader history` 3.",
    ),
    (
        "leader-endpoints-lock",
        scenario_endpoints_lock,
        "the pre-v1.3 lock: no Lease, an Endpoints `kubevirt/virt-controller` with the "
        "`control-plane.alpha.kubernetes.io/leader` annotation record (v1.9.0-shaped logs). "
        "`leader status` 0, `leader history` 0.",
    ),
]


def write_bundle(root: Path, result: dict[str, Any], readme: str) -> None:
    """make_samples' kvtrace bundle, plus previous.log files and the Endpoints lock."""
    objects = dict(result["objects"])
    endpoints = objects.pop("Endpoints", None)
    replicas: list[Replica] = result["replicas"]
    write_kvtrace_bundle(
        root, captured=result["captured"], objects=objects,
        logs=[r.current for r in replicas], readme=readme,
    )  # fmt: skip
    manifest = json.loads((root / "manifest.json").read_text())
    if endpoints:
        write(root / "objects/endpoints.yaml", to_yaml(k_list(endpoints)))
        manifest["collected"].append(
            {"kind": "Endpoints", "file": "objects/endpoints.yaml", "count": len(endpoints)}
        )
    for r in replicas:
        if r.previous is None:
            continue
        r.previous.check_monotonic()
        rel = f"logs/{KUBEVIRT_NS}/{r.name}/virt-controller/previous.log"
        write(root / rel, r.previous.render())
        entry = {"namespace": KUBEVIRT_NS, "pod": r.name, "container": "virt-controller",
                 "instance": "previous", "file": rel, "timestamps": True}  # fmt: skip
        manifest["logs"].append(entry)
    manifest["logs"].sort(key=lambda e: e["file"])
    write(root / "manifest.json", json.dumps(manifest, indent=2) + "\n")


def generate(out: Path) -> None:
    for name, scenario, line in SAMPLES:
        write_bundle(out / name, scenario(), f"{name}: {line}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            bad = [
                str(f.relative_to(tmp))
                for f in sorted(Path(tmp).rglob("*"))
                if f.is_file()
                and not (
                    (HERE / f.relative_to(tmp)).is_file()
                    and filecmp.cmp(f, HERE / f.relative_to(tmp), shallow=False)
                )
            ]
            print("out of date:", *bad, sep="\n  ") if bad else print("samples are up to date")
            return 1 if bad else 0
    for name, *_ in SAMPLES:
        if (args.out / name).exists():
            shutil.rmtree(args.out / name)
    generate(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
