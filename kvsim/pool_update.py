"""The update half of the VirtualMachinePool controller of v1.9.0 (``update``,
pool.go:1385-1436, and ``pruneUnusedRevisions``, 1338-1383): the opportunistic update of VMs
whose revision is outdated, the proactive update of VMIs created from another revision, and the
pruning of revisions nothing names any more. :class:`kvsim.pools.PoolController` runs it after a
stable scale."""

from __future__ import annotations

import json
from typing import Any

from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.informer import Informers
from kvsim.kernel import SECOND
from kvsim.pool_vms import REVISION_LABEL, keep_identity, new_vm, ready
from kvsim.runtime import Runtime
from kvsim.vm_controller import CR, VM, VMI, Step, key_of, logged
from kvsim.workqueue import WorkQueue

RETRY_US = 3 * SECOND  # defaultRetryDelay, pool.go:70


class PoolUpdates:
    rt: Runtime
    cache: Informers
    queue: WorkQueue
    recorder: Recorder

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        raise NotImplementedError

    def _say(self, level: str, msg: str, pos: str, obj: Obj | None = None) -> None:
        raise NotImplementedError

    def _ensure_revision(self, pool: Obj) -> Step:
        raise NotImplementedError

    # --- update (pool.go:1385-1436) ----------------------------------------------------------
    def _update(self, pool: Obj, vms: list[Obj]) -> Step:
        outdated = [vm for vm in vms if self._outdated_vm(pool, vm)]
        current = [vm for vm in vms if vm not in outdated]
        err = yield from self._opportunistic(pool, outdated)
        if err is not None:
            return ("FailedUpdate", f"error during VM update: {err}"), False
        err = yield from self._proactive(pool, current)
        if err is not None:
            return ("FailedUpdate", f"error during VMI update: {err}"), False
        return None, not outdated

    def _revision_spec(self, namespace: str, name: str) -> Obj | None:
        cr = self.cache.get(CR, namespace, name)
        return None if cr is None else dict(cr["data"])

    def _outdated_vm(self, pool: Obj, vm: Obj) -> bool:
        """isOutdatedVM (pool.go:1306-1334)."""
        namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        revision = (vm["metadata"].get("labels") or {}).get(REVISION_LABEL)
        if revision is None:
            msg = f"Marking vm {namespace}/{name} for update due to missing revision labels "
            self._say("info", msg, "pool.go:1315", pool)
            return True
        spec = self._revision_spec(namespace, revision)
        if spec is None:
            self._say(
                "info",
                f"Marking vm {namespace}/{name} for update due to missing revision",
                "pool.go:1323",
                pool,
            )
            return True
        if spec["virtualMachineTemplate"] != pool["spec"]["virtualMachineTemplate"]:
            self._say(
                "info",
                f"Marking vm {namespace}/{name} for update due out of date spec",
                "pool.go:1328",
                pool,
            )
            return True
        return False

    def _opportunistic(self, pool: Obj, outdated: list[Obj]) -> Step:
        """opportunisticUpdate (pool.go:1060-1116): the VM's labels, annotations and spec
        replaced by the pool's, with the new revision."""
        if not outdated:
            return None
        revision = yield from self._ensure_revision(pool)
        first = None
        for vm in outdated:
            namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
            fresh = new_vm(pool, name, revision)
            changed = clone(vm)
            changed["metadata"]["labels"] = fresh["metadata"].get("labels", {})
            changed["metadata"]["annotations"] = fresh["metadata"].get("annotations", {})
            changed["spec"] = keep_identity(vm["spec"], fresh["spec"])
            try:
                yield from self._call(
                    VM, "update", lambda changed=changed: self.rt.api.update(changed)
                )
            except ApiError as exc:
                msg = (
                    f"Error updating virtual machine {name}/{namespace}: {exc}"  # sic, pool.go:1096
                )
                self.recorder.event(pool, "Warning", "FailedUpdate", msg)
                msg = f"Error encountered during update of vm {namespace}/{name} in pool"
                self.rt.log.kv(
                    self.rt.kernel.now, "error", msg, "pool.go:1097", logged(pool), str(exc)
                )
                first = first or str(exc)
                continue
            self._say("info", f"Updated vm {namespace}/{name} in pool", "pool.go:1102", pool)
            self.recorder.event(
                pool, "Normal", "SuccessfulUpdate", f"Updated VM {namespace}/{name}"
            )
        return first

    def _proactive(self, pool: Obj, vms: list[Obj]) -> Step:
        """proactiveUpdate (pool.go:1145-1200), after handleUnhealthyVMIs (1034-1058)."""
        err = yield from self._unhealthy(pool, vms)
        if err is not None:
            return err
        budget = _max_unavailable(pool) - sum(1 for vm in vms if not self._vmi_ready(vm))
        for vm in vms:
            if budget <= 0:
                self.queue.add_after(key_of(pool), 3 * SECOND)  # defaultRetryDelay, pool.go:70
                return None
            vmi = self.cache.get(VMI, vm["metadata"]["namespace"], vm["metadata"]["name"])
            if vmi is None:
                continue
            kind = self._outdated_vmi(vm, vmi)
            if kind == "no-update":
                continue
            err = yield from self._resource_update(pool, vm, vmi, kind)
            if err is not None:
                return err
            budget -= 1
        return None

    def _unhealthy(self, pool: Obj, vms: list[Obj]) -> Step:
        for vm in vms:
            if ready(vm):
                continue
            vmi = self.cache.get(VMI, vm["metadata"]["namespace"], vm["metadata"]["name"])
            if vmi is None or vmi["metadata"].get("deletionTimestamp"):
                continue
            err = yield from self._resource_update(pool, vm, vmi, self._outdated_vmi(vm, vmi))
            if err is not None:
                return err
        return None

    def _vmi_ready(self, vm: Obj) -> bool:
        """isVMIReady (pool.go:1009-1014) of the VM's VMI."""
        vmi = self.cache.get(VMI, vm["metadata"]["namespace"], vm["metadata"]["name"])
        if vmi is None or vmi["metadata"].get("deletionTimestamp"):
            return False
        return vmi.get("status", {}).get("phase") == "Running" and ready(vmi)

    def _outdated_vmi(self, vm: Obj, vmi: Obj) -> str:
        """isOutdatedVMI (pool.go:1227-1303)."""
        namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        wanted = (vm["metadata"].get("labels") or {}).get(REVISION_LABEL)
        if wanted is None:
            return "no-update"
        has = (vmi["metadata"].get("labels") or {}).get(REVISION_LABEL)
        if has is None:
            self._say(
                "info",
                f"Marking vmi {namespace}/{name} for update due to missing revision label",
                "pool.go:1252",
            )
            return "restart"
        if has == wanted:
            return "no-update"
        expected = self._revision_spec(namespace, wanted)
        if expected is None:
            return "no-update"
        current = self._revision_spec(namespace, has)
        if current is None:
            self._say(
                "info",
                f"Marking vmi {namespace}/{name} for update due to missing revision",
                "pool.go:1281",
            )
            return "restart"
        if _vmi_template(current) != _vmi_template(expected):
            self._say(
                "info",
                f"Marking vmi {namespace}/{name} for update due out of sync spec",
                "pool.go:1297",
            )
            return "restart"
        return "label-patch"

    def _resource_update(self, pool: Obj, vm: Obj, vmi: Obj, kind: str) -> Step:
        """handleResourceUpdate (pool.go:1630-1680): a restart deletes the VMI; the line is
        printed whatever the delete returned."""
        namespace, name = vm["metadata"]["namespace"], vm["metadata"]["name"]
        err = None
        if kind == "restart":
            try:
                yield from self._call(
                    VMI, "delete", lambda: self.rt.api.delete(VMI, namespace, name)
                )
            except ApiError as exc:
                err = str(exc)
            msg = f"Proactive update of VM {namespace}/{name} by deleting outdated VMI"
            self._say("info", msg, "pool.go:1636", pool)
        elif kind == "label-patch":
            revision = vm["metadata"]["labels"][REVISION_LABEL]

            def relabel(current: Obj) -> None:
                current["metadata"].setdefault("labels", {})[REVISION_LABEL] = revision

            try:
                yield from self._call(
                    VMI, "patch", lambda: self.rt.api.patch(VMI, namespace, name, relabel)
                )
            except ApiError as exc:
                return f"patching of vmi labels with new pool revision name: {exc}"
            self._say(
                "info",
                f"Proactive update of VM {namespace}/{name} in pool via label patch",
                "pool.go:1670",
                pool,
            )
        else:
            return None
        if err is not None:
            msg = f"Error updating resource {namespace}/{name}: {err}"
            self.recorder.event(pool, "Warning", "FailedUpdate", msg)
            return err
        msg = f"Successfully updated resource {namespace}/{name}"
        self.recorder.event(pool, "Normal", "SuccessfulDelete", msg)
        return None

    # --- pruneUnusedRevisions (pool.go:1338-1383), updateStatus (1463-1523) ------------------
    def _prune(self, pool: Obj, vms: list[Obj]) -> Step:
        namespace, uid = pool["metadata"]["namespace"], pool["metadata"]["uid"]
        used = set()
        for vm in vms:
            used.add((vm["metadata"].get("labels") or {}).get(REVISION_LABEL))
            vmi = self.cache.get(VMI, namespace, vm["metadata"]["name"])
            used.add(((vmi or {}).get("metadata", {}).get("labels") or {}).get(REVISION_LABEL))
        owned = self.cache.list(
            CR,
            lambda cr: any(
                r.get("uid") == uid for r in cr["metadata"].get("ownerReferences") or []
            ),
        )
        for cr in owned:
            name = cr["metadata"]["name"]
            if name in used:
                continue
            try:
                yield from self._call(
                    CR, "delete", lambda name=name: self.rt.api.delete(CR, namespace, name)
                )
            except ApiError as exc:
                return ("FailedRevisionPruning", f"error while pruning vmpool revisions: {exc}")
        return None


def _vmi_template(pool_spec: Obj) -> str:
    return json.dumps(pool_spec["virtualMachineTemplate"]["spec"]["template"], sort_keys=True)


def _max_unavailable(pool: Obj) -> int:
    """calculateMaxUnavailableInt (pool.go:1118-1143): default ``100%`` of the replicas, at
    least 1."""
    value = pool["spec"].get("maxUnavailable", "100%")
    replicas = int(pool["spec"].get("replicas", 1))
    count = replicas * int(value[:-1]) // 100 if isinstance(value, str) else int(value)
    return max(count, 1)
