"""The migration controller of v1.9.0 (pkg/virt-controller/watch/migration/migration.go), which
the leader runs with 3 workers (application.go:1087) on its own priority queue.

One reconcile (``execute``, migration.go:369-450): the first one only writes the api-version
annotations and the ``kubevirt.io/vmi-name`` label (389-396); a migration whose VMI is gone is
deleted (403-407); otherwise the target pods (labels ``kubevirt.io/created-by``,
``kubevirt.io/migrationJobUID``, ``kubevirt.io=virt-launcher``, 1970-1986) are listed, ``sync``
acts (:mod:`kvsim.migration_sync`) when the pod expectations are met, and ``updateStatus``
(528-676) moves the phase at most one step from the phase the reconcile started with: failure
checks first, then one forward step (``processMigrationPhase``, 716-856). Each new phase is
appended once to ``status.phaseTransitionTimestamps`` (controller.go:406-421); the status is
written with UpdateStatus and the finalizer with a separate Update (662-673) that still carries
the resourceVersion read at the start, so the reconcile that copies the final
``migrationState`` and drops the finalizer fails with a conflict and the next one drops it.
A final migration garbage-collects the oldest finalized migrations of its VMI beyond five and
re-enqueues the highest-priority Pending ones (437-474).

Lines at default verbosity: the requeue ``reenqueuing Migration <key>`` (migration.go:317,
info, the error as reason) and the failure lines of ``updateStatus`` (Error, the migration as
object): 574, 595, 605, 612, 621, 630, 747. Events on the migration (component
``virtualmachine-controller``): ``FailedMigration`` (573, 594, 604, 611, 620, 629, 746, 576 for
a cancel) and ``SuccessfulMigration`` ``Source node reported migration succeeded`` (852).
"""

from __future__ import annotations

import random
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, Obj, clone
from kvsim.informer import Informers
from kvsim.kernel import Process
from kvsim.migration_sync import MigrationSync, current_pod, pod_is_ready, target_pods
from kvsim.runtime import Runtime
from kvsim.vm_controller import API_VERSION_ANNOTATIONS, Step, logged
from kvsim.vmim import (
    FINALIZER,
    NOT_CREATED,
    NOT_HANDED_OFF,
    POD,
    TARGET_READY_ANNOTATION,
    VMI,
    VMI_NAME_LABEL,
    VMIM,
    is_final,
    key_of,
    migration_state,
    owns_state,
    phase_of,
    priority,
)
from kvsim.workqueue import PriorityWorkQueue

THREADS = 3  # application.go:1087
KEEP_FINALIZED = 5  # defaultFinalizedMigrationGarbageCollectionBuffer, migration.go:91
PARALLEL_PER_CLUSTER = 5  # virt-config.go:45


def go_time_string(iso: str) -> str:
    """Go's ``time.Time.String()`` of a second-precision UTC time: ``2026-07-27 15:21:30 +0000
    UTC``."""
    moment = timefmt.to_datetime(timefmt.from_iso(iso))
    return f"{moment:%Y-%m-%d %H:%M:%S} +0000 UTC"


class MigrationController:
    def __init__(self, rt: Runtime, cache: Informers, seed: str) -> None:
        self.rt, self.cache = rt, cache
        self.queue = PriorityWorkQueue(rt.kernel)
        self.sync = MigrationSync(rt, cache, self.queue, random.Random(f"migration/{seed}"))
        cache.on(VMIM, self._vmim_event)
        rt.informers.on(VMI, self._vmi_event)
        rt.informers.on(POD, self._pod_event)

    def run(self) -> Process:
        rt = self.rt
        yield rt.informers.synced
        yield self.cache.synced
        for _ in range(THREADS):
            rt.kernel.spawn(rt.host, self._worker())

    def _worker(self) -> Process:
        while True:
            key = yield from self.queue.get()
            err = yield from self._execute_safely(key)
            self._settle(key, err)
            self.queue.done(key)

    def _settle(self, key: str, err: str | None) -> None:
        """migration.go:304-324: a failure is logged and re-added rate-limited with the
        migration's priority."""
        if err is None:
            self.queue.forget(key)
            return
        rt = self.rt
        rt.log.kv(
            rt.kernel.now, "info", f"reenqueuing Migration {key}", "migration.go:317", None, err
        )
        self.queue.add_priority(key, self.queue.taken.get(key, 0), self.queue.when(key))

    # --- event handlers --------------------------------------------------------------------
    def _vmim_event(self, old: Obj | None, new: Obj | None) -> None:
        vmim = new or old
        assert vmim is not None
        self.enqueue(vmim)

    def enqueue(self, vmim: Obj, at: int | None = None) -> None:
        self.queue.add_priority(key_of(vmim), priority(vmim) if at is None else at)

    def _for_vmi(self, vmi: Obj) -> list[Obj]:
        meta = vmi["metadata"]
        return self.cache.list(
            VMIM,
            lambda m: (
                m["metadata"].get("namespace") == meta["namespace"]
                and m["spec"].get("vmiName") == meta["name"]
            ),
        )

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        """addVMI / updateVMI / deleteVMI (migration.go:2347-2425): every migration of that
        VMI name."""
        vmi = new or old
        assert vmi is not None
        if old is not None and new is not None and old == new:
            return
        for vmim in self._for_vmi(vmi):
            self.enqueue(vmim)

    def _pod_event(self, old: Obj | None, new: Obj | None) -> None:
        """addPod / updatePod / deletePod (2052-2160): the migration named by the pod's job
        label and annotation, at the Running priority; a creation or deletion observed."""
        pod = new or old
        assert pod is not None
        vmim = self.sync.migration_of(pod)
        if vmim is None:
            return
        key = key_of(vmim)
        if old is None:
            self.sync.expectations.creation_observed(key)
        elif new is None or new["metadata"].get("deletionTimestamp"):
            self.sync.expectations.deletion_observed(key, key_of(pod))
        self.queue.add_priority(key, 1000)

    # --- one reconcile ---------------------------------------------------------------------
    def _execute_safely(self, key: str) -> Step:
        try:
            return (yield from self._execute(key))
        except ApiError as exc:
            return str(exc)

    def _execute(self, key: str) -> Step:
        rt = self.rt
        namespace, name = key.split("/", 1)
        vmim = self.cache.get(VMIM, namespace, name)
        if vmim is None:
            self.sync.expectations.delete(key)
            self.sync.handed_off.discard(key)
            return None
        annotations = vmim["metadata"].setdefault("annotations", {})
        if annotations.get(API_VERSION_ANNOTATIONS[0]) != "v1":
            for annotation in API_VERSION_ANNOTATIONS:
                annotations[annotation] = "v1"
            vmim["metadata"].setdefault("labels", {})[VMI_NAME_LABEL] = vmim["spec"]["vmiName"]
            yield from rt.api.call(rt.host, VMIM, "update", lambda: rt.api.update(vmim))
            return None
        vmi = rt.informers.get(VMI, namespace, vmim["spec"]["vmiName"])
        if vmi is None:
            if not vmim["metadata"].get("deletionTimestamp"):
                yield from rt.api.call(
                    rt.host, VMIM, "delete", lambda: rt.api.delete(VMIM, namespace, name)
                )
            return None
        return (yield from self._reconcile(key, vmim, vmi))

    def _reconcile(self, key: str, vmim: Obj, vmi: Obj) -> Step:
        pods = target_pods(self.rt.informers.list(POD), vmim, vmi)
        sync_err = None
        if self.sync.expectations.satisfied(key, self.rt.kernel.now):
            try:
                sync_err = yield from self.sync.sync(key, vmim, vmi, pods)
            except ApiError as exc:
                sync_err = str(exc)
        err = yield from self._update_status(vmim, vmi, pods)
        if err is not None:
            return err
        if sync_err is not None:
            return sync_err
        if is_final(vmim):
            yield from self._collect_garbage(vmi)
            self._reenqueue_pending()
        return None

    # --- updateStatus ------------------------------------------------------------------------
    def _update_status(self, vmim: Obj, vmi: Obj, pods: list[Obj]) -> Step:
        updated = clone(vmim)
        pod = pods[0] if pods else None
        if is_final(vmim):
            if owns_state(vmi, vmim):
                updated["status"]["migrationState"] = clone(migration_state(vmi))
            finalizers = updated["metadata"].get("finalizers") or []
            kept = [f for f in finalizers if f != FINALIZER]
            if kept:
                updated["metadata"]["finalizers"] = kept
            else:  # omitempty: no finalizers, no field
                updated["metadata"].pop("finalizers", None)
        elif not self._failure(vmim, updated, vmi, pod):
            yield from self._next_phase(vmim, updated, vmi, pod)
        self._stamp(vmim, updated)
        self._set_source_pod(updated, vmi)
        return (yield from self._write(vmim, updated))

    def _failure(self, vmim: Obj, updated: Obj, vmi: Obj, pod: Obj | None) -> bool:
        """The failure checks of updateStatus (migration.go:561-646) in their order; True when
        one of them decided the reconcile."""
        meta, phase, state = vmim["metadata"], phase_of(vmim), migration_state(vmi)
        vmi_phase = vmi.get("status", {}).get("phase")
        if vmi_phase in ("Succeeded", "Failed"):
            return self._fail(
                vmim,
                updated,
                "Migration failed vmi shutdown during migration.",
                "Unable to migrate vmi because vmi is shutdown.",
                "migration.go:574",
            )
        if meta.get("deletionTimestamp") and not self.sync.handed_off_to(vmim, vmi):
            self._event(
                vmim, "Warning", "FailedMigration", "Migration failed due to being canceled"
            )
            self._abort_condition(updated)
            updated["status"]["phase"] = "Failed"
            return True
        if pod is not None and pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            pod_name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
            return self._fail(
                vmim,
                updated,
                "Migration failed because target pod shutdown during migration",
                f"target pod {pod_name} shutdown during migration",
                "migration.go:595",
            )
        if phase not in NOT_CREATED and pod is None:
            return self._fail(
                vmim,
                updated,
                "Migration target pod was removed during active migration.",
                "target pod disappeared during migration",
                "migration.go:605",
            )
        if phase not in NOT_HANDED_OFF and state is None:
            return self._fail(
                vmim,
                updated,
                "VMI's migration state was cleared during the active migration.",
                "vmi migration state cleared during migration",
                "migration.go:612",
            )
        if phase not in NOT_HANDED_OFF and state is not None and not owns_state(vmi, vmim):
            return self._fail(
                vmim,
                updated,
                "VMI's migration state was taken over by another migration job during active "
                "migration.",
                "vmi's migration state was taken over by another migration object",
                "migration.go:621",
            )
        if owns_state(vmi, vmim) and (state or {}).get("failed"):
            vmi_name = f"{vmi['metadata']['namespace']}/{vmi['metadata']['name']}"
            return self._fail(
                vmim,
                updated,
                "source node reported migration failed",
                f"VMI {vmi_name} reported migration failed",
                "migration.go:630",
            )
        if meta.get("deletionTimestamp") and not self._has_abort_condition(vmim):
            self._abort_condition(updated)
            return True
        return False

    def _fail(self, vmim: Obj, updated: Obj, event: str, line: str, pos: str) -> bool:
        self._event(vmim, "Warning", "FailedMigration", event)
        self.rt.log.kv(self.rt.kernel.now, "error", line, pos, logged(vmim))
        updated["status"]["phase"] = "Failed"
        return True

    def _event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.rt.recorder.event(obj, type_, reason, message)

    @staticmethod
    def _has_abort_condition(vmim: Obj) -> bool:
        conditions = vmim.get("status", {}).get("conditions") or []
        return any(c.get("type") == "migrationAbortRequested" for c in conditions)

    def _abort_condition(self, updated: Obj) -> None:
        if self._has_abort_condition(updated):
            return
        condition = {
            "lastProbeTime": timefmt.seconds(self.rt.kernel.now),
            "lastTransitionTime": None,
            "status": "True",
            "type": "migrationAbortRequested",
        }
        updated["status"].setdefault("conditions", []).append(condition)

    def _next_phase(self, vmim: Obj, updated: Obj, vmi: Obj, pod: Obj | None) -> Step:
        """processMigrationPhase (migration.go:716-856), local migrations."""
        phase, state = phase_of(vmim), migration_state(vmi) or {}
        status = updated["status"]
        if phase == "":
            if self.sync.can_migrate(vmim, vmi):
                status["phase"] = "Pending"
            else:
                self._fail(
                    vmim,
                    updated,
                    "VMI is not eligible for migration because another migration job is in "
                    "progress.",
                    "Migration object ont eligible for migration because another job is in "
                    "progress",
                    "migration.go:747",
                )
        elif phase == "Pending" and pod is not None:
            status["phase"] = "Scheduling"
        elif phase == "Scheduling" and pod is not None and pod_is_ready(pod):
            status["phase"] = "Scheduled"
        elif phase == "Scheduled" and owns_state(vmi, vmim) and state.get("targetNode"):
            status["phase"] = "PreparingTarget"
        elif (
            phase == "PreparingTarget"
            and state.get("targetNode")
            and state.get("targetNodeAddress")
        ):
            status["phase"] = "TargetReady"
        elif phase == "TargetReady" and state.get("startTimestamp"):
            status["phase"] = "Running"
        elif phase == "Running":
            yield from self._running(vmim, updated, state, pod)
        return None

    def _running(self, vmim: Obj, updated: Obj, state: dict[str, Any], pod: Obj | None) -> Step:
        """migration.go:823-853: the target pod learns when the domain ran there; the
        completion the target virt-handler reports ends the migration."""
        rt = self.rt
        ready = state.get("targetNodeDomainReadyTimestamp")
        annotations = (pod or {}).get("metadata", {}).get("annotations") or {}
        if pod is not None and ready and TARGET_READY_ANNOTATION not in annotations:
            meta = pod["metadata"]

            def annotate(current: Obj) -> None:
                current["metadata"].setdefault("annotations", {})[TARGET_READY_ANNOTATION] = (
                    go_time_string(ready)
                )

            yield from rt.api.call(
                rt.host,
                POD,
                "patch",
                lambda: rt.api.patch(POD, meta["namespace"], meta["name"], annotate),
            )
        if state.get("completed"):
            updated["status"]["phase"] = "Succeeded"
            self._event(
                vmim, "Normal", "SuccessfulMigration", "Source node reported migration succeeded"
            )
        return None

    def _stamp(self, vmim: Obj, updated: Obj) -> None:
        before, after = phase_of(vmim), phase_of(updated)
        if before == after:
            return
        stamps = updated["status"].setdefault("phaseTransitionTimestamps", [])
        if any(s.get("phase") == after for s in stamps):
            return
        stamp = {"phase": after, "phaseTransitionTimestamp": timefmt.seconds(self.rt.kernel.now)}
        stamps.append(stamp)

    def _set_source_pod(self, updated: Obj, vmi: Obj) -> None:
        """SetSourcePod (controller.go:423-438): while Pending, the VMI's current pod."""
        if phase_of(updated) != "Pending":
            return
        source = current_pod(self.rt.informers.list(POD), vmi)
        if source is not None:
            state = updated["status"].setdefault("migrationState", {})
            state["sourcePod"] = source["metadata"]["name"]

    def _write(self, vmim: Obj, updated: Obj) -> Step:
        """UpdateStatus, then Update for the finalizers, both with the resourceVersion read at
        the start (migration.go:662-673)."""
        rt = self.rt
        if vmim.get("status") != updated.get("status"):
            yield from rt.api.call(
                rt.host, VMIM, "update", lambda: rt.api.update(updated, "status")
            )
        if vmim["metadata"].get("finalizers") != updated["metadata"].get("finalizers"):
            yield from rt.api.call(rt.host, VMIM, "update", lambda: rt.api.update(updated))
        return None

    # --- after a final reconcile ---------------------------------------------------------------
    def _collect_garbage(self, vmi: Obj) -> Process:
        """garbageCollectFinalizedMigrations (migration.go:2251-2314): beyond the newest five
        finalized migrations, the oldest are deleted with their defunct pod."""
        namespace = vmi["metadata"]["namespace"]
        finalized = [
            m
            for m in self._for_vmi(vmi)
            if is_final(m) and not m["metadata"].get("deletionTimestamp")
        ]
        finalized.sort(key=lambda m: timefmt.from_iso(m["metadata"]["creationTimestamp"]))
        for old in finalized[: max(0, len(finalized) - KEEP_FINALIZED)]:
            state = old["status"].get("migrationState") or {}
            pod_name = (
                state.get("targetPod")
                if state.get("failed")
                else (state.get("sourcePod") if state.get("completed") else None)
            )
            if pod_name:
                yield from self._delete_quietly(POD, namespace, str(pod_name))
            yield from self._delete_quietly(VMIM, namespace, old["metadata"]["name"])

    def _delete_quietly(self, kind: str, namespace: str, name: str) -> Process:
        rt = self.rt
        try:
            yield from rt.api.call(
                rt.host, kind, "delete", lambda: rt.api.delete(kind, namespace, name)
            )
        except ApiError as exc:
            if exc.status != 404:
                raise
            what = "pod" if kind == POD else "migration"
            pos = "migration.go:2295" if kind == POD else "migration.go:2307"
            rt.log.kv(
                rt.kernel.now,
                "info",
                f"error encountered when garbage collecting {what} object {namespace}/{name}",
                pos,
                None,
                str(exc),
            )

    def _reenqueue_pending(self) -> None:
        """reEnqueueHighestPriorityPendingMigrations (migration.go:452-474)."""
        pending = [m for m in self.cache.list(VMIM) if phase_of(m) == "Pending"]
        pending.sort(key=priority, reverse=True)
        for vmim in pending[:PARALLEL_PER_CLUSTER]:
            self.enqueue(vmim)
