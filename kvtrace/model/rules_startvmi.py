"""What ``startVMI`` and ``SetupVMIFromVM`` put on every VMI they create (vm.go:1257-1345,
1868-1897 at v1.9.0)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from kvtrace.model.facts import FINAL, Facts, Incarnation
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated

VM_FINALIZER = "kubevirt.io/virtualMachineControllerFinalize"
FOREGROUND = {"kubevirt.io/foregroundDeleteVirtualMachine", "foregroundDeleteVirtualMachine"}
GENERATION = "kubevirt.io/vm-generation"
LEGACY_FIRMWARE_NAMESPACE = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")  # firmware.go:83


def legacy_firmware_uuid(vm_name: str) -> str:
    """``CalculateLegacyUUID``: RFC 4122 version 5 of the VM name only (firmware.go:83-89)."""
    return str(uuid.uuid5(LEGACY_FIRMWARE_NAMESPACE, vm_name))


def _meta(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _vmis(facts: Facts) -> list[Incarnation]:
    return [inc for inc in facts.incarnations if inc.vmi is not None]


def _row_of(facts: Facts, inc: Incarnation) -> tuple[int, ...]:
    """The VMI's creation row, as evidence for object findings."""
    for i, row in enumerate(facts.rows):
        if row.incarnation == inc.uid and row.what == "VMI created":
            return (i,)
    return ()


def _missing_vmis(facts: Facts) -> Iterator[Finding]:
    if not _vmis(facts):
        yield unverifiable("no VMI object in the evidence (a deleted VMI leaves only log lines)")


def revision_name(facts: Facts) -> Iterator[Finding]:
    yield from _missing_vmis(facts)
    vm_uid = facts.timeline.scope.vm_uid
    revisions = {r.name: r for r in facts.timeline.scope.revisions}
    for inc in _vmis(facts):
        assert inc.vmi is not None
        generation = (_meta(inc.vmi.body).get("annotations") or {}).get(GENERATION)
        named = inc.status.get("virtualMachineRevisionName")
        rows = _row_of(facts, inc)
        if vm_uid is None or generation is None:
            yield unverifiable("needs the VM uid and the VMI's kubevirt.io/vm-generation", *rows)
            continue
        expected = f"revision-start-vm-{vm_uid}-{generation}"
        if named != expected:
            yield violated(
                f"status.virtualMachineRevisionName is {named!r}, expected {expected}", *rows
            )
        elif (
            revisions
            and expected not in revisions
            and not _newer_revision(revisions, vm_uid, generation)
        ):
            yield violated(
                f"no ControllerRevision {expected} although start revisions were collected", *rows
            )
        else:
            yield explained(
                f"revision {expected} matches the VM uid and generation {generation}", *rows
            )


def _newer_revision(revisions: dict[str, Any], vm_uid: str, generation: str) -> bool:
    """A later start deletes older revisions (vm.go:1726-1761): a newer one may replace it."""
    prefix = f"revision-start-vm-{vm_uid}-"
    gens = [n.removeprefix(prefix) for n in revisions if n.startswith(prefix)]
    return any(g.isdigit() and generation.isdigit() and int(g) > int(generation) for g in gens)


def vmi_metadata(facts: Facts) -> Iterator[Finding]:
    yield from _missing_vmis(facts)
    for inc in _vmis(facts):
        assert inc.vmi is not None
        problems = _metadata_problems(inc, facts.timeline.scope.vm_uid)
        rows = _row_of(facts, inc)
        if problems:
            yield violated("; ".join(problems), *rows)
        else:
            yield explained(
                "finalizers, vm-generation annotation and owner reference as set by startVMI", *rows
            )


def _metadata_problems(inc: Incarnation, vm_uid: str | None) -> list[str]:
    assert inc.vmi is not None
    meta = _meta(inc.vmi.body)
    finalizers = set(meta.get("finalizers") or [])
    final = inc.status.get("phase") in FINAL
    problems = []
    if not final and VM_FINALIZER not in finalizers:
        problems.append(f"finalizer {VM_FINALIZER} missing")
    if not final and not finalizers & FOREGROUND:
        problems.append("finalizer kubevirt.io/foregroundDeleteVirtualMachine missing")
    generation = (meta.get("annotations") or {}).get(GENERATION)
    if generation is None or not str(generation).isdigit():
        problems.append(f"annotation {GENERATION} missing or not a number ({generation!r})")
    owners = [
        r for r in meta.get("ownerReferences") or [] if isinstance(r, dict) and r.get("controller")
    ]
    if vm_uid and not any(
        r.get("uid") == vm_uid and r.get("kind") == "VirtualMachine" for r in owners
    ):
        problems.append("no controller ownerReference to the VM")
    return problems


def firmware_uuid(facts: Facts) -> Iterator[Finding]:
    vm = facts.vm
    if vm is None:
        yield unverifiable("no VM object: the template's firmware UUID is unknown")
        return
    yield from _missing_vmis(facts)
    template = _firmware(vm.body.get("spec", {}).get("template", {}).get("spec", {}))
    for inc in _vmis(facts):
        assert inc.vmi is not None
        if not isinstance((inc.vmi.body.get("spec") or {}).get("domain"), dict):
            yield unverifiable("the VMI object has no spec.domain: its firmware UUID is unknown")
            continue
        actual = _firmware(inc.vmi.body.get("spec", {}))
        expected = template or legacy_firmware_uuid(vm.name)
        source = "the VM template" if template else "the legacy uuid5 of the VM name"
        rows = _row_of(facts, inc)
        if actual == expected:
            yield explained(f"firmware UUID {actual} comes from {source}", *rows)
        else:
            yield violated(f"firmware UUID {actual} differs from {source} ({expected})", *rows)


def _firmware(spec: Any) -> str | None:
    if not isinstance(spec, dict):
        return None
    firmware = (spec.get("domain") or {}).get("firmware") or {}
    value = firmware.get("uuid") if isinstance(firmware, dict) else None
    return str(value) if value else None
