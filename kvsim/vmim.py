"""The VirtualMachineInstanceMigration object of v1.9.0 and what its create webhooks do.

Phases (staging/src/kubevirt.io/api/core/v1/types.go:1841-1863 at v1.9.0): ``""``, Pending,
Scheduling, Scheduled, PreparingTarget, TargetReady, Running, Succeeded, Failed (the
decentralized WaitingForSync and Synchronizing are not simulated). ``IsFinal``, ``IsRunning``,
``TargetIsCreated`` and ``TargetIsHandedOff`` are types.go:847-887.

The create webhooks (pkg/virt-api/webhooks/): the mutator adds the label
``kubevirt.io/vmi-name`` and the finalizer ``kubevirt.io/migrationJobFinalize``
(migration-create-mutator.go:57-83); the admitter refuses a migration of a VMI that does not
exist, is final, is not live-migratable, or already has an unfinished migration
(migration-create-admitter.go:60-148).
"""

from __future__ import annotations

from typing import Any

from kvsim.apiserver import ApiError, ApiServer, Obj

VMIM, VMI, POD = "VirtualMachineInstanceMigration", "VirtualMachineInstance", "Pod"
FINALIZER = "kubevirt.io/migrationJobFinalize"  # types.go:1244
VMI_NAME_LABEL = "kubevirt.io/vmi-name"  # types.go:1293
JOB_LABEL = "kubevirt.io/migrationJobUID"  # types.go:1140
JOB_NAME_ANNOTATION = "kubevirt.io/migrationJobName"  # types.go:1165
TARGET_NODE_LABEL = "kubevirt.io/migrationTargetNodeName"  # types.go:1175
EVACUATION_ANNOTATION = "kubevirt.io/evacuationMigration"  # types.go:1178
TARGET_READY_ANNOTATION = "kubevirt.io/migration-target-ready-timestamp"  # types.go:1409
PRIORITY_RUNNING = 1000  # migrations.go:16-24
PRIORITIES = {"system-critical": 100, "user-triggered": 50, "system-maintenance": 20}
FINAL = ("Succeeded", "Failed")
NOT_RUNNING = ("", "Pending", "Succeeded", "Failed")
NOT_CREATED = ("", "Pending")
NOT_HANDED_OFF = ("", "Pending", "Scheduling", "Scheduled")


def phase_of(vmim: Obj) -> str:
    return str(vmim.get("status", {}).get("phase", ""))


def is_final(vmim: Obj) -> bool:
    return phase_of(vmim) in FINAL


def is_running(vmim: Obj) -> bool:
    """IsRunning (types.go:851-861): counts towards the parallel limits."""
    return phase_of(vmim) not in NOT_RUNNING


def key_of(obj: Obj) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def vmi_key(vmim: Obj) -> str:
    return f"{vmim['metadata'].get('namespace', '')}/{vmim['spec']['vmiName']}"


def priority(vmim: Obj) -> int:
    """The queue priority (migration.go:2008-2013): Running first, then spec.priority."""
    if phase_of(vmim) == "Running":
        return PRIORITY_RUNNING
    return PRIORITIES.get(str(vmim["spec"].get("priority", "")), 0)


def migration_state(vmi: Obj) -> dict[str, Any] | None:
    state = vmi.get("status", {}).get("migrationState")
    return state if isinstance(state, dict) else None


def owns_state(vmi: Obj, vmim: Obj) -> bool:
    state = migration_state(vmi)
    return state is not None and state.get("migrationUid") == vmim["metadata"]["uid"]


def is_migrating(vmi: Obj) -> bool:
    """IsMigrating (pkg/util/migrations/migrations.go:75-97): started and not yet ended."""
    state = migration_state(vmi) or {}
    return bool(state.get("startTimestamp")) and not state.get("endTimestamp")


def is_migratable(vmi: Obj) -> bool:
    """IsMigratable: the condition LiveMigratable=True, which virt-handler writes."""
    return any(
        c.get("type") == "LiveMigratable" and c.get("status") == "True"
        for c in vmi.get("status", {}).get("conditions") or []
    )


def new_migration(
    namespace: str, vmi: str, generate: str, annotations: dict[str, str] | None = None
) -> Obj:
    obj: Obj = {
        "apiVersion": "kubevirt.io/v1",
        "kind": VMIM,
        "metadata": {"generateName": generate, "namespace": namespace},
        "spec": {"vmiName": vmi},
    }
    if annotations:
        obj["metadata"]["annotations"] = dict(annotations)
    return obj


def admit(api: ApiServer, obj: Obj) -> None:
    """The create webhooks: refusals first (the admitter), then the mutator's label and
    finalizer; the API server names a ``generateName`` object."""
    meta, name = obj["metadata"], obj["spec"]["vmiName"]
    vmi = api.peek(VMI, meta["namespace"], name)
    if vmi is None:
        raise _denied(f'the VMI "{meta["namespace"]}/{name}" does not exist')
    if vmi.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        raise _denied("Cannot migrate VMI in finalized state.")
    for other in api.items(VMIM):
        if other["spec"]["vmiName"] == name and not is_final(other):
            raise _denied(
                "in-flight migration detected. Active migration job "
                f"({other['metadata']['uid']}) is currently already in progress for VMI {name}."
            )
    meta.setdefault("labels", {})[VMI_NAME_LABEL] = name
    meta["finalizers"] = [*meta.get("finalizers", []), FINALIZER]
    obj.setdefault("status", {})


def _denied(message: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        'admission webhook "migration-create-validator.kubevirt.io" denied the request: ' + message,
    )
