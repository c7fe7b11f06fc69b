"""The VMs a VirtualMachinePool makes (pool.go:754-849 at v1.9.0): their owner reference,
revision, name-indexed spec and labels."""

from __future__ import annotations

from typing import Any

from kvsim.apiserver import Obj, clone
from kvsim.vm_controller import VM

POOL = "VirtualMachinePool"
POOL_API = "pool.kubevirt.io/v1beta1"
FINALIZER = "pool.kubevirt.io/finalizer"  # pool/v1beta1/types.go:32
REVISION_LABEL = "kubevirt.io/vm-pool-revision-name"  # core/v1/types.go:1379


def pool_owner(pool: Obj) -> dict[str, Any]:
    """poolOwnerRef (pool.go:754-765)."""
    return {
        "apiVersion": POOL_API,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": POOL,
        "name": pool["metadata"]["name"],
        "uid": pool["metadata"]["uid"],
    }


def revision_name(pool: Obj) -> str:
    """getRevisionName (pool.go:851-853)."""
    return f"{pool['metadata']['name']}-{pool['metadata'].get('generation', 1)}"


def index_vm_spec(spec: Obj, index: int) -> Obj:
    """indexVMSpec (pool.go:772-830) without name generation options: each DataVolumeTemplate
    gets ``-<index>`` and the volumes that name it follow."""
    spec = clone(spec)
    renamed = {}
    for template in spec.get("dataVolumeTemplates") or []:
        new = f"{template['metadata']['name']}-{index}"
        renamed[template["metadata"]["name"]] = new
        template["metadata"]["name"] = new
    for volume in spec["template"]["spec"].get("volumes") or []:
        for source, field_name in (("persistentVolumeClaim", "claimName"), ("dataVolume", "name")):
            ref = volume.get(source)
            if ref is not None and ref.get(field_name) in renamed:
                ref[field_name] = renamed[ref[field_name]]
    return spec


def new_vm(pool: Obj, name: str, revision: str) -> Obj:
    """The VM scaleOut creates (pool.go:946-956)."""
    template = pool["spec"]["virtualMachineTemplate"]
    meta = template.get("metadata") or {}
    vm: Obj = {
        "apiVersion": "kubevirt.io/v1",
        "kind": VM,
        "metadata": {
            "name": name,
            "namespace": pool["metadata"]["namespace"],
            "finalizers": [FINALIZER],
            "ownerReferences": [pool_owner(pool)],
        },
        "spec": index_vm_spec(template["spec"], int(name.rsplit("-", 1)[1])),
    }
    for field_name in ("labels", "annotations"):
        if meta.get(field_name):
            vm["metadata"][field_name] = dict(meta[field_name])
    return with_revision(vm, revision)


def with_revision(vm: Obj, revision: str) -> Obj:
    """injectPoolRevisionLabelsIntoVM (pool.go:832-849)."""
    vm["metadata"].setdefault("labels", {})[REVISION_LABEL] = revision
    template_meta = vm["spec"]["template"].setdefault("metadata", {})
    template_meta.setdefault("labels", {})[REVISION_LABEL] = revision
    return vm


def ready(obj: Obj) -> bool:
    """The Ready condition of a VM (filterReadyVMs, pool.go:478-483) or a VMI."""
    conditions = obj.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def keep_identity(old: Obj, new: Obj) -> Obj:
    """preserveVMIdentityFields (pool.go:2086-2107): the firmware UUID and serial the VM
    webhook gave the VM at creation stay."""
    firmware = old["template"]["spec"].get("domain", {}).get("firmware")
    if firmware:
        new["template"]["spec"].setdefault("domain", {})["firmware"] = clone(firmware)
    return new
