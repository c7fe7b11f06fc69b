"""The VirtualMachine controller of v1.9.0 (pkg/virt-controller/watch/vm/vm.go), step by step.

Each reconcile is a process: it reads the informer caches as they are when it runs, and every
API call takes a round trip during which other reconciles, informer events and the other
controllers go on. Log lines are printed where the code prints them, with the call site's
v1.9.0 position; only lines printed at the default verbosity (2) appear.

Not modelled: DataVolumes, instancetypes, hotplug, migrations, receivers (WaitAsReceiver) and
the live-update paths after ``syncRunStrategy``; VMs here have none of them.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, Obj, clone
from kvsim.expectations import Expectations
from kvsim.kernel import SECOND, Process
from kvsim.logs import LoggedObject
from kvsim.releases import at_least
from kvsim.runtime import Runtime
from kvsim.vmim import is_migrating
from kvsim.workqueue import WorkQueue, serve, settle

VM, VMI, CR = "VirtualMachine", "VirtualMachineInstance", "ControllerRevision"
VM_FINALIZER = "kubevirt.io/virtualMachineControllerFinalize"  # types.go:1243
FINALIZED_FROM = "v0.59.0"  # the first release whose VM controller finalizes the VM
GENERATION = "kubevirt.io/vm-generation"  # types.go:1405
API_VERSION_ANNOTATIONS = (
    "kubevirt.io/latest-observed-api-version",
    "kubevirt.io/storage-observed-api-version",
)
MAX_CRASHLOOP_BACKOFF_S = 300  # vm.go:132
THREADS = 3  # application.go:1084

Step = Generator[Any, Any, Any]


def key_of(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def logged(obj: Obj) -> LoggedObject:
    meta = obj["metadata"]
    return LoggedObject(meta.get("namespace", ""), meta["name"], meta["uid"])


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def run_strategy(vm: Obj) -> str:
    """types.go:1957-1970: ``running`` true → Always; false or neither → Halted."""
    spec = vm.get("spec", {})
    if "runStrategy" in spec and spec["runStrategy"] is not None:
        return str(spec["runStrategy"])
    return "Always" if spec.get("running") else "Halted"


def is_final(vmi: Obj) -> bool:
    return vmi.get("status", {}).get("phase") in ("Succeeded", "Failed")


def phase(vmi: Obj) -> str:
    return str(vmi.get("status", {}).get("phase", ""))


def requests(vm: Obj) -> list[dict[str, Any]]:
    return list(vm.get("status", {}).get("stateChangeRequests") or [])


def has_stop_request_for(vm: Obj, vmi: Obj) -> bool:
    """vm.go:1920-1929: only the first request counts."""
    first = requests(vm)[:1]
    return (
        bool(first)
        and first[0].get("action") == "Stop"
        and first[0].get("uid") == vmi["metadata"]["uid"]
    )


def has_start_request(vm: Obj) -> bool:
    first = requests(vm)[:1]
    return bool(first) and first[0].get("action") == "Start"


def ran(vmi: Obj | None) -> bool:
    """wasVMIInRunningPhase (vm.go:1507-1519)."""
    if vmi is None:
        return False
    stamps = vmi.get("status", {}).get("phaseTransitionTimestamps") or []
    return any(s.get("phase") == "Running" for s in stamps)


class VMController:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.queue = WorkQueue(rt.kernel)
        started = rt.log.lines[0].at if rt.log.lines else rt.kernel.now
        self.expectations = Expectations(self._say_v4, started)
        self.data_volume_expectations = Expectations(self._say_v4, started)  # never set here
        rt.informers.on(VM, self._vm_event)
        rt.informers.on(VMI, self._vmi_event)

    # --- start -----------------------------------------------------------------------------
    def run(self) -> Process:
        rt = self.rt
        yield rt.informers.synced
        for _ in range(THREADS):
            rt.kernel.spawn(rt.host, serve(self.queue, self._execute_key))

    # --- event handlers (vm.go:1985-2134, 2284-2304) --------------------------------------
    def _vm_event(self, old: Obj | None, new: Obj | None) -> None:
        self.queue.add(key_of(new or old or {}))

    def _resolve(self, vmi: Obj) -> Obj | None:
        ref = controller_ref(vmi)
        if ref is None or ref.get("kind") != VM:
            return None
        vm = self.rt.informers.get(VM, vmi["metadata"]["namespace"], ref["name"])
        if vm is None or vm["metadata"]["uid"] != ref.get("uid"):
            return None
        return vm

    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._vmi_deleted(old)
            return
        if (
            old is not None
            and old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]
        ):
            return
        if new["metadata"].get("deletionTimestamp"):
            self._vmi_deleted(new)
            return
        vm = self._resolve(new)
        if vm is not None:
            if old is None:
                self.expectations.creation_observed(key_of(vm))
            self.queue.add(key_of(vm))
            return
        for vm in self.rt.informers.list(VM):
            if vm["metadata"]["name"] == new["metadata"]["name"] and vm["metadata"].get(
                "namespace"
            ) == new["metadata"].get("namespace"):
                self.queue.add(key_of(vm))

    def _vmi_deleted(self, vmi: Obj) -> None:
        vm = self._resolve(vmi)
        if vm is None:
            return
        self.expectations.deletion_observed(key_of(vm), key_of(vmi))
        self.queue.add(key_of(vm))

    # --- Execute / execute (vm.go:336-458) -------------------------------------------------
    def _execute_key(self, key: str) -> Process:
        err = yield from self._execute(key)
        yield self.rt.rng.randint(15, 250)  # the reconcile's own work: no two end in one µs
        if err is not None:
            msg = f"re-enqueuing VirtualMachine {key}"
            self.rt.log.kv(self.rt.kernel.now, "info", msg, "vm.go:348", reason=err)
        elif self.rt.verbosity >= 4:
            msg = f"processed VirtualMachine {key}"
            self.rt.log.kv(self.rt.kernel.now, "info", msg, "vm.go:351")
        settle(self.queue, key, err)

    def _execute(self, key: str) -> Step:
        rt = self.rt
        namespace, name = key.split("/", 1)
        vm = rt.informers.get(VM, namespace, name)
        if vm is None:
            self.expectations.delete(key)
            return None
        original = clone(vm)
        if rt.verbosity >= 4:
            self._log_vm("info", "Started processing vm", vm, "vm.go:372")
        annotations = vm["metadata"].setdefault("annotations", {})
        if annotations.get(API_VERSION_ANNOTATIONS[0]) != "v1":
            for annotation in API_VERSION_ANNOTATIONS:
                annotations[annotation] = "v1"
            try:
                yield from self._call(VM, "update", lambda: rt.api.update(vm))
            except ApiError as exc:
                self._log_vm(
                    "error", "Updating api version annotations failed", vm, "vm.go:381", exc
                )
                return str(exc)
            return None
        vmi = self._claimed_vmi(vm)
        vm, vmi, sync_err, err = yield from self._sync(vm, vmi, key)
        if err is not None:
            return err
        if sync_err is not None:
            self._log_vm(
                "error", "Reconciling the VirtualMachine failed.", vm, "vm.go:448", sync_err
            )
        err = yield from self._update_status(vm, original, vmi, sync_err)
        if err is not None:
            self._log_vm(
                "error", "Updating the VirtualMachine status failed.", vm, "vm.go:453", err
            )
            return err
        return sync_err

    def _claimed_vmi(self, vm: Obj) -> Obj | None:
        """ClaimVirtualMachineInstanceByName: a VMI owned by another VM (an older one of the same
        name) is not ours."""
        vmi = self.rt.informers.get(VMI, vm["metadata"]["namespace"], vm["metadata"]["name"])
        if vmi is None:
            return None
        ref = controller_ref(vmi)
        if ref is not None and ref.get("uid") != vm["metadata"]["uid"]:
            return None
        return vmi

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        result = yield from self.rt.api.call(self.rt.host, kind, verb, operation)
        return result

    def _say_v4(self, msg: str, pos: str) -> None:
        if self.rt.verbosity >= 4:
            self.rt.log.kv(self.rt.kernel.now, "info", msg, pos)

    def _satisfied_expectations(self, key: str) -> bool:
        """satisfiedExpectations (vm.go:330-332): the VMI expectations, then (only when those
        are met) the DataVolume ones."""
        now = self.rt.kernel.now
        return self.expectations.satisfied(key, now) and self.data_volume_expectations.satisfied(
            key, now
        )

    def _log_vm(self, level: str, msg: str, vm: Obj, pos: str, reason: object = None) -> None:
        text = None if reason is None else str(reason)
        self.rt.log.kv(self.rt.kernel.now, level, msg, pos, logged(vm), text)

    # --- sync (vm.go:3215-3308) ------------------------------------------------------------
    def _sync(self, vm: Obj, vmi: Obj | None, key: str) -> Step:
        if not self._satisfied_expectations(key):
            return vm, vmi, None, None
        if vmi is not None:
            self._last_revision_warning(vm)
        if vm["metadata"].get("deletionTimestamp"):
            if not at_least(self.rt.release, FINALIZED_FROM):
                return vm, vmi, None, None  # ignored while deleted (vm.go:2182 at v0.58.0)
            if vmi is None:
                try:
                    vm = yield from self._remove_vm_finalizer(vm)
                except ApiError as exc:
                    return vm, vmi, None, str(exc)
                return vm, vmi, None, None
            vm, err = yield from self._stop_vmi(vm, vmi)
            if err is not None:
                text = f"Failure attempting to delete VMI: {err}"
                self._log_vm("error", text, vm, "vm.go:3245")
                return vm, vmi, text, None
            return vm, vmi, None, None
        try:
            vm = yield from self._add_vm_finalizer(vm)
            vmi = yield from self._bump_generation_annotation(vm, vmi)
        except ApiError as exc:
            return vm, vmi, None, str(exc)
        vm, sync_err = yield from self._sync_run_strategy(vm, vmi, run_strategy(vm))
        if sync_err is None:
            self._satisfied_expectations(key)  # checked again after startStop (vm.go:3305-3310)
        return vm, vmi, sync_err, None

    def _last_revision_warning(self, vm: Obj) -> None:
        """getLastVMRevisionSpec (vm.go:1804-1838) warns when it sees more than one."""
        prefix = f"revision-start-vm-{vm['metadata']['uid']}"
        names = [
            cr["metadata"]["name"]
            for cr in self.rt.informers.list(CR, lambda cr: prefix in cr["metadata"]["name"])
            if _owned_by(cr, vm)
        ]
        highest = 0
        for cr_name in names:
            generation = int(cr_name.rsplit("-", 1)[1])
            if generation > highest:
                if highest:
                    msg = "expected no more than 1 revision, found at least 2"
                    self._log_vm("warning", msg, vm, "vm.go:1826")
                highest = generation

    def _add_vm_finalizer(self, vm: Obj) -> Step:
        """From v0.59.0 (vm.go:2264 at v0.59.0); before it the VM had no finalizer, its
        deletion was immediate and the garbage collector deleted the VMI."""
        if VM_FINALIZER in (vm["metadata"].get("finalizers") or []):
            return vm
        if not at_least(self.rt.release, FINALIZED_FROM):
            return vm

        seen = list(vm["metadata"].get("finalizers") or [])

        def add(current: Obj) -> None:
            _test_finalizers(current, seen)
            current["metadata"]["finalizers"] = [*seen, VM_FINALIZER]

        meta = vm["metadata"]
        return (
            yield from self._call(
                VM, "patch", lambda: self.rt.api.patch(VM, meta["namespace"], meta["name"], add)
            )
        )

    def _remove_vm_finalizer(self, vm: Obj) -> Step:
        if VM_FINALIZER not in (vm["metadata"].get("finalizers") or []):
            return vm

        seen = list(vm["metadata"].get("finalizers") or [])

        def remove(current: Obj) -> None:
            _test_finalizers(current, seen)
            current["metadata"]["finalizers"] = [f for f in seen if f != VM_FINALIZER]

        meta = vm["metadata"]
        return (
            yield from self._call(
                VM, "patch", lambda: self.rt.api.patch(VM, meta["namespace"], meta["name"], remove)
            )
        )

    def _bump_generation_annotation(self, vm: Obj, vmi: Obj | None) -> Step:
        """conditionallyBumpGenerationAnnotationOnVmi (vm.go:1438-1474): when only fields
        outside spec.template changed, the VMI's vm-generation follows the VM's generation
        (from v1.0.0, as the annotation)."""
        if vmi is None or not at_least(self.rt.release, "v1.0.0"):
            return vmi
        generation = str(vm["metadata"].get("generation", 1))
        current = (vmi["metadata"].get("annotations") or {}).get(GENERATION)
        if current == generation:
            return vmi
        revision_name = vmi.get("status", {}).get("virtualMachineRevisionName", "")
        namespace = vmi["metadata"]["namespace"]
        try:
            revision = yield from self._call(
                CR, "get", lambda: self.rt.api.get(CR, namespace, revision_name)
            )
        except ApiError as exc:
            if exc.status == 404:
                return vmi
            raise
        if revision["data"]["spec"].get("template") != vm["spec"].get("template"):
            return vmi

        def annotate(current_vmi: Obj) -> None:
            current_vmi["metadata"].setdefault("annotations", {})[GENERATION] = generation

        return (
            yield from self._call(
                VMI,
                "patch",
                lambda: self.rt.api.patch(VMI, namespace, vmi["metadata"]["name"], annotate),
            )
        )

    # --- syncRunStrategy (vm.go:970-1178) --------------------------------------------------
    def _sync_run_strategy(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        if self.rt.verbosity >= 4:
            self._log_vm("info", f"VirtualMachine RunStrategy: {strategy}", vm, "vm.go:976")
        branch = {
            "Always": self._always,
            "RerunOnFailure": self._rerun_on_failure,
            "Manual": self._manual,
            "Halted": self._halted,
            "Once": self._once,
        }.get(strategy)
        if branch is None:
            return vm, f"unknown runstrategy: {strategy}"
        result = yield from branch(vm, vmi, strategy)
        return result

    def _always(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        if vmi is not None:
            force = has_stop_request_for(vm, vmi)
            if force:
                msg = (
                    f"processing forced restart request for VMI with phase {phase(vmi)} and VM "
                    f"runStrategy: {strategy}"
                )
                self._log_vm("info", msg, vm, "vm.go:985")
            if force or is_final(vmi):
                msg = f"Stopping VM with VMI in phase {phase(vmi)} and VM runStrategy: {strategy}"
                self._log_vm("info", msg, vm, "vm.go:1005")
                vm, err = yield from self._stop_vmi(vm, vmi)
                if err is not None:
                    self._log_vm(
                        "error", f"Failure attempting to delete VMI: {err}", vm, "vm.go:1013"
                    )
                    return vm, f"Failure attempting to delete VMI: {err}"
                if not self._fault("create_after_delete", vm):
                    return vm, None
                vmi = None
            else:
                return vm, None
        return (yield from self._start_after_backoff(vm, strategy, "vm.go:1027", "vm.go:1032"))

    def _start_after_backoff(self, vm: Obj, strategy: str, delay_pos: str, start_pos: str) -> Step:
        left = self._backoff_left(vm)
        if left > 0 and not self._fault("ignore_backoff", vm):
            msg = (
                f"Delaying start of VM Starting VM with 'runStrategy: {strategy}' due to start "
                f"failure backoff. Waiting {left} more seconds before starting."
            )
            self._log_vm("info", msg, vm, delay_pos)
            self.queue.add_after(key_of(vm), left * SECOND)
            return vm, None
        self._log_vm("info", f"Starting VM due to runStrategy: {strategy}", vm, start_pos)
        stall = self.rt.faults.stall_after_start_decision
        if stall and self.rt.faults.applies(vm["metadata"]["name"]):
            self.rt.faults.stall_after_start_decision = 0  # once: the node freezes mid-reconcile
            self.rt.host.frozen_until = self.rt.kernel.now + stall
            yield 0
        return (yield from self._start_or_error(vm))

    def _start_or_error(self, vm: Obj) -> Step:
        vm, err = yield from self._start_vmi(vm)
        if err is not None:
            return vm, f"Failure while starting VMI: {err}"
        return vm, None

    def _rerun_on_failure(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        """v1.2.0 on (vm.go:1041-1081): a Failed or Succeeded VMI is stopped, a Failed one gets
        a start request; with no VMI, a start only on a start request. Before v1.2.0
        (vm.go:783-820 at v1.0.0) only a Failed VMI or a stop request stops it, the stop line
        prints even while the VMI terminates, a Succeeded VMI stays, and a missing VMI is
        started with no start request."""
        legacy = not at_least(self.rt.release, "v1.2.0")
        if vmi is not None:
            force = has_stop_request_for(vm, vmi)
            if force:
                msg = (
                    f"processing stop request for VMI with phase {phase(vmi)} and VM runStrategy: "
                    f"{strategy}"
                )
                self._log_vm("info", msg, vm, "vm.go:1045")
            failed = phase(vmi) == "Failed" or (
                phase(vmi) == "Succeeded" and self._fault("rerun_after_succeeded", vm)
            )
            if legacy:
                stop = force or failed
            else:
                finished = failed or phase(vmi) == "Succeeded"
                stop = not vmi["metadata"].get("deletionTimestamp") and (force or finished)
            if stop:
                msg = f"Stopping VM with VMI in phase {phase(vmi)} and VM runStrategy: {strategy}"
                self._log_vm("info", msg, vm, "vm.go:1052")
                vm, err = yield from self._stop_vmi(vm, vmi)
                if err is not None:
                    self._log_vm(
                        "error", f"Failure attempting to delete VMI: {err}", vm, "vm.go:1055"
                    )
                    return vm, f"Failure attempting to delete VMI: {err}"
                if failed and not legacy:
                    try:
                        yield from self._add_start_request(vm)
                    except ApiError as exc:
                        return vm, f"failed to patch VM with start action: {exc}"
            return vm, None
        waits = not has_start_request(vm) and vm.get("status", {}).get("runStrategy") == strategy
        if waits and not legacy:
            return vm, None
        return (yield from self._start_after_backoff(vm, strategy, "vm.go:1076", "vm.go:1081"))

    def _add_start_request(self, vm: Obj) -> Step:
        """vm.go:954-968: PatchStatus appends a Start request; only the status is copied back,
        not the new resourceVersion (the status update at the end then conflicts)."""
        meta = vm["metadata"]

        def append(current: Obj) -> None:
            status = current.setdefault("status", {})
            status["stateChangeRequests"] = [*requests(vm), {"action": "Start"}]

        patched = yield from self._call(
            VM, "patch", lambda: self.rt.api.patch(VM, meta["namespace"], meta["name"], append)
        )
        vm["status"] = patched.get("status", {})

    def _manual(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        if vmi is not None:
            if has_stop_request_for(vm, vmi):
                msg = (
                    f"{phase(vmi)} with VMI in phase Stopping VM due to stop request and VM "
                    f"runStrategy: {strategy}"
                )
                self._log_vm("info", msg, vm, "vm.go:1094")
                vm, err = yield from self._stop_vmi(vm, vmi)
                if err is not None:
                    self._log_vm(
                        "error", f"Failure attempting to delete VMI: {err}", vm, "vm.go:1097"
                    )
                    return vm, f"Failure attempting to delete VMI: {err}"
            return vm, None
        if has_start_request(vm):
            msg = f"Starting VM due to start request and runStrategy: {strategy}"
            self._log_vm("info", msg, vm, "vm.go:1105")
            return (yield from self._start_or_error(vm))
        return vm, None

    def _halted(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        if vmi is None:
            if not has_start_request(vm):
                return vm, None
            changed = clone(vm)
            if changed["spec"].get("runStrategy") is not None:
                changed["spec"]["runStrategy"] = "Always"
            else:
                changed["spec"]["running"] = True
            error: object = "<nil>"
            try:
                yield from self._call(VM, "update", lambda: self.rt.api.update(changed))
            except ApiError as exc:
                error = exc
            return vm, f"Failure while starting VMI: {error}"
        msg = f"Stopping VM with VMI in phase {phase(vmi)} due to runStrategy: {strategy}"
        self._log_vm("info", msg, vm, "vm.go:1134")
        vm, err = yield from self._stop_vmi(vm, vmi)
        if err is not None:
            return vm, f"Failure attempting to delete VMI: {err}"
        return vm, None

    def _once(self, vm: Obj, vmi: Obj | None, strategy: str) -> Step:
        if vmi is None:
            msg = f"Starting VM due to start request and runStrategy: {strategy}"
            self._log_vm("info", msg, vm, "vm.go:1142")
            return (yield from self._start_or_error(vm))
        return vm, None

    def _fault(self, name: str, vm: Obj) -> bool:
        faults = self.rt.faults
        return bool(getattr(faults, name)) and faults.applies(vm["metadata"]["name"])

    def _backoff_left(self, vm: Obj) -> int:
        """startFailureBackoffTimeLeft (vm.go:1558-1573), in whole seconds."""
        failure = vm.get("status", {}).get("startFailure")
        if not failure or not failure.get("retryAfterTimestamp"):
            return 0
        retry_after = timefmt.from_iso(failure["retryAfterTimestamp"]) // SECOND
        left = retry_after - self.rt.kernel.now // SECOND
        return int(left) if left > 0 else 0

    # --- stopVMI (vm.go:1658-1688) ---------------------------------------------------------
    def _stop_vmi(self, vm: Obj, vmi: Obj) -> Step:
        if vmi["metadata"].get("deletionTimestamp"):
            return vm, None
        rt, key, vmi_key = self.rt, key_of(vm), key_of(vmi)
        self.expectations.expect_deletions(key, [vmi_key], rt.kernel.now)
        namespace, name = vmi["metadata"]["namespace"], vmi["metadata"]["name"]
        try:
            yield from self._call(VMI, "delete", lambda: rt.api.delete(VMI, namespace, name))
        except ApiError as exc:
            self.expectations.deletion_observed(key, vmi_key)
            message = f"Error deleting virtual machine instance {name}: {exc}"
            rt.recorder.event(vm, "Warning", "FailedDelete", message)
            return vm, str(exc)
        message = (
            "Stopped the virtual machine by deleting the virtual machine instance "
            f"{vmi['metadata']['uid']}"
        )
        rt.recorder.event(vm, "Normal", "SuccessfulDelete", message)
        msg = f"Dispatching delete event for vmi {vmi_key} with phase {phase(vmi)}"
        self._log_vm("info", msg, vm, "vm.go:1685")
        if self._fault("create_after_delete", vm):
            rt.api.remove(VMI, namespace, name)  # the bug does not wait for the VMI to go
        return vm, None

    # --- startVMI (vm.go:1257-1345) --------------------------------------------------------
    def _start_vmi(self, vm: Obj) -> Step:
        rt, key = self.rt, key_of(vm)
        vmi = setup_vmi_from_vm(vm)
        try:
            revision = yield from self._create_vm_revision(vm)
        except ApiError as exc:
            self._log_vm(
                "error",
                "Failed to create controller revision for VirtualMachine.",
                vm,
                "vm.go:1286",
                exc,
            )
            return vm, str(exc)
        vmi["status"]["virtualMachineRevisionName"] = revision
        if at_least(rt.release, "v1.0.0"):  # written from v1.0.0 (vm.go:974 at v1.0.0)
            vmi["metadata"].setdefault("annotations", {})[GENERATION] = str(
                vm["metadata"].get("generation", 1)
            )
        vmi["metadata"]["finalizers"] = [*vmi["metadata"].get("finalizers", []), VM_FINALIZER]
        self.expectations.expect_creations(key, 1, rt.kernel.now)
        try:
            created = yield from self._call(VMI, "create", lambda: rt.api.create(vmi))
        except ApiError as exc:
            self._log_vm("info", "Failed to create VirtualMachineInstance: /", vm, "vm.go:1336")
            self.expectations.creation_observed(key)
            rt.recorder.event(
                vm, "Warning", "FailedCreate", f"Error creating virtual machine instance: {exc}"
            )
            return vm, str(exc)
        name = created["metadata"]["name"]
        msg = f"Started VM by creating the new virtual machine instance {name}"
        self._log_vm("info", msg, vm, "vm.go:1341")
        rt.recorder.event(
            vm,
            "Normal",
            "SuccessfulCreate",
            f"Started the virtual machine by creating the new virtual machine instance {name}",
        )
        return vm, None

    def _create_vm_revision(self, vm: Obj) -> Step:
        """createVMRevision (vm.go:1840-1866): older start revisions are deleted first; the one
        of the current generation is reused."""
        rt = self.rt
        uid = vm["metadata"]["uid"]
        generation = int(vm["metadata"].get("generation", 1))
        offset = (
            rt.faults.revision_generation_offset
            if self._fault("revision_generation_offset", vm)
            else 0
        )
        name = f"revision-start-vm-{uid}-{generation + offset}"
        namespace = vm["metadata"]["namespace"]
        reuse = False
        for cr in rt.informers.list(
            CR, lambda cr: f"revision-start-vm-{uid}" in cr["metadata"]["name"]
        ):
            if not _owned_by(cr, vm):
                continue
            if int(cr.get("revision", 0)) == generation:
                reuse = True
                continue
            cr_name = cr["metadata"]["name"]
            yield from self._call(CR, "delete", partial(rt.api.delete, CR, namespace, cr_name))
        if reuse:
            return name
        revision = {
            "apiVersion": "apps/v1",
            "kind": CR,
            "metadata": {
                "name": f"revision-start-vm-{uid}-{generation}",
                "namespace": namespace,
                "ownerReferences": [owner_reference(vm)],
            },
            "data": {"spec": clone(vm["spec"])},
            "revision": generation,
        }
        created = yield from self._call(CR, "create", lambda: rt.api.create(revision))
        return name if offset else created["metadata"]["name"]

    # --- updateStatus (vm.go:2457-2514) ----------------------------------------------------
    def _update_status(self, vm: Obj, original: Obj, vmi: Obj | None, sync_err: str | None) -> Step:
        rt = self.rt
        status = vm.setdefault("status", {})
        status["created"] = vmi is not None
        status["ready"] = vmi is not None and _vmi_ready(vmi)
        if vmi is not None:
            generation = (vmi["metadata"].get("annotations") or {}).get(GENERATION)
            if generation is not None:
                status["observedGeneration"] = int(generation)
                status["desiredGeneration"] = int(vm["metadata"].get("generation", 1))
        strategy = run_strategy(original)
        if status.get("runStrategy") or status["created"]:
            status["runStrategy"] = strategy
        self._trim_first_request(vm, vmi)
        self._sync_start_failure(vm, vmi)
        _sync_conditions(vm, vmi, sync_err, rt.kernel.now)
        status["printableStatus"] = self._printable_status(vm, vmi)
        if _clean(status) != _clean(original.get("status", {})):
            vm["status"] = _clean(status)
            try:
                yield from self._call(VM, "update", lambda: rt.api.update(vm, "status"))
            except ApiError as exc:
                return str(exc)
        if (
            vmi is not None
            and is_final(vmi)
            and VM_FINALIZER in (vmi["metadata"].get("finalizers") or [])
        ):
            try:
                yield from self._remove_vmi_finalizer(vmi)
            except ApiError as exc:
                return str(exc)
        return None

    def _remove_vmi_finalizer(self, vmi: Obj) -> Step:
        meta = vmi["metadata"]
        seen = list(meta.get("finalizers") or [])

        def remove(current: Obj) -> None:
            _test_finalizers(current, seen)
            current["metadata"]["finalizers"] = [f for f in seen if f != VM_FINALIZER]

        yield from self._call(
            VMI, "patch", lambda: self.rt.api.patch(VMI, meta["namespace"], meta["name"], remove)
        )

    def _trim_first_request(self, vm: Obj, vmi: Obj | None) -> None:
        """isTrimFirstChangeRequestNeeded (vm.go:2811-2853): at most one request per reconcile."""
        pending = requests(vm)
        if not pending:
            return
        first, trim = pending[0], False
        if first.get("action") == "Stop":
            if vmi is None:
                trim = True
            elif not first.get("uid"):
                self._log_vm("error", "Stop Request has no UID.", vm, "vm.go:2830")
                trim = True
            else:
                trim = first["uid"] != vmi["metadata"]["uid"]
        elif first.get("action") == "Start":
            trim = (
                vmi is not None
                and not vmi["metadata"].get("deletionTimestamp")
                and not is_final(vmi)
            )
        if trim:
            vm["status"]["stateChangeRequests"] = pending[1:]

    def _sync_start_failure(self, vm: Obj, vmi: Obj | None) -> None:
        """syncStartFailureStatus (vm.go:1575-1603) and calculateStartBackoffTime (1477-1504)."""
        status = vm["status"]
        if ran(vmi) or run_strategy(vm) not in ("Always", "RerunOnFailure", "Once"):
            status.pop("startFailure", None)
            return
        if vmi is None or not is_final(vmi):
            return
        failure = status.get("startFailure")
        if failure and failure.get("lastFailedVMIUID") == vmi["metadata"]["uid"]:
            return
        count = int(failure["consecutiveFailCount"]) + 1 if failure else 1
        delay = backoff_seconds(count, self.rt.rng.randrange)
        status["startFailure"] = {
            "consecutiveFailCount": count,
            "lastFailedVMIUID": vmi["metadata"]["uid"],
            "retryAfterTimestamp": timefmt.seconds(self.rt.kernel.now + delay * SECOND),
        }

    def _printable_status(self, vm: Obj, vmi: Obj | None) -> str:
        """setPrintableStatus (vm.go:2526-2546), for the states these VMs reach."""
        key = key_of(vm)
        create_expected = self.expectations.pending(key, self.rt.kernel.now)
        if vm["metadata"].get("deletionTimestamp"):
            return "Terminating"
        if vmi is not None and not is_final(vmi):
            if vmi["metadata"].get("deletionTimestamp"):
                return "Stopping"
            if is_migrating(vmi):  # isVirtualMachineStatusMigrating (vm.go:2648-2651)
                return "Migrating"
            if phase(vmi) == "Running":
                return "Running"
            return "Starting"
        if vmi is None and create_expected:
            return "Starting"
        failure = vm["status"].get("startFailure")
        if failure and run_strategy(vm) in ("Always", "RerunOnFailure", "Once"):
            return "CrashLoopBackOff"
        return "Stopped"


def _test_finalizers(current: Obj, seen: list[str]) -> None:
    """getPatchFinalizerOps (vm.go:2306-2311): the patch tests the finalizers it read first."""
    if list(current["metadata"].get("finalizers") or []) != seen:
        raise ApiError(
            422, "Invalid", "the server rejected our request due to an error in our request"
        )


def backoff_seconds(count: int, randrange: Any) -> int:
    """10 s × count², plus up to half again at random, at most 300 s (vm.go:1477-1504)."""
    count = max(count, 1)
    interval = max(MAX_CRASHLOOP_BACKOFF_S // 30, 10)
    delay = interval * count * count
    delay += int(randrange(delay // 2 + 1))
    return min(delay, MAX_CRASHLOOP_BACKOFF_S)


def owner_reference(owner: Obj, kind: str = VM) -> dict[str, Any]:
    """A controller ownerReference to a kubevirt.io/v1 object (the VM's, by default:
    vm.go:1889-1892; also the replica set's, replicaset.go:724-735, and a restore's target,
    restore.go:1289-1306)."""
    return {
        "apiVersion": "kubevirt.io/v1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }


def setup_vmi_from_vm(vm: Obj) -> Obj:
    """SetupVMIFromVM (vm.go:1868-1897): the template's metadata and spec, the VM's name and
    namespace, a controller reference to the VM."""
    template = clone(vm["spec"]["template"])
    meta = template.get("metadata") or {}
    meta.pop("creationTimestamp", None)
    meta.update(
        name=vm["metadata"]["name"],
        namespace=vm["metadata"]["namespace"],
        ownerReferences=[owner_reference(vm)],
    )
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": VMI,
        "metadata": meta,
        "spec": template["spec"],
        "status": {},
    }


def _owned_by(obj: Obj, vm: Obj) -> bool:
    refs = obj["metadata"].get("ownerReferences") or []
    return any(r.get("kind") == VM and r.get("uid") == vm["metadata"]["uid"] for r in refs)


def _vmi_ready(vmi: Obj) -> bool:
    for condition in vmi.get("status", {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def _set_condition(vm: Obj, condition: dict[str, Any]) -> None:
    """UpdateCondition (conditions.go:127-141): replaced only when status or reason change."""
    conditions = vm["status"].setdefault("conditions", [])
    for i, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            if (existing.get("status"), existing.get("reason")) != (
                condition["status"],
                condition.get("reason"),
            ):
                conditions[i] = condition
            return
    conditions.append(condition)


def _sync_conditions(vm: Obj, vmi: Obj | None, sync_err: str | None, now: int) -> None:
    """syncConditions (vm.go:2739-2788): Ready from the VMI, Failure from the sync error."""
    stamp = timefmt.seconds(now)
    ready = None
    if vmi is not None:
        ready = next(
            (c for c in vmi.get("status", {}).get("conditions") or [] if c.get("type") == "Ready"),
            None,
        )
    if vmi is None:
        condition = {
            "type": "Ready",
            "status": "False",
            "reason": "VMINotExists",
            "message": "VMI does not exist",
            "lastProbeTime": stamp,
            "lastTransitionTime": stamp,
        }
    elif ready is None:
        condition = {
            "type": "Ready",
            "status": "False",
            "reason": "VMIConditionMissing",
            "message": "VMI is missing the Ready condition",
            "lastProbeTime": stamp,
            "lastTransitionTime": stamp,
        }
    else:
        condition = {"type": "Ready", **{k: v for k, v in ready.items() if k != "type"}}
    _set_condition(vm, condition)
    conditions = vm["status"].setdefault("conditions", [])
    if sync_err is None:
        vm["status"]["conditions"] = [c for c in conditions if c.get("type") != "Failure"]
        return
    reason = (
        "FailedDelete" if sync_err.startswith("Failure attempting to delete") else "FailedCreate"
    )
    _set_condition(
        vm,
        {
            "type": "Failure",
            "status": "True",
            "reason": reason,
            "message": sync_err,
            "lastProbeTime": None,
            "lastTransitionTime": stamp,
        },
    )


def _clean(status: dict[str, Any]) -> dict[str, Any]:
    """The status as the API serialises it: empty lists and false booleans left out."""
    out = {}
    for name, value in status.items():
        if value in (None, [], {}, False, 0, ""):
            continue
        out[name] = value
    return out
