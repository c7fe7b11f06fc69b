"""virtctl start / stop / restart as virt-api carries them out (pkg/virt-api/rest/lifecycle.go
at v1.9.0): a state change request patched into the VM's status, or a patch of
``spec.runStrategy`` / ``spec.running``, or a refusal (409) the user sees and nothing changes.

Every request patch also removes ``status.startFailure`` (getChangeRequestJson,
lifecycle.go:606-631), so a user's start, stop or restart resets the crash-loop backoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvsim.apiserver import ApiError, ApiServer, Obj

VM, VMI = "VirtualMachine", "VirtualMachineInstance"


@dataclass(frozen=True)
class Outcome:
    """What the user saw: accepted, or the refusal's message."""

    accepted: bool
    detail: str = ""


def _strategy(vm: Obj) -> str:
    spec = vm.get("spec", {})
    if spec.get("runStrategy") is not None:
        return str(spec["runStrategy"])
    return "Always" if spec.get("running") else "Halted"


def _final(vmi: Obj | None) -> bool:
    return vmi is not None and vmi.get("status", {}).get("phase") in ("Succeeded", "Failed")


def _request_patch(api: ApiServer, vm: Obj, changes: list[dict[str, Any]]) -> Outcome:
    """getChangeRequestJson: add to an empty list, replace it with a lone Stop, else refuse."""
    meta = vm["metadata"]
    existing = list(vm.get("status", {}).get("stateChangeRequests") or [])
    if existing and not (len(changes) == 1 and changes[0]["action"] == "Stop"):
        return Outcome(False, "unable to complete request: stop/start already underway")

    def patch(current: Obj) -> None:
        status = current.setdefault("status", {})
        if list(status.get("stateChangeRequests") or []) != existing:
            raise ApiError(422, "Invalid", "jsonpatch test operation does not apply")
        status["stateChangeRequests"] = changes
        status.pop("startFailure", None)

    try:
        api.patch(VM, meta["namespace"], meta["name"], patch)
    except ApiError as exc:
        return Outcome(False, str(exc))
    return Outcome(True)


def _running_patch(api: ApiServer, vm: Obj, running: bool) -> Outcome:
    meta = vm["metadata"]

    def patch(current: Obj) -> None:
        if current["spec"].get("runStrategy") is not None:
            current["spec"]["runStrategy"] = "Always" if running else "Halted"
        else:
            current["spec"]["running"] = running

    api.patch(VM, meta["namespace"], meta["name"], patch)
    return Outcome(True)


def _fetch(api: ApiServer, namespace: str, name: str) -> tuple[Obj | None, Obj | None]:
    return api.peek(VM, namespace, name), api.peek(VMI, namespace, name)


def start(api: ApiServer, namespace: str, name: str) -> Outcome:
    """StartVMRequestHandler (lifecycle.go:43-160)."""
    vm, vmi = _fetch(api, namespace, name)
    if vm is None:
        return Outcome(False, "not found")
    phase = (vmi or {}).get("status", {}).get("phase", "")
    if vmi is not None and not _final(vmi) and phase not in ("Unknown", ""):
        return Outcome(False, "VM is already running")
    strategy = _strategy(vm)
    if strategy == "Halted":
        return _running_patch(api, vm, True)
    if strategy in ("RerunOnFailure", "Manual"):
        if strategy == "RerunOnFailure" and phase == "Failed":
            return Outcome(False, "RerunOnFailure does not support starting VM from failed state")
        restart = vmi is not None and (
            (strategy == "RerunOnFailure" and phase == "Succeeded")
            or (strategy == "Manual" and _final(vmi))
        )
        changes: list[dict[str, Any]] = [{"action": "Start"}]
        if restart and vmi is not None:
            changes = [{"action": "Stop", "uid": vmi["metadata"]["uid"]}, {"action": "Start"}]
        return _request_patch(api, vm, changes)
    return Outcome(False, f"{strategy} does not support manual start requests")


def stop(api: ApiServer, namespace: str, name: str) -> Outcome:
    """StopVMRequestHandler (lifecycle.go:162-258), without a grace period."""
    vm, vmi = _fetch(api, namespace, name)
    if vm is None:
        return Outcome(False, "not found")
    strategy = _strategy(vm)
    if strategy == "Halted":
        if vmi is None or _final(vmi):
            return Outcome(False, "VM is not running")
        return Outcome(
            False, "Halted only supports manual stop requests with a shorter graceperiod"
        )
    if strategy in ("RerunOnFailure", "Manual"):
        if vmi is None or _final(vmi):
            return Outcome(False, "VM is not running")
        return _request_patch(api, vm, [{"action": "Stop", "uid": vmi["metadata"]["uid"]}])
    return _running_patch(api, vm, False)


def restart(api: ApiServer, namespace: str, name: str) -> Outcome:
    """RestartVMRequestHandler (lifecycle.go:394-490)."""
    vm, vmi = _fetch(api, namespace, name)
    if vm is None:
        return Outcome(False, "not found")
    strategy = _strategy(vm)
    if strategy in ("Halted", "Once"):
        return Outcome(False, f"RunStategy {strategy} does not support manual restart requests")
    if vmi is None:
        return Outcome(False, "VM is not running: Halted")
    return _request_patch(
        api, vm, [{"action": "Stop", "uid": vmi["metadata"]["uid"]}, {"action": "Start"}]
    )


def evict(api: ApiServer, namespace: str, pod_name: str) -> Outcome:
    """An Eviction of a pod through the pod-eviction webhook (pod-eviction-admitter.go:86-217 at
    v1.9.0): a completed or non-launcher pod is evicted (deleted with its grace period); for a
    launcher pod the VMI's eviction strategy decides. LiveMigrate (migratable),
    LiveMigrateIfPossible (migratable) and External mark the VMI with
    ``status.evacuationNodeName`` and refuse with 429; a marked VMI is refused again; None (or
    LiveMigrateIfPossible, not migratable) lets it through; LiveMigrate on a VMI that is not
    migratable is refused without a mark."""
    pod = api.peek("Pod", namespace, pod_name)
    if pod is None:
        return Outcome(False, f'pods "{pod_name}" not found')
    verdict = _eviction_verdict(api, pod)
    if verdict is None:
        api.delete(
            "Pod", namespace, pod_name, int(pod["spec"].get("terminationGracePeriodSeconds", 30))
        )
        return Outcome(True)
    return Outcome(False, verdict)


def _eviction_verdict(api: ApiServer, pod: Obj) -> str | None:
    labels = pod["metadata"].get("labels") or {}
    completed = pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
    name = (pod["metadata"].get("annotations") or {}).get("kubevirt.io/domain")
    if labels.get("kubevirt.io") != "virt-launcher" or completed or name is None:
        return None
    namespace = pod["metadata"]["namespace"]
    vmi = api.peek(VMI, namespace, name)
    if vmi is None:
        missing = f'virtualmachineinstances.kubevirt.io "{name}" not found'
        return f"kubevirt failed getting the vmi: {missing}"
    strategy = vmi["spec"].get("evictionStrategy")
    migratable = any(
        c.get("type") == "LiveMigratable" and c.get("status") == "True"
        for c in vmi.get("status", {}).get("conditions") or []
    )
    if strategy == "LiveMigrate" and not migratable:
        return f"VMI {name} is configured with an eviction strategy but is not live-migratable"
    mark = strategy in ("LiveMigrate", "External") or (
        strategy == "LiveMigrateIfPossible" and migratable
    )
    if not mark:
        return None
    triggered = f'Eviction triggered evacuation of VMI "{namespace}/{name}"'
    status = vmi.get("status", {})
    if status.get("evacuationNodeName"):
        return f"Evacuation in progress: {triggered}"
    if status.get("nodeName") != pod["spec"].get("nodeName"):
        return "Eviction request for target Pod"
    node = pod["spec"]["nodeName"]
    api.patch(VMI, namespace, name, lambda v: v["status"].__setitem__("evacuationNodeName", node))
    return triggered
