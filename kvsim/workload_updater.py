"""The workload-update controller of v1.9.0
(pkg/virt-controller/watch/workload-updater/workload-updater.go), which the leader runs with one
worker; its queue holds the KubeVirt CR's key.

It moves running VMIs off an outdated virt-launcher: a VMI is outdated when its
``status.launcherContainerImageVersion`` (which the VMI controller copies from the pod's compute
container, lifecycle.go:287-295, 846-858) is set and differs from this controller's
``--launcher-image`` (``isOutdated``, 301-317). ``execute`` (431-458) waits for its migration
creation expectations and for the KubeVirt CR to be ``Deployed``; ``getUpdateData`` (366-429)
skips VMIs that are not Running, final or being deleted, or already migrating or with an
unfinished migration; with the ``LiveMigrate`` method among
``spec.workloadUpdateStrategy.workloadUpdateMethods`` a LiveMigratable VMI is migrated. ``sync``
(460-560) patches ``status.outdatedVirtualMachineInstanceWorkloads`` on the CR and creates at
most ``parallelMigrationsPerCluster`` (5) minus the running migrations: ``generateName:
kubevirt-workload-update-``, annotation ``kubevirt.io/workloadUpdateMigration: ""``, priority
``system-critical`` (563-588); on success Info ``Initiated migration of vmi as part of workload
update`` logged with the VMI (596) and the VMI Event ``SuccessfulCreate`` ``Created Migration
<name> for automated workload update`` (597). While work remains it re-enqueues itself
(``AddAfter(key, 30)``, 499: a Duration of 30 ns, so at once; kvsim waits one second, which
changes no decision: the expectations hold it until its migrations are seen).

With the ``Evict`` method, an outdated VMI that is not migrated is evicted instead, in batches
of ``batchEvictionSize`` (10) at most every ``batchEvictionInterval`` (60 s, 505-526): an
Eviction of its pod through the pod-eviction webhook, then Info ``Evicted vmi pod as part of
workload update`` (628) and the VMI Event ``SuccessfulEvict`` ``Initiated eviction of VMI as
part of automated workload update: <nil>`` (629: the nil error printed with ``%v``). A VMI
whose eviction strategy lets the eviction through loses its pod, and its VM starts a new one.

Not modelled: the abortion of workload migrations of hot-plug changes.
"""

from __future__ import annotations

from kvsim.apiserver import ApiError, Obj
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Process
from kvsim.runtime import Runtime
from kvsim.virtapi import evict
from kvsim.vm_controller import Step, logged
from kvsim.vmi_controller import launcher_pods
from kvsim.vmim import (
    POD,
    VMI,
    VMIM,
    is_final,
    is_migratable,
    is_migrating,
    is_running,
    new_migration,
)
from kvsim.workqueue import WorkQueue, settle, start_workers

KUBEVIRT = "KubeVirt"
COMPONENT = "workload-update-controller"
WORKLOAD_UPDATE_ANNOTATION = "kubevirt.io/workloadUpdateMigration"  # types.go:1181
MAX_PARALLEL_MIGRATIONS = 5  # parallelMigrationsPerCluster default (virtconfig)
BATCH_EVICTION_SIZE = 10  # defaultBatchDeletionCount (workload-updater.go:61)
BATCH_EVICTION_INTERVAL_US = 60 * SECOND  # defaultBatchDeletionIntervalSeconds (60)
REQUEUE_US = SECOND
THROTTLE_US = 5 * SECOND  # defaultThrottleInterval (workload-updater.go:58)


class WorkloadUpdateController:
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.expectations = Expectations()  # migrationExpectations, keyed by the CR's key
        self.recorder = Recorder(rt.api, COMPONENT)
        self.last_batch: int | None = None  # lastDeletionBatch
        cache.on(VMIM, self._vmim_event)
        cache.on(KUBEVIRT, self._kubevirt_event)
        rt.informers.on(VMI, self._vmi_event)

    def run(self) -> Process:
        self.queue.add_after(self._key(), THROTTLE_US)  # addKubeVirt (229-252)
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, 1)

    def _key(self) -> str:
        found = list(self.rt.api.items(KUBEVIRT))
        meta = found[0]["metadata"] if found else {"namespace": "kubevirt", "name": "kubevirt"}
        return f"{meta['namespace']}/{meta['name']}"

    def _execute_key(self, key: str) -> Process:
        try:
            err = yield from self._execute(key)
        except ApiError as exc:
            err = str(exc)
        if err is not None:  # Execute (283-297)
            message = f"reenqueuing workload updates for KubeVirt {key}"
            self.rt.log.kv(
                self.rt.kernel.now, "info", message, "workload-updater.go:292", reason=err
            )
        settle(self.queue, key, err)

    # --- event handlers (166-226) --------------------------------------------------------------
    def _vmim_event(self, old: Obj | None, new: Obj | None) -> None:
        vmim = new or old
        assert vmim is not None
        ours = WORKLOAD_UPDATE_ANNOTATION in (vmim["metadata"].get("annotations") or {})
        if old is None and ours:
            self.expectations.creation_observed(self._key())
        self.queue.add_after(self._key(), THROTTLE_US)

    def _kubevirt_event(self, old: Obj | None, new: Obj | None) -> None:
        """addKubeVirt / updateKubeVirt / deleteKubeVirt (229-252)."""
        self.queue.add_after(self._key(), THROTTLE_US)

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        """updateVmi (206-226): an outdated VMI enqueues the CR."""
        if new is not None and old is not None and self._outdated(new):
            self.queue.add_after(self._key(), THROTTLE_US)

    # --- one reconcile -------------------------------------------------------------------------
    def _execute(self, key: str) -> Step:
        namespace, name = key.split("/", 1)
        kubevirt = self.cache.get(KUBEVIRT, namespace, name)
        if kubevirt is None:
            self.expectations.delete(key)
            return None
        if not self.expectations.satisfied(key, self.rt.kernel.now):
            return None
        status = kubevirt.get("status", {})
        if status.get("phase") != "Deployed":
            return None
        if status.get("observedDeploymentID") != status.get("targetDeploymentID"):
            return None
        return (yield from self._sync(key, kubevirt))

    def _outdated(self, vmi: Obj) -> bool:
        status = vmi.get("status", {})
        image = status.get("launcherContainerImageVersion")
        final = status.get("phase") in ("Succeeded", "Failed")
        return bool(image) and image != self.rt.launcher_image and not final

    def _update_data(self, kubevirt: Obj) -> tuple[list[Obj], list[Obj], list[Obj], int]:
        """getUpdateData: every outdated VMI, those to migrate, those to evict, and the
        running migrations."""
        unfinished = self.cache.list(VMIM, lambda m: not is_final(m))
        busy = {f"{m['metadata']['namespace']}/{m['spec']['vmiName']}" for m in unfinished}
        strategy = kubevirt.get("spec", {}).get("workloadUpdateStrategy") or {}
        methods = strategy.get("workloadUpdateMethods") or []
        migrate, evict = "LiveMigrate" in methods, "Evict" in methods
        outdated, migratable, to_evict = [], [], []
        for vmi in self.rt.informers.list(VMI):
            meta = vmi["metadata"]
            running = vmi.get("status", {}).get("phase") == "Running"
            if not running or meta.get("deletionTimestamp") or not self._outdated(vmi):
                continue
            outdated.append(vmi)
            if is_migrating(vmi) or f"{meta['namespace']}/{meta['name']}" in busy:
                continue
            if migrate and is_migratable(vmi):
                migratable.append(vmi)
            elif evict:
                to_evict.append(vmi)
        return outdated, migratable, to_evict, sum(1 for m in unfinished if is_running(m))

    def _sync(self, key: str, kubevirt: Obj) -> Step:
        rt = self.rt
        outdated, migratable, to_evict, running = self._update_data(kubevirt)
        yield from self._report_outdated(kubevirt, len(outdated))
        if migratable or to_evict:
            self.queue.add_after(key, REQUEUE_US)
        rt.rng.shuffle(migratable)
        chosen = migratable[: max(0, MAX_PARALLEL_MIGRATIONS - running)]
        evicted = to_evict[: self._batch(len(to_evict))]
        self.expectations.expect_creations(key, len(chosen), rt.kernel.now)
        err: str | None = None
        for vmi in chosen:
            err = (yield from self._migrate(key, vmi)) or err
        for vmi in evicted:
            err = (yield from self._evict(vmi)) or err
        return err

    def _batch(self, waiting: int) -> int:
        """How many to evict now: a batch once the interval since the last one has passed."""
        now = self.rt.kernel.now
        due = self.last_batch is None or now > self.last_batch + BATCH_EVICTION_INTERVAL_US
        if not due or not waiting:
            return 0
        self.last_batch = now
        return min(BATCH_EVICTION_SIZE, waiting)

    def _evict(self, vmi: Obj) -> Step:
        """workload-updater.go:600-632: an Eviction of the VMI's pod (the webhook decides)."""
        rt, meta = self.rt, vmi["metadata"]
        pods = [
            p
            for p in launcher_pods(rt, vmi)
            if p["spec"].get("nodeName") == vmi.get("status", {}).get("nodeName")
            and not p["metadata"].get("deletionTimestamp")
        ]
        if not pods:
            return None
        name = pods[0]["metadata"]["name"]
        outcome = yield from rt.api.call(
            rt.host, POD, "create", lambda: evict(rt.api, meta["namespace"], name)
        )
        if not outcome.accepted and "not found" not in outcome.detail:
            rt.log.kv(
                rt.kernel.now,
                "error",
                "Failed to evict vmi as part of workload update",
                "workload-updater.go:624",
                logged(vmi),
                reason=outcome.detail,
            )
            message = f"Error deleting VMI during automated workload update: {outcome.detail}"
            self.recorder.event(vmi, "Warning", "FailedEvict", message)
            return outcome.detail
        rt.log.kv(
            rt.kernel.now,
            "info",
            "Evicted vmi pod as part of workload update",
            "workload-updater.go:628",
            logged(vmi),
        )
        message = "Initiated eviction of VMI as part of automated workload update: <nil>"
        self.recorder.event(vmi, "Normal", "SuccessfulEvict", message)
        return None

    def _report_outdated(self, kubevirt: Obj, count: int) -> Process:
        """The CR's ``status.outdatedVirtualMachineInstanceWorkloads`` (470-494)."""
        if kubevirt.get("status", {}).get("outdatedVirtualMachineInstanceWorkloads") == count:
            return
        meta, rt = kubevirt["metadata"], self.rt

        def change(current: Obj) -> None:
            current.setdefault("status", {})["outdatedVirtualMachineInstanceWorkloads"] = count

        yield from rt.api.call(
            rt.host,
            KUBEVIRT,
            "patch",
            lambda: rt.api.patch(KUBEVIRT, meta["namespace"], meta["name"], change),
        )

    def _migrate(self, key: str, vmi: Obj) -> Step:
        rt, meta = self.rt, vmi["metadata"]
        migration = new_migration(
            meta["namespace"],
            meta["name"],
            "kubevirt-workload-update-",
            {WORKLOAD_UPDATE_ANNOTATION: ""},
        )
        migration["spec"]["priority"] = "system-critical"
        try:
            created = yield from rt.api.call(
                rt.host, VMIM, "create", lambda: rt.api.create(migration)
            )
        except ApiError as exc:
            rt.log.kv(
                rt.kernel.now,
                "error",
                "Failed to migrate vmi as part of workload update",
                "workload-updater.go:590",
                logged(vmi),
                reason=str(exc),
            )
            self.expectations.creation_observed(key)
            message = f"Error creating a Migration for automated workload update: {exc}"
            self.recorder.event(vmi, "Warning", "FailedCreate", message)
            return str(exc)
        rt.log.kv(
            rt.kernel.now,
            "info",
            "Initiated migration of vmi as part of workload update",
            "workload-updater.go:596",
            logged(vmi),
        )
        message = f"Created Migration {created['metadata']['name']} for automated workload update"
        self.recorder.event(vmi, "Normal", "SuccessfulCreate", message)
        return None
