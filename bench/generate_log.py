#!/usr/bin/env python3
"""Generate a large, realistic virt-controller log set for benchmarks (deterministic, seeded).

    python3 bench/generate_log.py                 # 1 GiB of logs into bench/out/
    python3 bench/generate_log.py --size 64M      # quick run
    python3 bench/generate_log.py --size 256M --seed 7 --out /tmp/kvbench

Output: a kvtrace bundle (``manifest.json``, ``objects/``, ``logs/kubevirt/<pod>/virt-controller/
{current,previous}.log``), readable with ``kvtrace … --bundle bench/out`` or with ``--log`` on the
log files. ``--size`` counts log bytes (objects come on top, about 10 MB).

The cluster: 5,000 VMs ``vm-00000`` … ``vm-04999`` spread over four namespaces
(``namespace_of(i)``: default, team-a, team-b, prod by ``i % 4``), three virt-controller
replicas. Replica A leads for the first half and then loses the lease (klog E lines,
``failed to renew lease``, ``leaderelection lost``) — that container is ``previous.log`` and its
restarted container's ``current.log`` only waits for the lease; replica B takes over and writes the
second half; replica C is a standby throughout. Every line carries the kubelet ``--timestamps``
prefix (9 fraction digits, µs–ms after the body time); body timestamps increase monotonically
within each file. Lines are v1.9.0 default-verbosity shapes (kvtrace/timeline/catalog.py); a few
klog reflector warnings and structured-klog panic blocks are mixed in for parser load (they are
shape samples, not a model of a crash: a real unrecovered panic would end the container). Each
VM's lines follow its runStrategy and VMI state (``Sim.episode``), so the model finds nothing but
the faults injected on purpose.

Lines are built with string formatting (no json.dumps per line) but are valid sorted-key JSON.
Standard library only.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path

import yaml

NVMS = 5000
NAMESPACES = ["default", "team-a", "team-b", "prod"]
KV_NS = "kubevirt"
HERE = Path(__file__).resolve().parent
CHUNK = 8 << 20  # bytes per write() call


def namespace_of(i: int) -> str:
    return NAMESPACES[i % len(NAMESPACES)]


def vm_name(i: int) -> str:
    return f"vm-{i:05d}"


def parse_size(s: str) -> int:
    s = s.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    unit = s[-1].upper()
    if unit in mult:
        return int(float(s[:-1]) * mult[unit])
    if s.upper().endswith("IB") and s[-3].upper() in mult:
        return int(float(s[:-3]) * mult[s[-3].upper()])
    return int(s)


def esc(s: str) -> str:
    """JSON string body (no surrounding quotes), HTML escaping off like go-kit."""
    return json.dumps(s, ensure_ascii=False)[1:-1]


# ----------------------------------------------------------------------------------------
# time formatting with per-second caches
# ----------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self._sec = -1
        self._iso = ""
        self._klog = ""
        self._std = ""

    def _set(self, sec: int) -> None:
        tm = time.gmtime(sec)
        self._sec = sec
        self._iso = time.strftime("%Y-%m-%dT%H:%M:%S", tm)
        self._klog = time.strftime("%m%d %H:%M:%S", tm)
        self._std = time.strftime("%Y/%m/%d %H:%M:%S", tm)

    def body(self, us: int) -> str:
        sec, frac = divmod(us, 1_000_000)
        if sec != self._sec:
            self._set(sec)
        return f"{self._iso}.{frac:06d}Z"

    def klog(self, us: int) -> str:
        sec, frac = divmod(us, 1_000_000)
        if sec != self._sec:
            self._set(sec)
        return f"{self._klog}.{frac:06d}"

    def std(self, us: int) -> str:
        sec = us // 1_000_000
        if sec != self._sec:
            self._set(sec)
        return self._std


class PrefixClock:
    def __init__(self) -> None:
        self._sec = -1
        self._iso = ""

    def prefix(self, ns: int) -> str:
        sec, frac = divmod(ns, 1_000_000_000)
        if sec != self._sec:
            self._sec = sec
            self._iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        return f"{self._iso}.{frac:09d}Z "


# ----------------------------------------------------------------------------------------
# one container log file
# ----------------------------------------------------------------------------------------


class LogFile:
    def __init__(self, path: Path, rng: random.Random) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fh = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self.buf: list[str] = []
        self.buf_bytes = 0
        self.bytes = 0
        self.lines = 0
        self.last_ns = 0
        self.pc = PrefixClock()
        self.rnd = rng.random
        self.last_body_us = 0

    def add(self, us: int, body: str) -> None:
        if us < self.last_body_us:
            raise RuntimeError(f"{self.path}: time goes backwards")
        self.last_body_us = us
        ns = us * 1000 + 8_000 + int(self.rnd() * self.rnd() * 3_000_000)
        if ns <= self.last_ns:
            ns = self.last_ns + 1_000 + int(self.rnd() * 20_000)
        self.last_ns = ns
        line = self.pc.prefix(ns) + body + "\n"
        self.buf.append(line)
        n = len(line)
        self.buf_bytes += n
        self.bytes += n
        self.lines += 1
        if self.buf_bytes >= CHUNK:
            self.flush()

    def flush(self) -> None:
        self.fh.write("".join(self.buf))
        self.buf.clear()
        self.buf_bytes = 0

    def close(self) -> None:
        self.flush()
        self.fh.close()


# ----------------------------------------------------------------------------------------
# line builders
# ----------------------------------------------------------------------------------------

CONFLICT = (
    'Operation cannot be fulfilled on virtualmachines.kubevirt.io "{name}": the object has '
    "been modified; please apply your changes to the latest version and try again"
)
EXISTS = 'Failure while starting VMI: virtualmachineinstances.kubevirt.io "{name}" already exists'
WEBHOOK = (
    "Failure while starting VMI: Internal error occurred: failed calling webhook "
    '"virtualmachineinstances-create-validator.kubevirt.io": failed to call webhook: Post '
    '"https://virt-api.kubevirt.svc:443/virtualmachineinstances-validate-create?timeout=10s": '
    "context deadline exceeded"
)
VMI_REASONS = [
    "Internal error occurred: resource quota evaluation timed out",
    'Operation cannot be fulfilled on virtualmachineinstances.kubevirt.io "{name}": the object '
    "has been modified; please apply your changes to the latest version and try again",
    "failed to render launch manifest: failed to create pod for vmi {ns}/{name}, it needs a "
    'privileged namespace to run: pods "virt-launcher-{name}-" is forbidden: violates '
    'PodSecurity "restricted:latest"',
]
# Episodes by (runStrategy, has a VMI) with weights; NOISE can happen to any VM (NEEDS_VMI ones
# only while it has a VMI). FAULT_EVERY: one injected stale-cache collision per this many episodes
# (``--fault-every``).
LIFECYCLE: dict[tuple[str, bool], list[tuple[str, int]]] = {
    ("Always", True): [("always-restart", 22), ("crash-loop", 8), ("restart-request", 6)],
    ("Manual", True): [("manual-stop-start", 12)],
    ("Halted", True): [("halted-stop", 12)],
    ("RerunOnFailure", True): [("rerun-failed", 8), ("rerun-succeeded", 4)],
}
NOISE = [
    ("status-conflict", 14),
    ("vmi-requeue", 10),
    ("storage-wait", 4),
    ("pod-error", 3),
    ("overhead-warning", 3),
]
NEEDS_VMI = {"vmi-requeue", "storage-wait", "pod-error", "overhead-warning"}
FAULT_EVERY = 20_000
LEASE_URL = (
    "https://10.96.0.1:443/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/"
    "virt-controller?timeout=5s"
)


class Lines:
    """Formats bodies. Objects: (ns, name, uid)."""

    def __init__(self) -> None:
        self.c = Clock()

    def obj(
        self,
        us: int,
        level: str,
        msg: str,
        pos: str,
        ns: str,
        name: str,
        uid: str,
        reason: str | None = None,
    ) -> str:
        ts = self.c.body(us)
        if reason is None:
            return (
                f'{{"component":"virt-controller","kind":"","level":"{level}","msg":"{msg}",'
                f'"name":"{name}","namespace":"{ns}","pos":"{pos}","timestamp":"{ts}",'
                f'"uid":"{uid}"}}'
            )
        return (
            f'{{"component":"virt-controller","kind":"","level":"{level}","msg":"{msg}",'
            f'"name":"{name}","namespace":"{ns}","pos":"{pos}","reason":"{reason}",'
            f'"timestamp":"{ts}","uid":"{uid}"}}'
        )

    def noobj(self, us: int, level: str, msg: str, pos: str, reason: str | None = None) -> str:
        ts = self.c.body(us)
        if reason is None:
            return (
                f'{{"component":"virt-controller","level":"{level}","msg":"{msg}","pos":"{pos}",'
                f'"timestamp":"{ts}"}}'
            )
        return (
            f'{{"component":"virt-controller","level":"{level}","msg":"{msg}","pos":"{pos}",'
            f'"reason":"{reason}","timestamp":"{ts}"}}'
        )

    def stdlib(self, us: int, msg: str) -> str:
        return (
            f'{{"component":"virt-controller","level":"info","msg":"{msg}","pos":"stdlib.go:105",'
            f'"timestamp":"{self.c.body(us)}","ts":"{self.c.std(us)}"}}'
        )

    def klog(self, us: int, sev: str, fileline: str, msg: str) -> str:
        return f"{sev}{self.c.klog(us)}       1 {fileline}] {msg}"

    def listening(self, us: int) -> str:
        return (
            '{"action":"listening","component":"virt-controller","interface":"0.0.0.0",'
            f'"level":"info","port":8443,"pos":"application.go:584","service":"http",'
            f'"timestamp":"{self.c.body(us)}"}}'
        )


# The v1.9.0 start-up burst (informer names, controller start lines and their positions) has one
# home: the sample generator, whose values were checked against the v1.9.0 source.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample-logs"))
from make_samples import CONTROLLER_STARTS, INFORMERS  # noqa: E402

STARTING_CONTROLLERS = (
    "STARTING controllers with following threads : node 3, vmi 10, replicaset 3, vm 3, "
    "migration 3, evacuation 3, disruptionBudget 3"
)


def write_startup(f: LogFile, L: Lines, t: int) -> int:
    f.add(
        t, L.noobj(t, "info", "CDI detected, DataVolume integration enabled", "application.go:428")
    )
    f.add(t + 29_511, L.noobj(t + 29_511, "info", "we are on kubernetes", "application.go:449"))
    f.add(t + 1_190_224, L.listening(t + 1_190_224))
    ta = t + 1_396_870
    f.add(
        ta,
        L.klog(
            ta,
            "I",
            "leaderelection.go:257",
            "attempting to acquire leader lease kubevirt/virt-controller...",
        ),
    )
    return ta


def write_acquired(f: LogFile, L: Lines, t: int, rng: random.Random) -> int:
    f.add(
        t,
        L.klog(
            t, "I", "leaderelection.go:271", "successfully acquired lease kubevirt/virt-controller"
        ),
    )
    names = INFORMERS[:]
    rng.shuffle(names)
    for n in names:
        t += rng.randint(15, 90)
        f.add(t, L.noobj(t, "info", f"STARTING informer {n}", "virtinformers.go:397"))
    t += rng.randint(300, 900)
    f.add(t, L.stdlib(t, STARTING_CONTROLLERS))
    t += rng.randint(40, 120)
    ptrs = " ".join(f"0xc000{rng.randint(0x100000, 0xFFFFFF):06x}" for _ in range(6))
    f.add(
        t,
        L.stdlib(
            t,
            esc(
                f"\nvca.migrationInformer :&{{{ptrs} 43200000000000 "
                "43200000000000 <nil> {0 0} 0 0 0 0} false}"
            ),
        ),
    )
    starts = CONTROLLER_STARTS[:]
    rng.shuffle(starts)
    for msg, pos in starts:
        t += rng.randint(25, 260)
        f.add(t, L.noobj(t, "info", msg, pos))
    return t


# ----------------------------------------------------------------------------------------
# the simulation
# ----------------------------------------------------------------------------------------


class VM:
    __slots__ = (
        "busy_until",
        "created_us",
        "firmware",
        "gen",
        "i",
        "name",
        "ns",
        "phase",
        "pod",
        "pod_uid",
        "restarts",
        "strategy",
        "uid",
        "vmi_created_us",
        "vmi_uid",
    )

    def __init__(self, i: int, rng: random.Random, t0: int) -> None:
        self.i = i
        self.ns = namespace_of(i)
        self.name = vm_name(i)
        self.uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        r = rng.random()
        self.strategy = (
            "Always"
            if r < 0.6
            else "Manual"
            if r < 0.75
            else "RerunOnFailure"
            if r < 0.9
            else "Halted"
        )
        self.gen = 1 + (i % 3)
        self.created_us = t0 - rng.randint(2, 90) * 86_400_000_000
        self.vmi_uid = ""
        self.pod = ""
        self.pod_uid = ""
        self.phase = ""
        self.vmi_created_us = 0
        self.restarts = 0
        self.busy_until = 0
        self.firmware = str(uuid.UUID(int=rng.getrandbits(128), version=4))  # the VM webhook's

    def new_vmi(self, rng: random.Random, t: int) -> None:
        self.vmi_uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.pod_uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.pod = f"virt-launcher-{self.name}-" + "".join(
            rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)
        )
        self.phase = "Running"
        self.vmi_created_us = t


class Sim:
    def __init__(
        self, seed: int, size: int, out: Path, fault_every: int = FAULT_EVERY, vms: int = NVMS
    ) -> None:
        self.fault_every = fault_every
        self.rng = random.Random(seed)
        self.size = size
        self.out = out
        self.L = Lines()
        self.t0 = 1_795_392_000_000_000  # 2026-11-23T00:00:00Z
        self.vms = [VM(i, self.rng, self.t0) for i in range(vms)]
        for vm in self.vms:
            if vm.strategy != "Halted" or self.rng.random() < 0.2:
                vm.new_vmi(self.rng, vm.created_us + 2_000_000)
        self.heap: list[tuple[int, int, str]] = []
        self.seq = 0
        self.faults: list[str] = []
        rs = "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
        self.pods = [
            "virt-controller-5c8f7d9b46-"
            + "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
            for _ in range(3)
        ]
        self.rs_hash = rs
        # average bytes per line ≈ 330 → choose an episode rate that spans ~3 days
        est_lines = max(size // 330, 1000)
        self.mean_gap = max(72 * 3600 * 1_000_000 // est_lines, 50)

    # -- heap --------------------------------------------------------------------------
    def push(self, us: int, body: str) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (us, self.seq, body))

    def drain(self, f: LogFile, until: int | None) -> None:
        h = self.heap
        pop = heapq.heappop
        add = f.add
        while h and (until is None or h[0][0] <= until):
            us, _, body = pop(h)
            add(us, body)

    # -- episodes ----------------------------------------------------------------------
    def episode(self, t: int) -> None:
        """One thing happening to one VM, as v1.9.0 logs it at default verbosity.

        What can happen depends on the VM's runStrategy and on whether it has a VMI (the
        decision table of ``syncRunStrategy``, vm.go:970-1178), and a VM is never in two episodes
        at once (the work queue processes a key serially), so every VM's lines form a history the
        controller could have written. A stale-cache collision (the model's KV-EX-01) is injected
        on purpose about once per ``self.fault_every`` episodes.
        """
        rng = self.rng
        vm = self.vms[rng.randrange(len(self.vms))]
        if t < vm.busy_until:
            return
        if vm.vmi_uid and vm.strategy == "Always" and rng.randrange(self.fault_every) == 0:
            kind = "collision"
        else:
            choices = LIFECYCLE.get((vm.strategy, bool(vm.vmi_uid)), []) + NOISE
            names = [name for name, _ in choices]
            weights = [weight for _, weight in choices]
            kind = rng.choices(names, weights)[0]
            if kind in NEEDS_VMI and not vm.vmi_uid:
                return
        vm.busy_until = getattr(self, "ep_" + kind.replace("-", "_"))(vm, t) + 2_000_000

    # -- line helpers ------------------------------------------------------------------
    def o(self, vm: VM, us: int, level: str, msg: str, pos: str, reason: str | None = None) -> None:
        self.push(us, self.L.obj(us, level, msg, pos, vm.ns, vm.name, vm.uid, reason))

    def requeue(self, vm: VM, us: int, reason: str) -> None:
        msg = f"re-enqueuing VirtualMachine {vm.ns}/{vm.name}"
        self.push(us, self.L.noobj(us, "info", msg, "vm.go:348", reason))

    def start(self, vm: VM, us: int, pos: str, decision: str | None = None) -> int:
        self.o(vm, us, "info", decision or f"Starting VM due to runStrategy: {vm.strategy}", pos)
        us += self.rng.randint(6_000, 40_000)
        msg = f"Started VM by creating the new virtual machine instance {vm.name}"
        self.o(vm, us, "info", msg, "vm.go:1341")
        vm.new_vmi(self.rng, us)
        return us

    def stop_and_delete(self, vm: VM, t: int, stop: str, pos: str, phases: list[str]) -> int:
        """The stop decision, the delete call, and the decision repeating (one per later phase
        the terminating VMI shows) until the VMI is gone."""
        rng = self.rng
        self.o(vm, t, "info", stop.format(phase=phases[0]), pos)
        t += rng.randint(8_000, 25_000)
        msg = f"Dispatching delete event for vmi {vm.ns}/{vm.name} with phase {phases[0]}"
        self.o(vm, t, "info", msg, "vm.go:1685")
        for phase in phases[1:]:
            t += rng.randint(20_000, 900_000)
            self.o(vm, t, "info", stop.format(phase=phase), pos)
        vm.vmi_uid = ""
        return t

    # -- lifecycle episodes --------------------------------------------------------------
    def ep_always_restart(self, vm: VM, t: int) -> int:
        """The VMI ended after running: delete, repeats, create; sometimes the create first
        times out in the validating webhook and the work queue retries (5 ms·2ⁿ)."""
        rng = self.rng
        phase = "Failed" if rng.random() < 0.8 else "Succeeded"
        stop = "Stopping VM with VMI in phase {phase} and VM runStrategy: Always"
        t = self.stop_and_delete(vm, t, stop, "vm.go:1005", [phase] * rng.randint(1, 4))
        vm.restarts = 0
        t += rng.randint(30_000, 2_000_000)
        if rng.random() < 0.12:
            reason, delay = esc(WEBHOOK), 5_000
            for _ in range(rng.randint(1, 3)):
                self.o(vm, t, "info", "Starting VM due to runStrategy: Always", "vm.go:1032")
                t += 10_000_000 + rng.randint(0, 50_000)
                self.o(vm, t, "info", "Failed to create VirtualMachineInstance: /", "vm.go:1336")
                self.o(
                    vm,
                    t + 160,
                    "error",
                    "Reconciling the VirtualMachine failed.",
                    "vm.go:448",
                    reason,
                )
                self.requeue(vm, t + 420, reason)
                t += delay + rng.randint(1_000, 9_000)
                delay *= 2
        return self.start(vm, t, "vm.go:1032")

    def ep_crash_loop(self, vm: VM, t: int) -> int:
        """The VMI failed before Running: the n-th such failure delays the next start by
        10·n² s plus jitter, capped at 300 s (vm.go:1477-1504)."""
        rng = self.rng
        stop = "Stopping VM with VMI in phase {phase} and VM runStrategy: Always"
        t = self.stop_and_delete(vm, t, stop, "vm.go:1005", ["Failed"])
        vm.restarts += 1
        base = min(10 * vm.restarts * vm.restarts, 300)
        wait = min(base + rng.randint(0, base // 2), 300)
        t += rng.randint(200_000, 3_000_000)
        self.o(
            vm,
            t,
            "info",
            "Delaying start of VM Starting VM with 'runStrategy: Always' due to start "
            f"failure backoff. Waiting {wait} more seconds before starting.",
            "vm.go:1027",
        )
        t += wait * 1_000_000 + rng.randint(1_000, 900_000)
        return self.start(vm, t, "vm.go:1032")

    def ep_restart_request(self, vm: VM, t: int) -> int:
        """``virtctl restart``: the restart request precedes each stop decision (vm.go:985)."""
        rng = self.rng
        for k, phase in enumerate(("Running", "Running", "Running", "Succeeded")):
            msg = (
                f"processing forced restart request for VMI with phase {phase} and VM "
                "runStrategy: Always"
            )
            self.o(vm, t, "info", msg, "vm.go:985")
            stop = f"Stopping VM with VMI in phase {phase} and VM runStrategy: Always"
            self.o(vm, t + 90, "info", stop, "vm.go:1005")
            if k == 0:
                t += rng.randint(8_000, 25_000)
                delete = f"Dispatching delete event for vmi {vm.ns}/{vm.name} with phase Running"
                self.o(vm, t, "info", delete, "vm.go:1685")
            t += rng.randint(200_000, 4_000_000)
        vm.vmi_uid, vm.restarts = "", 0
        return self.start(vm, t, "vm.go:1032")

    def ep_manual_stop_start(self, vm: VM, t: int) -> int:
        """``virtctl stop`` then, up to an hour later, ``virtctl start``. The stop line swaps
        its arguments in v1.9.0 (vm.go:1094)."""
        rng = self.rng
        stop = (
            "Running with VMI in phase Stopping VM due to stop request and VM runStrategy: Manual"
        )
        t = self.stop_and_delete(vm, t, stop, "vm.go:1094", ["Running"] * rng.randint(2, 4))
        t += rng.randint(60, 3600) * 1_000_000
        decision = "Starting VM due to start request and runStrategy: Manual"
        return self.start(vm, t, "vm.go:1105", decision)

    def ep_halted_stop(self, vm: VM, t: int) -> int:
        stop = "Stopping VM with VMI in phase {phase} due to runStrategy: Halted"
        phases = ["Running", "Running", "Succeeded", "Succeeded"]
        return self.stop_and_delete(vm, t, stop, "vm.go:1134", phases)

    def ep_rerun_failed(self, vm: VM, t: int) -> int:
        """RerunOnFailure recreates a Failed VMI; the status update races (409) and is
        re-enqueued first."""
        rng = self.rng
        stop = "Stopping VM with VMI in phase {phase} and VM runStrategy: RerunOnFailure"
        t = self.stop_and_delete(vm, t, stop, "vm.go:1052", ["Failed"])
        t += rng.randint(2_000, 9_000)
        reason = esc(CONFLICT.format(name=vm.name))
        self.o(vm, t, "error", "Updating the VirtualMachine status failed.", "vm.go:453", reason)
        self.requeue(vm, t + 120, reason)
        t += rng.randint(500_000, 8_000_000)
        return self.start(vm, t, "vm.go:1081")

    def ep_rerun_succeeded(self, vm: VM, t: int) -> int:
        """RerunOnFailure deletes a Succeeded VMI and leaves the VM stopped."""
        stop = "Stopping VM with VMI in phase {phase} and VM runStrategy: RerunOnFailure"
        return self.stop_and_delete(vm, t, stop, "vm.go:1052", ["Succeeded"])

    def ep_collision(self, vm: VM, t: int) -> int:
        """The injected fault: a stale informer cache hides the VMI, the controller decides to
        start and the create collides: the VMI is named after the VM, so it ``already exists``
        (vm.go:1336, then 448 and 348)."""
        self.o(vm, t, "info", "Starting VM due to runStrategy: Always", "vm.go:1032")
        t += self.rng.randint(3_000, 20_000)
        self.o(vm, t, "info", "Failed to create VirtualMachineInstance: /", "vm.go:1336")
        reason = esc(EXISTS.format(name=vm.name))
        self.o(vm, t + 150, "error", "Reconciling the VirtualMachine failed.", "vm.go:448", reason)
        self.requeue(vm, t + 400, reason)
        self.faults.append(f"{vm.ns}/{vm.name}")
        return t + 400

    # -- episodes that change nothing ----------------------------------------------------
    def ep_status_conflict(self, vm: VM, t: int) -> int:
        reason = esc(CONFLICT.format(name=vm.name))
        self.o(vm, t, "error", "Updating the VirtualMachine status failed.", "vm.go:453", reason)
        self.requeue(vm, t + 130, reason)
        return t + 130

    def ep_vmi_requeue(self, vm: VM, t: int) -> int:
        """The VMI controller re-enqueues (no object on the line: the key is in the text)."""
        rng = self.rng
        reason = esc(rng.choice(VMI_REASONS).format(name=vm.name, ns=vm.ns))
        msg = f"reenqueuing VirtualMachineInstance {vm.ns}/{vm.name}"
        for _ in range(rng.randint(1, 3)):
            self.push(t, self.L.noobj(t, "info", msg, "vmi.go:288", reason))
            t += rng.randint(5_000, 400_000)
        return t

    def ep_storage_wait(self, vm: VM, t: int) -> int:
        msg = "Delaying pod creation while backend storage populates."
        self.push(t, self.L.obj(t, "info", msg, "lifecycle.go:139", vm.ns, vm.name, vm.vmi_uid))
        requeue = f"reenqueuing VirtualMachineInstance {vm.ns}/{vm.name}"
        self.push(t + 300, self.L.noobj(t + 300, "info", requeue, "vmi.go:288", "PVC pending"))
        return t + 300

    def ep_pod_error(self, vm: VM, t: int) -> int:
        msg = self.rng.choice(
            [
                "Patching of pod conditions failed: Timeout: request did not complete within "
                "requested timeout - context deadline exceeded",
                "failed to sync dynamic pod annotations and labels during sync: pods "
                f'\\"{vm.pod}\\" not found',
            ]
        )
        pos = "lifecycle.go:972" if msg.startswith("Patching") else "lifecycle.go:839"
        self.push(t, self.L.obj(t, "error", msg, pos, vm.ns, vm.pod, vm.pod_uid))
        return t

    def ep_overhead_warning(self, vm: VM, t: int) -> int:
        msg = (
            "Failed to parse memory overhead annotation: "
            'strconv.ParseInt: parsing \\"29x\\": invalid syntax'
        )
        self.push(t, self.L.obj(t, "warning", msg, "lifecycle.go:1175", vm.ns, vm.name, vm.vmi_uid))
        return t

    def reflector_warning(self, t: int) -> None:
        kind = self.rng.choice(
            ["VirtualMachineInstance", "VirtualMachine", "Pod", "ControllerRevision"]
        )
        self.push(
            t,
            self.L.klog(
                t,
                "W",
                "reflector.go:484",
                f"pkg/controller/virtinformers.go:329: watch of *v1.{kind} ended with: an error "
                'on the server ("unable to decode an event from the watch stream: http2: client '
                'connection lost") has prevented the request from succeeding',
            ),
        )

    def panic_block(self, f: LogFile, t: int) -> None:
        """A structured-klog panic report (shape only) with its continuation lines."""
        L = self.L
        f.add(
            t,
            L.klog(
                t,
                "E",
                "runtime.go:142",
                '"Observed a panic" panic="runtime error: index out of range [2] with '
                'length 2" panicGoValue="runtime.boundsError{x:2, y:2, signed:true, '
                'code:0x0}" stacktrace=<',
            ),
        )
        g = self.rng.randint(300, 9000)
        frames = [
            f"\tgoroutine {g} [running]:",
            "\tk8s.io/apimachinery/pkg/util/runtime.logPanic({0x2f1c8a0, 0xc0007a2e10}, "
            "{0x2a9b3c0, 0xc002f4b180})",
            "\t\t/go/src/kubevirt.io/kubevirt/vendor/k8s.io/apimachinery/pkg/util/runtime/"
            "runtime.go:132 +0xb5",
            "\tk8s.io/apimachinery/pkg/util/runtime.handleCrash({0x2f1c8a0, 0xc0007a2e10}, "
            "{0x2a9b3c0, 0xc002f4b180}, {0x0, 0x0, 0x0})",
            "\t\t/go/src/kubevirt.io/kubevirt/vendor/k8s.io/apimachinery/pkg/util/runtime/"
            "runtime.go:107 +0x116",
            "\tpanic({0x2a9b3c0?, 0xc002f4b180?})",
            "\t\t/usr/local/go/src/runtime/panic.go:791 +0x132",
            "\tkubevirt.io/kubevirt/pkg/virt-controller/watch/vm.(*Controller).sync(0xc000a1e000, "
            "0xc002f4b180, 0xc003a1c000, {0xc001b2e0f0, 0x10})",
            "\t\t/go/src/kubevirt.io/kubevirt/pkg/virt-controller/watch/vm/vm.go:3298 +0x4f2",
            "\tcreated by kubevirt.io/kubevirt/pkg/virt-controller/watch/vm.(*Controller).Run "
            "in goroutine 412",
            "\t\t/go/src/kubevirt.io/kubevirt/pkg/virt-controller/watch/vm/vm.go:317 +0x1c5",
            " >",
        ]
        for fr in frames:
            f.add(t, fr)

    # -- main loop ---------------------------------------------------------------------
    def run(self) -> dict[str, object]:
        rng = self.rng
        logs = self.out / "logs" / KV_NS
        A, B, C = self.pods
        fa_prev = LogFile(logs / A / "virt-controller" / "previous.log", random.Random(1))
        fb = LogFile(logs / B / "virt-controller" / "current.log", random.Random(2))
        fc = LogFile(logs / C / "virt-controller" / "current.log", random.Random(3))
        L = self.L

        t = self.t0
        ta = write_startup(fa_prev, L, t)
        tb_att = write_startup(fb, L, t + 1_734_118)
        write_startup(fc, L, t + 2_905_402)
        t_acq = ta + 16_204_733
        t = write_acquired(fa_prev, L, t_acq, rng) + 4_000_000

        half = self.size // 2
        panics_at = sorted({int(self.size * 0.27), int(self.size * 0.81)})
        target = fa_prev
        mean_gap = self.mean_gap * 4  # ~4 lines per episode
        n_ep = 0
        changed = False
        t_change = 0
        fa_cur_info: tuple[int, int] | None = None
        while True:
            written = fa_prev.bytes + fb.bytes
            if written >= self.size:
                break
            if not changed and fa_prev.bytes >= half:
                # -- leadership change: A's renewal fails, A exits; B takes over
                self.drain(fa_prev, None)
                t = max(t, fa_prev.last_body_us) + 1_500_000
                r_last = t - 2_000_000  # last successful renewal
                fa_prev.add(
                    t,
                    L.klog(
                        t,
                        "E",
                        "leaderelection.go:441",
                        f'Failed to update lock optimistically: Put "{LEASE_URL}": '
                        "context deadline exceeded, falling back to slow path",
                    ),
                )
                for k in range(2):
                    tt = t + 5_000_400 + k * 4_100_000
                    fa_prev.add(
                        tt,
                        L.klog(
                            tt,
                            "E",
                            "leaderelection.go:448",
                            "error retrieving resource lock kubevirt/virt-controller:"
                            f' Get "{LEASE_URL}": context deadline exceeded',
                        ),
                    )
                t_lost = r_last + 12_000_311
                fa_prev.add(
                    t_lost,
                    L.klog(
                        t_lost,
                        "I",
                        "leaderelection.go:297",
                        "failed to renew lease kubevirt/virt-controller: context deadline exceeded",
                    ),
                )
                tt = t_lost + 310
                for msg, pos in (
                    ("Stopping VirtualMachine controller.", "vm.go:322"),
                    ("Stopping vmi controller.", "vmi.go:265"),
                    ("Stopping migration controller.", "migration.go:296"),
                ):
                    tt += rng.randint(20, 200)
                    fa_prev.add(tt, L.noobj(tt, "info", msg, pos))
                tt += 420
                fa_prev.add(tt, L.stdlib(tt, "leaderelection lost"))
                # kubelet restarts the container after its 10 s crash back-off; by then B holds the
                # Lease, so the restarted A only waits (the Lease no longer names it)
                fa_cur_info = (tt + 10_287_000, 0)
                t_b = r_last + 18_731_402
                t = write_acquired(fb, L, t_b, rng) + 3_000_000
                target = fb
                changed = True
                t_change = t_b
                continue
            t += int(rng.expovariate(1.0) * mean_gap) + 1
            self.episode(t)
            n_ep += 1
            if n_ep % 25_000 == 0:
                self.reflector_warning(t + rng.randint(0, 500_000))
            self.drain(target, t)
            if panics_at and written >= panics_at[0]:
                panics_at.pop(0)
                self.drain(target, None)
                self.panic_block(target, max(t, target.last_body_us) + 1_000)
                t = target.last_body_us + 1
        self.drain(target, None)
        for f in (fa_prev, fb, fc):
            f.close()
        fa_cur = LogFile(logs / A / "virt-controller" / "current.log", random.Random(4))
        if fa_cur_info is not None:
            write_startup(fa_cur, L, fa_cur_info[0])
        fa_cur.close()
        return {
            "pods": self.pods,
            "leader_first": A,
            "leader_second": B,
            "standby": C,
            "t_change": t_change,
            "t_end": max(fb.last_body_us, fa_prev.last_body_us),
            "files": [
                (A, "previous", fa_prev),
                (A, "current", fa_cur),
                (B, "current", fb),
                (C, "current", fc),
            ],
            "tb_attempt": tb_att,
        }


# ----------------------------------------------------------------------------------------
# objects (string templates, cheap)
# ----------------------------------------------------------------------------------------


def _ts(us: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(us // 1_000_000))


def write_objects(
    sim: Sim, out: Path, t_end: int, info: dict[str, object]
) -> list[dict[str, object]]:
    objdir = out / "objects"
    objdir.mkdir(parents=True, exist_ok=True)
    vm_parts = ["apiVersion: v1\nitems:\n"]
    vmi_parts = ["apiVersion: v1\nitems:\n"]
    rv = 8_000_000
    n_vmi = 0
    for vm in sim.vms:
        rv += 3
        running = bool(vm.vmi_uid)
        printable = "Running" if running else "Stopped"
        status_rs = (
            f"    runStrategy: {vm.strategy}\n" if running or vm.strategy != "Halted" else ""
        )
        vm_parts.append(
            f"""- apiVersion: kubevirt.io/v1
  kind: VirtualMachine
  metadata:
    annotations:
      kubevirt.io/latest-observed-api-version: v1
      kubevirt.io/storage-observed-api-version: v1
    creationTimestamp: "{_ts(vm.created_us)}"
    finalizers:
    - kubevirt.io/virtualMachineControllerFinalize
    generation: {vm.gen}
    name: {vm.name}
    namespace: {vm.ns}
    resourceVersion: "{rv}"
    uid: {vm.uid}
  spec:
    runStrategy: {vm.strategy}
    template:
      metadata:
        creationTimestamp: null
        labels:
          app: {vm.name}
      spec:
        domain:
          cpu:
            cores: 1
            sockets: 1
            threads: 1
          firmware:
            uuid: {vm.firmware}
          devices:
            disks:
            - disk:
                bus: virtio
              name: rootdisk
            interfaces:
            - masquerade: {{}}
              name: default
          memory:
            guest: 1Gi
          resources:
            requests:
              memory: 1Gi
        networks:
        - name: default
          pod: {{}}
        volumes:
        - name: rootdisk
          persistentVolumeClaim:
            claimName: {vm.name}-rootdisk
  status:
    created: {"true" if running else "false"}
    printableStatus: {printable}
    ready: {"true" if running else "false"}
{status_rs}"""
        )
        if running:
            n_vmi += 1
            c = vm.vmi_created_us or vm.created_us
            vmi_parts.append(
                f"""- apiVersion: kubevirt.io/v1
  kind: VirtualMachineInstance
  metadata:
    annotations:
      kubevirt.io/latest-observed-api-version: v1
      kubevirt.io/storage-observed-api-version: v1
      kubevirt.io/vm-generation: "{vm.gen}"
    creationTimestamp: "{_ts(c)}"
    finalizers:
    - kubevirt.io/virtualMachineControllerFinalize
    - kubevirt.io/foregroundDeleteVirtualMachine
    labels:
      app: {vm.name}
      kubevirt.io/nodeName: node-{vm.i % 40:02d}
    name: {vm.name}
    namespace: {vm.ns}
    ownerReferences:
    - apiVersion: kubevirt.io/v1
      blockOwnerDeletion: true
      controller: true
      kind: VirtualMachine
      name: {vm.name}
      uid: {vm.uid}
    resourceVersion: "{rv + 1}"
    uid: {vm.vmi_uid}
  spec:
    domain:
      cpu:
        cores: 1
        sockets: 1
        threads: 1
      firmware:
        uuid: {vm.firmware}
      memory:
        guest: 1Gi
      resources:
        requests:
          memory: 1Gi
  status:
    nodeName: node-{vm.i % 40:02d}
    phase: Running
    phaseTransitionTimestamps:
    - phase: Pending
      phaseTransitionTimestamp: "{_ts(c)}"
    - phase: Scheduling
      phaseTransitionTimestamp: "{_ts(c + 300_000)}"
    - phase: Scheduled
      phaseTransitionTimestamp: "{_ts(c + 3_100_000)}"
    - phase: Running
      phaseTransitionTimestamp: "{_ts(c + 4_400_000)}"
    virtualMachineRevisionName: revision-start-vm-{vm.uid}-{vm.gen}
"""
            )
    tail = 'kind: List\nmetadata:\n  resourceVersion: ""\n'
    _write_json_list(objdir / "virtualmachines.json", "".join(vm_parts) + tail)
    _write_json_list(objdir / "virtualmachineinstances.json", "".join(vmi_parts) + tail)
    holder = info["leader_second"]
    renew = t_end + 1_200_000
    acquire = int(info["t_change"])  # type: ignore[call-overload]
    lease = f"""apiVersion: v1
items:
- apiVersion: coordination.k8s.io/v1
  kind: Lease
  metadata:
    creationTimestamp: "2026-09-01T08:00:00Z"
    name: virt-controller
    namespace: kubevirt
    resourceVersion: "{rv + 10}"
    uid: 6a0f9d51-3c5e-4a57-9b1e-0d7a4c2f8e61
  spec:
    acquireTime: "{_ts(acquire)[:-1]}.{acquire % 1_000_000:06d}Z"
    holderIdentity: {holder}
    leaseDurationSeconds: 15
    leaseTransitions: 7
    renewTime: "{_ts(renew)[:-1]}.{renew % 1_000_000:06d}Z"
{tail}"""
    _write_json_list(objdir / "leases.json", lease)
    return [
        {"kind": "VirtualMachine", "file": "objects/virtualmachines.json", "count": len(sim.vms)},
        {
            "kind": "VirtualMachineInstance",
            "file": "objects/virtualmachineinstances.json",
            "count": n_vmi,
        },
        {"kind": "Lease", "file": "objects/leases.json", "count": 1},
    ]


def _write_json_list(path: Path, yaml_text: str) -> None:
    """Objects are composed as YAML (readable here) and written as JSON, the form
    ``kvtrace collect`` writes: a 5,000-VM list loads in milliseconds instead of seconds."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    path.write_text(json.dumps(yaml.load(yaml_text, Loader=loader), separators=(",", ":")))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", default="1G", help="total log bytes, e.g. 64M, 1G (default 1G)")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--no-objects", action="store_true", help="logs only (no objects/)")
    ap.add_argument(
        "--fault-every",
        type=int,
        default=FAULT_EVERY,
        help=f"inject one stale-cache collision per N episodes (default {FAULT_EVERY})",
    )
    ap.add_argument("--vms", type=int, default=NVMS, help=f"how many VMs (default {NVMS})")
    ap.add_argument("--faults-file", type=Path, help="write the faulty VMs' ns/name here")
    args = ap.parse_args()
    size = parse_size(args.size)
    out: Path = args.out
    if (out / "logs").exists():
        for p in sorted((out / "logs").rglob("*.log")):
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    sim = Sim(args.seed, size, out, args.fault_every, args.vms)
    info = sim.run()
    collected: list[dict[str, object]] = []
    if not args.no_objects:
        collected = write_objects(sim, out, int(info["t_end"]), info)  # type: ignore[call-overload]
    logs = []
    total = 0
    for pod, inst, f in info["files"]:  # type: ignore[attr-defined]
        rel = f"logs/{KV_NS}/{pod}/virt-controller/{inst}.log"
        logs.append(
            {
                "namespace": KV_NS,
                "pod": pod,
                "container": "virt-controller",
                "instance": inst,
                "file": rel,
                "timestamps": True,
            }
        )
        total += f.bytes
    t_end = int(info["t_end"]) + 2_000_000  # type: ignore[call-overload]
    captured = f"{_ts(t_end)[:-1]}.{t_end % 1_000_000:06d}Z"
    manifest = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": captured,
        "kvtraceVersion": "0.1.0",
        "serverVersion": "v1.31.2",
        "kubevirtVersion": "v1.9.0",
        "kubevirtNamespace": KV_NS,
        "scope": {"allNamespaces": True, "namespaces": [], "vms": []},
        "collected": collected,
        "logs": logs,
        "missing": [],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    dt = time.monotonic() - t_start
    nlines = sum(f.lines for _, _, f in info["files"])  # type: ignore[attr-defined]
    print(
        f"wrote {total / (1 << 20):.1f} MiB of logs ({nlines:,} lines) in {dt:.1f} s "
        f"({total / (1 << 20) / max(dt, 1e-9):.0f} MiB/s) to {out}",
        file=sys.stderr,
    )
    if args.faults_file:
        args.faults_file.write_text("".join(f"{vm}\n" for vm in sim.faults))
    print(
        f"  {len(sim.faults)} injected stale-cache collisions (KV-EX-01): "
        + ", ".join(sim.faults[:5])
        + (" …" if len(sim.faults) > 5 else ""),
        file=sys.stderr,
    )
    for _pod, _inst, f in info["files"]:  # type: ignore[attr-defined]
        print(
            f"  {f.bytes / (1 << 20):9.1f} MiB  {f.lines:>10,} lines  "
            f"{os.path.relpath(f.path, out)}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
