"""One virt-controller pod: its start-up lines, client-go leader election on the Lease
``kubevirt/virt-controller``, and, while it leads, the informers and controllers.

Leader election (vendored client-go leaderelection.go, defaults from
leaderelectionconfig/config.go:30-44 at v1.9.0): lease duration 15 s, renew deadline 10 s,
retry period 2 s. A standby retries every 2–4.4 s (jitter 1.2) and takes the lock once the
record it observes has not changed for the lease duration, counted on its own clock from when it
first saw that record (leaderelection.go:461-470). The leader renews every 2 s; when no renewal
succeeds within the renew deadline it logs ``failed to renew lease``, stops leading
(``leaderelection lost``, application.go:1171) and exits 1; the kubelet restarts the container.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import partial

from kvsim import timefmt
from kvsim.apiserver import ApiError, ApiServer, Obj
from kvsim.disruption_budget import DisruptionBudgetController
from kvsim.evacuation import EvacuationController
from kvsim.events import Recorder
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Host, Kernel, Process, kill
from kvsim.locks import EndpointsLeasesLock, EndpointsLock, Lock, Record, forbidden
from kvsim.logs import ContainerLog
from kvsim.migration_controller import MigrationController
from kvsim.node_controller import NodeController
from kvsim.pools import PoolController
from kvsim.releases import SIMULATED, check_simulable, has
from kvsim.replicaset import ReplicaSetController
from kvsim.runtime import LAUNCHER_IMAGE, CodeFaults, Runtime
from kvsim.snapshots import WORKLOAD_KINDS, RestoreController, SnapshotController
from kvsim.vm_controller import VMController
from kvsim.vmi_controller import VMIController
from kvsim.vmim import VMIM
from kvsim.workload_updater import WorkloadUpdateController

NAMESPACE = "kubevirt"
LEASE = "virt-controller"
LEASE_DURATION_S = 15
RENEW_DEADLINE_US = 10 * SECOND
RETRY_PERIOD_US = 2 * SECOND
JITTER = 1.2
DESC = f"{NAMESPACE}/{LEASE}"
CONTROLLER_IMAGE = "quay.io/kubevirt/virt-controller:v1.9.0"

INFORMERS = (
    "vmiInformer",
    "vmInformer",
    "kubeVirtPodInformer",
    "kubeVirtNodeInformer",
    "vmimInformer",
    "vmirsInformer",
    "vmpool",
    "persistentVolumeClaimInformer",
    "controllerRevisionInformer",
    "dataVolumeInformer",
    "namespaceInformer",
    "vmExportInformer",
    "vmSnapshotInformer",
    "vmSnapshotContentInformer",
    "vmRestoreInformer",
    "migrationPolicyInformer",
    "virtualMachineCloneInformer",
    "vmInstancetypeInformer",
    "vmClusterInstancetypeInformer",
    "vmPreferenceInformer",
    "vmClusterPreferenceInformer",
)
CONTROLLER_STARTS = (  # application.go:638-672: each controller's Run in its own goroutine
    ("Starting evacuation controller.", "evacuation.go:259"),
    ("Starting disruption budget controller.", "disruptionbudget.go:316"),
    ("Starting node controller.", "node.go:127"),
    ("Starting vmi controller.", "vmi.go:246"),
    ("Starting VirtualMachineInstanceReplicaSet controller.", "replicaset.go:119"),
    ("Starting pool controller.", "pool.go:419"),
    ("Starting VirtualMachine controller.", "vm.go:311"),
    ("Starting migration controller.", "migration.go:286"),
    ("Starting snapshot controller.", "snapshot_base.go:235"),
    ("Starting restore controller.", "restore_base.go:121"),
    ("Starting export controller.", "export.go:528"),
    ("Starting workload update controller.", "workload-updater.go:259"),
    ("Starting clone controller", "clone_base.go:374"),
    ("Starting backup controller.", "backup.go:342"),
)
THREADS_LINE = (
    "STARTING controllers with following threads : node 3, vmi 10, replicaset 3, vm 3, "
    "migration 3, evacuation 3, disruptionBudget 3"
)


@dataclass
class Replica:
    kernel: Kernel
    api: ApiServer
    pod: str
    node: str
    seed: str
    faults: CodeFaults = field(default_factory=CodeFaults)
    run_without_lease: bool = False  # a fault: the controllers start without leadership
    informer_lag_us: int = 0  # extra watch delivery lag (an overloaded API server or replica)
    verbosity: int = 2  # logVerbosity.virtController
    lock_kind: str = "Lease"  # "Endpoints" before KubeVirt v1.0, "EndpointsLeases" v1.0–v1.2
    lock_forbidden: bool = False  # its ClusterRole lost the lock's verbs
    release: str = SIMULATED  # whose positions its logs print (kvsim.releases)
    pools: bool = False  # the pool and VMIRS controllers act (kvsim.pools, kvsim.replicaset)
    snapshots: bool = False  # the snapshot and restore controllers act (kvsim.snapshots)
    workload_updates: bool = False  # launcher images reported, the workload updater acts
    launcher_image: str = LAUNCHER_IMAGE  # its --launcher-image (an upgrade changes it)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"replica/{self.seed}/{self.pod}")
        self.host = Host(self.pod)
        self.logs: list[ContainerLog] = []
        self.restarts = 0
        self.leading = False
        self.vm_controller: VMController | None = None
        self.runtime: Runtime | None = None
        self.log = self._new_log()

    def _new_log(self) -> ContainerLog:
        log = ContainerLog(
            NAMESPACE,
            self.pod,
            "virt-controller",
            f"{self.seed}/{self.pod}/{len(self.logs)}",
            release=self.release,
        )
        self.logs.append(log)
        return log

    @property
    def current(self) -> ContainerLog:
        return self.logs[-1]

    @property
    def previous(self) -> ContainerLog | None:
        return self.logs[-2] if len(self.logs) > 1 else None

    # --- the container ---------------------------------------------------------------------
    def start(self) -> None:
        self.kernel.spawn(self.host, self._main())

    def _main(self) -> Process:
        self._mark_started()
        yield from self._startup_lines()
        if self.run_without_lease:
            self.kernel.spawn(self.host, self._lead(quiet=True))
        yield from self._elect()

    def _startup_lines(self) -> Process:
        log, now = self.log, self.kernel.now
        log.kv(now, "info", "CDI detected, DataVolume integration enabled", "application.go:428")
        yield 29_793
        if has("application.go:449", self.release):
            log.kv(self.kernel.now, "info", "we are on kubernetes", "application.go:449")
        yield 1_172_604
        if self.release == SIMULATED:  # not catalogued: its position elsewhere is unknown
            log.fields(
                self.kernel.now,
                "application.go:584",
                action="listening",
                interface="0.0.0.0",
                port=8443,
                pos="application.go:584",
                service="http",
            )
        yield 195_702
        log.klog(
            self.kernel.now,
            "I",
            "leaderelection.go:257",
            f"attempting to acquire leader lease {DESC}...",
        )

    def _mark_started(self) -> None:
        pod = self.api.peek("Pod", NAMESPACE, self.pod)
        if pod is None:
            return
        started = timefmt.seconds(self.kernel.now)

        def restart(current: Obj) -> None:
            container = current["status"]["containerStatuses"][0]
            previous = container.get("state", {}).get("running")
            if previous is not None and self.restarts:
                container["lastState"] = {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": previous["startedAt"],
                        "finishedAt": started,
                    }
                }
            container["restartCount"] = self.restarts
            container["state"] = {"running": {"startedAt": started}}

        self.api.patch("Pod", NAMESPACE, self.pod, restart)

    # --- leader election -------------------------------------------------------------------
    def _elect(self) -> Process:
        lock = self.lock()
        observed: Record | None = None
        observed_at = self.kernel.now
        while True:
            try:
                record = yield from self._read(lock)
            except ApiError as exc:
                self._lock_error(exc)
                yield int(RETRY_PERIOD_US * (1 + self.rng.random() * JITTER))
                continue
            if record != observed:
                observed, observed_at = record, self.kernel.now
            holder = record.holder if record else None
            expired = observed_at + LEASE_DURATION_S * SECOND < self.kernel.now
            if not holder or holder == self.pod or expired:
                try:
                    now = self.kernel.now
                    yield from self.api.call(
                        self.host, lock.kind, "update", partial(lock.write, self.pod, now, record)
                    )
                except ApiError as exc:
                    self._lock_error(exc)
                else:
                    yield from self._became_leader()
                    return
            yield int(RETRY_PERIOD_US * (1 + self.rng.random() * JITTER))

    def lock(self) -> Lock:
        kinds = {"Endpoints": EndpointsLock, "EndpointsLeases": EndpointsLeasesLock}
        return kinds.get(self.lock_kind, Lock)(self.api)

    def _read(self, lock: Lock) -> Process:
        if self.lock_forbidden:
            yield from self.api.call(self.host, lock.kind, "get", lambda: None)
            raise forbidden(lock.kind)
        record = yield from self.api.call(self.host, lock.kind, "get", lock.read)
        return record

    def _lock_error(self, exc: ApiError) -> None:
        self.log.klog(
            self.kernel.now,
            "E",
            "leaderelection.go:448",
            f"error retrieving resource lock {DESC}: {exc}",
        )

    def _became_leader(self) -> Process:
        self.leading = True
        self.log.klog(
            self.kernel.now, "I", "leaderelection.go:271", f"successfully acquired lease {DESC}"
        )
        self._lock_event(f"{self.pod} became leader")
        self.kernel.spawn(self.host, self._lead())
        yield from self._renew()

    def _lock_event(self, message: str) -> None:
        """resourcelock's RecordEvent on the lock object (leaselock.go:99-109)."""
        for lock in self.lock().objects():
            Recorder(self.api, "virt-controller").event(lock, "Normal", "LeaderElection", message)

    def _renew(self) -> Process:
        """``renew``: every retry period a round starts with its own renew-deadline timeout and
        tries at once, then every retry period, until it succeeds or the timeout ends it. After a
        stall the next round only starts when the container runs again, so a deposed leader
        goes on acting for up to the renew deadline before it gives up."""
        while True:
            yield RETRY_PERIOD_US
            deadline = self.kernel.now + RENEW_DEADLINE_US
            while not (yield from self._try_renew()):
                if self.kernel.now + RETRY_PERIOD_US >= deadline:
                    yield max(0, deadline - self.kernel.now)
                    self._lost("context deadline exceeded")
                    return
                yield RETRY_PERIOD_US

    def _try_renew(self) -> Process:
        lock = self.lock()
        try:
            yield from self.api.call(
                self.host, lock.kind, "update", partial(self._renew_once, lock)
            )
        except ApiError as exc:
            if exc.status >= 500:
                self._lock_error(exc)
            return False
        return True

    def _renew_once(self, lock: Lock) -> None:
        record = lock.read()
        if record is None or record.holder != self.pod:
            raise ApiError(409, "Conflict", "the lock is held by another")
        lock.write(self.pod, self.kernel.now, record)

    def _lost(self, reason: str) -> None:
        self.log.klog(
            self.kernel.now, "I", "leaderelection.go:297", f"failed to renew lease {DESC}: {reason}"
        )
        self._lock_event(f"{self.pod} stopped leading")
        self.log.stdlib(self.kernel.now + 310, "leaderelection lost", "application.go:1171")
        self.exit()

    # --- a crash or an exit, then the kubelet's restart -------------------------------------
    def exit(self, restart_after: int | None = None) -> None:
        kill(self.host)
        self.api.unwatch(self.host)
        self.leading = False
        self.vm_controller = None
        self.restarts += 1
        delay = (
            restart_after
            if restart_after is not None
            else 10 * SECOND * 2 ** min(self.restarts - 1, 5)
        )
        self.kernel.after(delay, self._restart)

    def stop(self) -> None:
        """The pod is deleted: its container ends and is not restarted."""
        kill(self.host)
        self.api.unwatch(self.host)
        self.leading = False
        self.vm_controller = None
        self.host.alive = False

    def _restart(self) -> None:
        self.log = self._new_log()
        self.start()

    def freeze(self, duration: int) -> None:
        """SIGSTOP-like: nothing of this container runs for ``duration`` (a stalled node)."""
        self.host.frozen_until = self.kernel.now + duration

    # --- leading: informers and controllers (application.go:604-676) -----------------------
    def _lead(self, quiet: bool = False) -> Process:
        """Start informers and controllers. ``quiet``: the fault of running them without the
        lease, which prints none of the lines that follow an acquisition."""
        check_simulable(self.release, self.verbosity)
        informers = Informers(self.api, self.host, f"{self.seed}/{self.pod}/{len(self.logs)}")
        informers.extra_lag_us = self.informer_lag_us
        rt = Runtime(
            self.kernel,
            self.api,
            self.host,
            informers,
            Recorder(self.api, "virtualmachine-controller"),
            self.log,
            self.rng,
            self.faults,
            self.verbosity,
            self.release,
            self.launcher_image,
            self.workload_updates,
        )
        self.runtime = rt
        vm_controller, vmi_controller = VMController(rt), VMIController(rt)
        self.vm_controller = vm_controller
        budget = DisruptionBudgetController(rt, f"{self.seed}/{self.pod}/{len(self.logs)}")
        others = self._migration_controllers(rt) + self._workload_controllers(rt)
        if quiet:
            self.kernel.spawn(self.host, informers.start())
            self.kernel.spawn(self.host, vmi_controller.run())
            self.kernel.spawn(self.host, vm_controller.run())
            self.kernel.spawn(self.host, budget.run())
            for process in others:
                self.kernel.spawn(self.host, process)
            return
        yield 612
        for name in self.rng.sample(INFORMERS, len(INFORMERS)):  # Go map iteration order
            yield self.rng.randint(18, 95)
            self.log.kv(
                self.kernel.now, "info", f"STARTING informer {name}", "virtinformers.go:397"
            )
        yield self.rng.randint(300, 900)
        self.log.stdlib(self.kernel.now, THREADS_LINE, "application.go:614")
        yield self.rng.randint(40, 120)
        pointers = " ".join(f"0xc000{self.rng.randint(0x100000, 0xFFFFFF):06x}" for _ in range(6))
        self.log.stdlib(
            self.kernel.now,
            f"\nvca.migrationInformer :&{{{pointers} 43200000000000 43200000000000 <nil> "
            f"{{{{0 0}} 0 0 0 0}} 0xc000{self.rng.randint(0x100000, 0xFFFFFF):06x} false}}",
            "application.go:632",
        )
        self.kernel.spawn(self.host, informers.start())
        for msg, pos in self.rng.sample(CONTROLLER_STARTS, len(CONTROLLER_STARTS)):
            yield self.rng.randint(25, 260)
            if has(pos, self.release):  # a controller the release does not have never starts
                self.log.kv(self.kernel.now, "info", msg, pos)
        self.kernel.spawn(self.host, vmi_controller.run())
        self.kernel.spawn(self.host, vm_controller.run())
        self.kernel.spawn(self.host, budget.run())
        for process in others:
            self.kernel.spawn(self.host, process)

    def _migration_controllers(self, rt: Runtime) -> list[Process]:
        """The migration, evacuation and node controllers, on their own informers of
        migrations and nodes (application.go:640, 645, 638): the processes to start."""
        seed = f"{self.seed}/{self.pod}/{len(self.logs)}"
        kinds = (VMIM, "Node", *(("KubeVirt",) if rt.workload_updates else ()))
        cache = Informers(self.api, self.host, f"{seed}/migrations", kinds=kinds)
        cache.extra_lag_us = rt.informers.extra_lag_us
        migrations = MigrationController(rt, cache, seed)
        evacuation, nodes = EvacuationController(rt, cache), NodeController(rt, cache)
        processes = [cache.start(), migrations.run(), evacuation.run(), nodes.run()]
        if rt.workload_updates:
            processes.append(WorkloadUpdateController(rt, cache).run())
        return processes

    def upgrade_launcher(self, image: str) -> None:
        """A new ``--launcher-image`` (virt-operator rolled virt-controller out with it)."""
        self.launcher_image = image
        if self.runtime is not None:
            self.runtime.launcher_image = image

    def _workload_controllers(self, rt: Runtime) -> list[Process]:
        """The pool and VMIRS controllers (application.go:642-643) and the snapshot and restore
        controllers (646-655), on informers of their own, when the cluster has them on: the
        histories made before kvsim modelled them stay as they were."""
        if not (self.pools or self.snapshots):
            return []
        seed = f"{self.seed}/{self.pod}/{len(self.logs)}"
        kinds = (*WORKLOAD_KINDS, "VirtualMachine", "VirtualMachineInstance", "ControllerRevision")
        cache = Informers(self.api, self.host, f"{seed}/workloads", kinds=kinds)
        cache.extra_lag_us = rt.informers.extra_lag_us
        processes = [cache.start()]
        if self.pools:
            processes += [PoolController(rt, cache).run(), ReplicaSetController(rt, cache).run()]
        if self.snapshots:
            processes += [SnapshotController(rt, cache).run(), RestoreController(rt, cache).run()]
        return processes


def controller_pod(name: str, node: str, rs_hash: str, ip: str) -> Obj:
    """The virt-controller pod as the API shows it (virt-operator's install strategy)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"virt-controller-{rs_hash}-",
            "labels": {
                "app.kubernetes.io/component": "kubevirt",
                "app.kubernetes.io/managed-by": "virt-operator",
                "app.kubernetes.io/version": "v1.9.0",
                "kubevirt.io": "virt-controller",
                "pod-template-hash": rs_hash,
                "prometheus.kubevirt.io": "true",
            },
            "name": name,
            "namespace": NAMESPACE,
        },
        "spec": {
            "containers": [
                {
                    "args": [
                        "--launcher-image",
                        "quay.io/kubevirt/virt-launcher:v1.9.0",
                        "--port",
                        "8443",
                        "-v",
                        "2",
                    ],
                    "command": ["virt-controller"],
                    "image": CONTROLLER_IMAGE,
                    "name": "virt-controller",
                    "readinessProbe": {
                        "httpGet": {"path": "/leader", "port": 8443, "scheme": "HTTPS"}
                    },
                }
            ],
            "nodeName": node,
            "restartPolicy": "Always",
            "serviceAccountName": "kubevirt-controller",
        },
        "status": {
            "conditions": [{"lastProbeTime": None, "status": "True", "type": "Ready"}],
            "containerStatuses": [
                {
                    "image": CONTROLLER_IMAGE,
                    "name": "virt-controller",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": ""}},
                }
            ],
            "phase": "Running",
            "podIP": ip,
        },
    }
