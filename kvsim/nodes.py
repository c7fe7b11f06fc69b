"""What happens on the nodes: the scheduler binds a launcher pod, the kubelet starts and stops
it, virt-handler starts the domain (Scheduled → Running) and reports how the guest ended.

These are not virt-controller, so they print nothing to its log; they write the pod and VMI
status the controllers react to. virt-handler's phase writes append phase transition
timestamps on the node's clock (pkg/virt-handler/vm.go:1133 at v1.9.0), which may be a little
off the control plane's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from kvsim import launcher, scheduling, timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj, Watch
from kvsim.events import Recorder
from kvsim.kernel import MS, SECOND, Host, Kernel

POD, VMI = "Pod", "VirtualMachineInstance"


@dataclass(frozen=True)
class Fate:
    """How one incarnation of a VM ends on its own: ``fail-start`` (the launcher dies before
    the guest runs), ``crash`` or ``shutdown`` ``after`` µs of running; None runs on."""

    how: str
    after: int = 0


@dataclass
class Nodes:
    kernel: Kernel
    api: ApiServer
    names: tuple[str, ...]
    seed: str
    fates: Callable[[str, int], Fate | None] = lambda name, index: None
    skew_us: dict[str, int] = field(default_factory=dict)  # node clock offset
    # the scheduler reads the Node objects (cordons, kubevirt.io/schedulable) and a pod's
    # anti-affinity; off, it binds anywhere (the histories made before kvsim modelled nodes)
    node_aware: bool = False
    hung: set[str] = field(default_factory=set)  # nodes whose virt-handler writes nothing

    def __post_init__(self) -> None:
        self.rng = random.Random(f"nodes/{self.seed}")
        self.host = Host("nodes")
        self.incarnations: dict[str, int] = {}
        self.started: set[str] = set()  # VMI uids whose domain runs
        self.stopping: set[str] = set()  # pod uids the kubelet is stopping
        self.shutting: set[str] = set()  # VMI uids whose guest is shutting down
        self.api.watch(
            Watch({POD, VMI}, self.host, self._event, lambda: self.rng.randint(200, 3_000))
        )

    def _event(self, event: str, obj: Obj) -> None:
        if obj["kind"] == POD:
            self._pod_event(event, obj)
        else:
            self._vmi_event(event, obj)

    # --- pods: scheduler and kubelet -------------------------------------------------------
    def _pod_event(self, event: str, pod: Obj) -> None:
        meta = pod["metadata"]
        if event == "ADDED" and not pod["spec"].get("nodeName"):
            self.kernel.after(self.rng.randint(40, 700) * MS, lambda: self._bind(pod))
        elif (
            event == "MODIFIED"
            and meta.get("deletionTimestamp")
            and meta["uid"] not in self.stopping
        ):
            self.stopping.add(meta["uid"])
            self.kernel.after(self._stop_delay(pod), lambda: self._terminated(pod, "Succeeded"))

    def _stop_delay(self, pod: Obj) -> int:
        vmi_uid = (pod["metadata"].get("labels") or {}).get("kubevirt.io/created-by", "")
        if vmi_uid in self.started:
            return self.rng.randint(1_500, 6_000) * MS  # the guest shuts down first
        return self.rng.randint(200, 1_200) * MS

    def _bind(self, pod: Obj) -> None:
        if self.node_aware:
            self._bind_feasible(pod)
            return
        node = self.names[self.rng.randrange(len(self.names))]
        self._bound(pod, node)

    def _bind_feasible(self, pod: Obj) -> None:
        """The scheduler's filters these pods meet: the node selector on
        ``kubevirt.io/schedulable``, cordons, and a migration target's anti-affinity; with no
        node left the pod stays Pending, PodScheduled=False/Unschedulable, and is retried."""
        meta = pod["metadata"]
        live = self.api.peek(POD, meta["namespace"], meta["name"])
        if (
            live is None
            or live["metadata"]["uid"] != meta["uid"]
            or live["metadata"].get("deletionTimestamp")
        ):
            return
        verdicts = {n: scheduling.misfit(self.api, live, n) for n in self.names}
        fits = [n for n, why in verdicts.items() if why is None]
        if not fits:
            now = self.kernel.now
            message = scheduling.message(list(verdicts.values()))
            self._patch_pod(pod, lambda current: scheduling.unschedulable(current, now, message))
            self.kernel.after(self.rng.randint(15, 60) * SECOND, lambda: self._bind(pod))
            return
        self._bound(pod, fits[self.rng.randrange(len(fits))])

    def _bound(self, pod: Obj, node: str) -> None:
        now = self.kernel.now
        if not self._patch_pod(pod, lambda current: launcher.scheduled(current, node, now)):
            return
        if scheduling.is_migration_target(pod):  # its guest arrives by migration
            self.kernel.after(self.rng.randint(900, 3_500) * MS, lambda: self._running(pod, node))
            return
        fate = self._fate_of(pod)
        if fate is not None and fate.how == "fail-start":
            self.kernel.after(
                self.rng.randint(2_000, 9_000) * MS, lambda: self._terminated(pod, "Failed")
            )
            return
        self.kernel.after(self.rng.randint(900, 3_500) * MS, lambda: self._running(pod, node))

    def _fate_of(self, pod: Obj) -> Fate | None:
        name = (pod["metadata"].get("labels") or {}).get("vm.kubevirt.io/name", "")
        index = self.incarnations.get(name, 0)
        self.incarnations[name] = index + 1
        return self.fates(name, index)

    def _running(self, pod: Obj, node: str) -> None:
        now, ip = self.kernel.now, self._ip()
        host_ip = f"192.168.122.{11 + self.names.index(node)}"
        if self._patch_pod(pod, lambda c: launcher.running(c, now, ip, host_ip, self.rng)):
            ready_after = self.rng.randint(300, 1_800) * MS
            self.kernel.after(ready_after, lambda: self._ready(pod))

    def _ip(self) -> str:
        return f"10.244.{self.rng.randint(0, 7)}.{self.rng.randint(2, 250)}"

    def _ready(self, pod: Obj) -> None:
        now = self.kernel.now
        self._patch_pod(pod, lambda current: launcher.ready(current, now))

    def terminate(self, pod: Obj, phase: str) -> None:
        """The pod's containers end (its launcher exited) with ``phase``."""
        self._terminated(pod, phase)

    def _terminated(self, pod: Obj, phase: str) -> None:
        now, meta = self.kernel.now, pod["metadata"]
        self._patch_pod(pod, lambda current: launcher.terminated(current, now, phase))
        live = self.api.peek(POD, meta["namespace"], meta["name"])
        if live is not None and live["metadata"].get("deletionTimestamp"):
            self.kernel.after(
                self.rng.randint(50, 400) * MS,
                lambda: self.api.remove(POD, meta["namespace"], meta["name"]),
            )

    def _patch_pod(self, pod: Obj, mutate: Callable[[Obj], None]) -> bool:
        meta = pod["metadata"]
        live = self.api.peek(POD, meta["namespace"], meta["name"])
        if live is None or live["metadata"]["uid"] != meta["uid"]:
            return False
        self.api.patch(POD, meta["namespace"], meta["name"], mutate)
        return True

    # --- virt-handler ----------------------------------------------------------------------
    def _vmi_event(self, event: str, vmi: Obj) -> None:
        if event == "DELETED":
            self.started.discard(vmi["metadata"]["uid"])
            return
        uid, status = vmi["metadata"]["uid"], vmi.get("status", {})
        if status.get("phase") == "Scheduled" and uid not in self.started:
            self.started.add(uid)
            self.kernel.after(self.rng.randint(500, 2_500) * MS, lambda: self._domain_running(vmi))
        elif (
            vmi["metadata"].get("deletionTimestamp")
            and status.get("phase") == "Running"
            and uid not in self.shutting
        ):
            self.shutting.add(uid)
            self.kernel.after(
                self.rng.randint(800, 4_000) * MS, lambda: self._guest_ended(vmi, "Succeeded")
            )

    def _domain_running(self, vmi: Obj) -> None:
        if not self._set_phase(vmi, "Running"):
            return
        fate = self.fates(
            vmi["metadata"]["name"], self.incarnations.get(vmi["metadata"]["name"], 1) - 1
        )
        if fate is not None and fate.how in ("crash", "shutdown"):
            final = "Failed" if fate.how == "crash" else "Succeeded"
            self.kernel.after(fate.after, lambda: self._guest_ended(vmi, final))

    def _guest_ended(self, vmi: Obj, final: str) -> None:
        if self._final(vmi, final):
            pods = [
                p
                for p in self.api.items(POD)
                if (p["metadata"].get("labels") or {}).get("kubevirt.io/created-by")
                == vmi["metadata"]["uid"]
            ]
            for pod in pods:
                self.kernel.after(
                    self.rng.randint(300, 1_500) * MS, partial(self._terminated, pod, final)
                )

    def _final(self, vmi: Obj, final: str) -> bool:
        return self._set_phase(vmi, final)

    def _set_phase(self, vmi: Obj, phase: str) -> bool:
        """virt-handler's status Update: the phase and, once per phase, its timestamp on this
        node's clock."""
        meta = vmi["metadata"]
        live = self.api.peek(VMI, meta["namespace"], meta["name"])
        if live is None or live["metadata"]["uid"] != meta["uid"]:
            return False
        if live.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            return False  # virt-handler never updates a final VMI (vm.go:1100-1103)
        node = live.get("status", {}).get("nodeName", "")
        if node in self.hung:
            return False
        stamp = timefmt.seconds(self.kernel.now + self.skew_us.get(node, 0))

        def write(current: Obj) -> None:
            status = current.setdefault("status", {})
            status["phase"] = phase
            stamps = status.setdefault("phaseTransitionTimestamps", [])
            if not any(s.get("phase") == phase for s in stamps):
                stamps.append({"phase": phase, "phaseTransitionTimestamp": stamp})

        try:
            self.api.patch(VMI, meta["namespace"], meta["name"], write)
        except ApiError:
            return False
        if phase in ("Succeeded", "Failed"):
            self.started.discard(meta["uid"])
        self._phase_event(live, phase, node)
        return True

    def _phase_event(self, vmi: Obj, phase: str, node: str) -> None:
        """recordPhaseChangeEvent (pkg/virt-handler/vm.go:1185-1194 at v1.9.0)."""
        events = {
            "Running": ("Normal", "VirtualMachineInstance started."),
            "Succeeded": ("Normal", "The VirtualMachineInstance was shut down."),
            "Failed": ("Warning", "The VirtualMachineInstance crashed."),
        }
        if phase in events:
            kind, message = events[phase]
            reason = "Started" if phase == "Running" else "Stopped"
            Recorder(self.api, "virt-handler", node).event(vmi, kind, reason, message)
