"""The VirtualMachinePool controller of v1.9.0 (pkg/virt-controller/watch/pool/pool.go), which the
leader runs with 3 workers (application.go:1081) on the queue ``virt-controller-pool``; every
enqueue is delayed 1 s (``defaultAddDelay``, pool.go:69, 377-388).

A reconcile (``execute``, pool.go:1525-1628) reads the pool, adds the finalizer
``pool.kubevirt.io/finalizer`` (types.go:32 of pool/v1beta1), then, with its expectations met:

* ``scale`` (pool.go:993-1007): too few VMs → ``scaleOut`` (915-980): the ControllerRevision
  ``<pool>-<generation>`` holding the pool spec (851-889), then ``Adding %d VMs to pool`` (926)
  and one VM ``<pool>-<lowest unused index>`` (725-752) per missing replica, each with the
  template's labels and annotations, the revision label ``kubevirt.io/vm-pool-revision-name`` on
  the VM and on its VMI template (832-849), the pool finalizer and a controller reference to
  the pool; Event ``SuccessfulCreate`` ``Created VM %s/%s`` (965), then ``Adding vm %s/%s to
  pool`` (966). Too many → ``scaleIn`` (626-701): ``Removing %d VMs from pool`` (661), the VM
  deleted, its pool finalizer removed (``Removing VM %s/%s from pool``, obj VM, 1819), Event
  ``SuccessfulDelete`` ``Deleted VM %s/%s with uid %v from pool`` (686) and ``Deleted vm %s/%s
  from pool`` (687). The default scale-in policy is random (502-507).
* ``update`` (1385-1436), only when the scale is stable: a VM whose revision's template differs
  from the pool's (``Marking vm %s/%s for update due out of date spec``, 1328) gets the new spec
  and labels (``Updated vm %s/%s in pool``, 1102; Event ``SuccessfulUpdate`` ``Updated VM
  %s/%s``, 1103); then the proactive update (1145-1200; :mod:`kvsim.pool_update`): a VMI created
  from a revision whose VMI template differs from its VM's (``Marking vmi %s/%s for update due
  out of sync spec``, no object, 1297) is deleted (``Proactive update of VM %s/%s by deleting
  outdated VMI``, 1636; Event ``SuccessfulDelete`` ``Successfully updated resource %s/%s``,
  1678), at most ``maxUnavailable`` (default 100 %) unready at a time. The VM controller then
  starts a VMI from the new template.
* the revisions no VM or VMI names any more are deleted (1338-1383).

``reenqueuing pool %v`` (1454) follows a failed reconcile. The creations run one after another
here, where v1.9.0 runs them in goroutines; ``RaiseExpectations`` only raises an existing record
(expectations.go:189-195), so a pool that never scaled in is never waited for.
Not modelled: auto-healing, opportunistic scale-in, state preservation, the VM deletion a change
of DataVolumeTemplates alone makes (1289, 1639; the templates are renamed per VM, CDI is not
simulated), selection policies other than random, pausing and the pool's deletion.
"""

from __future__ import annotations

from typing import Any

from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import SECOND, Process
from kvsim.pool_update import PoolUpdates
from kvsim.pool_vms import (
    FINALIZER,
    POOL,
    REVISION_LABEL,
    new_vm,
    pool_owner,
    ready,
    revision_name,
)
from kvsim.runtime import Runtime
from kvsim.vm_controller import CR, VM, VMI, Step, controller_ref, key_of, logged
from kvsim.workqueue import WorkQueue, settle, start_workers

THREADS = 3  # application.go:1081
COMPONENT = "virtualmachinepool-controller"  # application.go:800
ADD_DELAY_US = 1 * SECOND  # pool.go:69
BURST = 250  # controller.go:47-51


def raise_creations(expectations: Expectations, key: str, count: int) -> None:
    """RaiseExpectations (expectations.go:189-195): only an existing record is raised."""
    record = expectations.records.get(key)
    if record is not None:
        record.add += count


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


class PoolController(PoolUpdates):
    def __init__(self, rt: Runtime, cache: Informers) -> None:
        self.rt, self.cache = rt, cache
        self.queue = WorkQueue(rt.kernel)
        self.expectations = Expectations()
        self.recorder = Recorder(rt.api, COMPONENT)
        cache.on(POOL, self._pool_event)
        cache.on(VM, self._vm_event)
        cache.on(VMI, self._vmi_event)
        cache.on(CR, self._revision_event)

    def run(self) -> Process:
        yield from start_workers(self.rt, self.cache, self.queue, self._execute_key, THREADS)

    # --- event handlers (pool.go:176-388) ----------------------------------------------------
    def _enqueue(self, pool: Obj) -> None:
        self.queue.add_after(key_of(pool), ADD_DELAY_US)

    def _pool_event(self, old: Obj | None, new: Obj | None) -> None:
        pool = new or old
        assert pool is not None
        self._enqueue(pool)

    def _owner_pool(self, obj: Obj) -> Obj | None:
        ref = controller_ref(obj)
        if ref is None or ref.get("kind") != POOL:
            return None
        pool = self.cache.get(POOL, obj["metadata"]["namespace"], ref["name"])
        if pool is None or pool["metadata"]["uid"] != ref.get("uid"):
            return None
        return pool

    def _vm_event(self, old: Obj | None, new: Obj | None) -> None:
        """addVMHandler / updateVMHandler / deleteVMHandler (pool.go:263-363)."""
        vm = new or old
        assert vm is not None
        pool = self._owner_pool(vm)
        if pool is None:
            return
        if new is None or new["metadata"].get("deletionTimestamp"):
            self.expectations.deletion_observed(key_of(pool), key_of(vm))
        elif old is None:
            self.expectations.creation_observed(key_of(pool))
        elif old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            return
        self._enqueue(pool)

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        """addVMIHandler (pool.go:176-217): a live VMI whose revision is not its VM's."""
        if new is None or new["metadata"].get("deletionTimestamp"):
            return
        ref = controller_ref(new)
        if ref is None or ref.get("kind") != VM:
            return
        vm = self.cache.get(VM, new["metadata"]["namespace"], ref["name"])
        pool = self._owner_pool(vm) if vm is not None else None
        if vm is None or pool is None:
            return
        wanted = (vm["spec"]["template"].get("metadata") or {}).get("labels", {})
        has = (new["metadata"].get("labels") or {}).get(REVISION_LABEL)
        if has is None or wanted.get(REVISION_LABEL) != has:
            self._enqueue(pool)

    def _revision_event(self, old: Obj | None, new: Obj | None) -> None:
        """addRevisionHandler / updateRevisionHandler (pool.go:219-261)."""
        if new is None:
            return
        pool = self._owner_pool(new)
        if pool is None:
            return
        if old is None:
            self.expectations.creation_observed(key_of(pool))
        self._enqueue(pool)

    # --- Execute (pool.go:1439-1460) --------------------------------------------------------
    def _execute_key(self, key: str) -> Process:
        try:
            err = yield from self._execute(key)
        except ApiError as exc:
            err = str(exc)
        yield self.rt.rng.randint(15, 250)
        if err is not None:
            self.rt.log.kv(
                self.rt.kernel.now, "info", f"reenqueuing pool {key}", "pool.go:1454", reason=err
            )
        settle(self.queue, key, err)

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        result = yield from self.rt.api.call(self.rt.host, kind, verb, operation)
        return result

    def _say(self, level: str, msg: str, pos: str, obj: Obj | None = None) -> None:
        self.rt.log.kv(self.rt.kernel.now, level, msg, pos, logged(obj) if obj else None)

    def _execute(self, key: str) -> Step:
        namespace, name = key.split("/", 1)
        pool = self.cache.get(POOL, namespace, name)
        if pool is None:
            self.expectations.delete(key)
            return None
        selector = pool["spec"].get("selector") or {}
        template = pool["spec"]["virtualMachineTemplate"]
        if not matches(selector, (template.get("metadata") or {}).get("labels") or {}):
            msg = "Selector does not match template labels, will not re-enqueue."
            self._say("error", msg, "pool.go:1550", pool)
            return None
        vms = self.cache.list(VM, lambda vm: _owned(vm, pool))
        if not pool["metadata"].get("deletionTimestamp"):
            yield from self._add_finalizer(pool)
        sync_err = None
        now = self.rt.kernel.now
        if self.expectations.satisfied(key, now) and not pool["spec"].get("paused"):
            sync_err = yield from self._sync(pool, vms, key)
        yield from self._update_status(pool, vms, sync_err)
        return None if sync_err is None else sync_err[1]

    def _sync(self, pool: Obj, vms: list[Obj], key: str) -> Step:
        """pool.go:1594-1615: scale, then update, then prune, each only when the last is
        stable; a failed scale prints ``Scaling the pool failed.`` with no reason (1599)."""
        sync_err, stable = yield from self._scale(pool, vms)
        if sync_err is not None:
            self._say("error", "Scaling the pool failed.", "pool.go:1599", pool)
            return sync_err
        now = self.rt.kernel.now
        if not (stable and self.expectations.satisfied(key, now)):
            return None
        sync_err, updated = yield from self._update(pool, vms)
        if sync_err is None and updated and self.expectations.satisfied(key, self.rt.kernel.now):
            sync_err = yield from self._prune(pool, vms)
        return sync_err

    def _add_finalizer(self, pool: Obj) -> Step:
        """addPoolFinalizer (pool.go:1717-1737): a JSON patch testing the old list."""
        if FINALIZER in (pool["metadata"].get("finalizers") or []):
            return None
        meta = pool["metadata"]

        def add(current: Obj) -> None:
            current["metadata"]["finalizers"] = [
                *current["metadata"].get("finalizers", []),
                FINALIZER,
            ]

        yield from self._call(
            POOL, "patch", lambda: self.rt.api.patch(POOL, meta["namespace"], meta["name"], add)
        )
        return None

    # --- scale (pool.go:993-1007) ------------------------------------------------------------
    def _scale(self, pool: Obj, vms: list[Obj]) -> Step:
        diff = len(vms) - int(pool["spec"].get("replicas", 1))
        if diff == 0:
            return None, True
        count = min(abs(diff), BURST)
        if diff < 0:
            err = yield from self._scale_out(pool, count)
            return (
                None if err is None else ("FailedScaleOut", f"error during scale out: {err}")
            ), False
        err = yield from self._scale_in(pool, vms, count)
        return (None if err is None else ("FailedScaleIn", f"error during scale in: {err}")), False

    def _new_names(self, pool: Obj, count: int) -> list[str]:
        """calculateNewVMNames (pool.go:730-752): the lowest unused indexes in the VM cache."""
        names: list[str] = []
        index, namespace = 0, pool["metadata"]["namespace"]
        while len(names) < count:
            name = f"{pool['metadata']['name']}-{index}"
            if self.cache.get(VM, namespace, name) is None:
                names.append(name)
            index += 1
        return names

    def _scale_out(self, pool: Obj, count: int) -> Step:
        names = self._new_names(pool, count)
        try:
            revision = yield from self._ensure_revision(pool)
        except ApiError as exc:
            return str(exc)
        self._say("info", f"Adding {len(names)} VMs to pool", "pool.go:926", pool)
        key, first = key_of(pool), None
        raise_creations(self.expectations, key, len(names))
        for name in names:
            vm = new_vm(pool, name, revision)
            try:
                yield from self._call(VM, "create", lambda vm=vm: self.rt.api.create(vm))
            except ApiError as exc:
                self.expectations.creation_observed(key)
                msg = f"Failed to add vm {pool['metadata']['namespace']}/{name} to pool"
                self.rt.log.kv(
                    self.rt.kernel.now, "error", msg, "pool.go:961", logged(pool), str(exc)
                )
                first = first or str(exc)
                continue
            vm_key = f"{pool['metadata']['namespace']}/{name}"
            self.recorder.event(pool, "Normal", "SuccessfulCreate", f"Created VM {vm_key}")
            self._say("info", f"Adding vm {vm_key} to pool", "pool.go:966", pool)
        if first is not None:
            self.recorder.event(pool, "Warning", "FailedCreate", f"Error creating VM: {first}")
        return first

    def _ensure_revision(self, pool: Obj) -> Step:
        """ensureControllerRevision (pool.go:855-889)."""
        name, namespace = revision_name(pool), pool["metadata"]["namespace"]
        if self.cache.get(CR, namespace, name) is not None:
            return name
        revision = {
            "apiVersion": "apps/v1",
            "kind": CR,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "ownerReferences": [pool_owner(pool)],
            },
            "data": clone(pool["spec"]),
            "revision": int(pool["metadata"].get("generation", 1)),
        }
        raise_creations(self.expectations, key_of(pool), 1)
        try:
            yield from self._call(CR, "create", lambda: self.rt.api.create(revision))
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                self.expectations.creation_observed(key_of(pool))
                raise
        return name

    def _scale_in(self, pool: Obj, vms: list[Obj], count: int) -> Step:
        """proactiveScaleIn / scaleIn (pool.go:615-701), random order."""
        eligible = [vm for vm in vms if not vm["metadata"].get("deletionTimestamp")]
        count = min(count - (len(vms) - len(eligible)), len(eligible))
        if count <= 0:
            return None
        self.rt.rng.shuffle(eligible)
        self._say("info", f"Removing {count} VMs from pool", "pool.go:661", pool)
        chosen = eligible[:count]
        self.expectations.expect_deletions(
            key_of(pool), [key_of(vm) for vm in chosen], self.rt.kernel.now
        )
        first = None
        for vm in chosen:
            first = (yield from self._delete_vm(pool, vm)) or first
        return first

    def _delete_vm(self, pool: Obj, vm: Obj) -> Step:
        namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        try:
            yield from self._call(VM, "delete", lambda: self.rt.api.delete(VM, namespace, name))
        except ApiError as exc:
            self.expectations.deletion_observed(key_of(pool), key_of(vm))
            msg = f"Error deleting virtual machine {namespace}/{name}: {exc}"
            self.recorder.event(pool, "Warning", "FailedDelete", msg)
            return str(exc)
        yield from self._remove_vm_finalizer(vm)
        uid = vm["metadata"]["uid"]
        msg = f"Deleted VM {namespace}/{name} with uid {uid} from pool"
        self.recorder.event(pool, "Normal", "SuccessfulDelete", msg)
        self._say("info", f"Deleted vm {namespace}/{name} from pool", "pool.go:687", pool)
        return None

    def _remove_vm_finalizer(self, vm: Obj) -> Step:
        """statePreservationCleanupforVM without state preservation (pool.go:1800-1820)."""
        namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]

        def remove(current: Obj) -> None:
            kept = [f for f in current["metadata"].get("finalizers") or [] if f != FINALIZER]
            current["metadata"]["finalizers"] = kept

        yield from self._call(VM, "patch", lambda: self.rt.api.patch(VM, namespace, name, remove))
        self._say("info", f"Removing VM {namespace}/{name} from pool", "pool.go:1819", vm)

    def _update_status(self, pool: Obj, vms: list[Obj], sync_err: tuple[str, str] | None) -> Step:
        status = clone(pool.get("status") or {})
        labels = (pool["spec"].get("selector") or {}).get("matchLabels") or {}
        status["labelSelector"] = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        conditions = [
            c
            for c in status.get("conditions") or []
            if c.get("type") != "ReplicaFailure" or sync_err
        ]
        if sync_err is not None and not any(c.get("type") == "ReplicaFailure" for c in conditions):
            conditions.append(_failure(sync_err, self.rt.kernel.now))
            self.recorder.event(pool, "Warning", sync_err[0], sync_err[1])
        status["conditions"] = conditions
        if not conditions:
            status.pop("conditions")
        status["replicas"] = len(vms)
        status["readyReplicas"] = sum(1 for vm in vms if ready(vm))
        if status == pool.get("status") and status["replicas"] == status["readyReplicas"]:
            return None
        changed = clone(pool)
        changed["status"] = status
        yield from self._call(POOL, "update", lambda: self.rt.api.update(changed, "status"))
        return None


def _owned(vm: Obj, pool: Obj) -> bool:
    ref = controller_ref(vm)
    return ref is not None and ref.get("uid") == pool["metadata"]["uid"]


def _failure(sync_err: tuple[str, str], now: int) -> dict[str, Any]:
    from kvsim import timefmt

    return {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": sync_err[0],
        "message": sync_err[1],
        "lastTransitionTime": timefmt.seconds(now),
    }
