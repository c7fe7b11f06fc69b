"""What ``startVMI`` and ``SetupVMIFromVM`` put on every VMI they create (vm.go:1257-1345,
1868-1897 at v1.9.0)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from kvtrace.model.facts import FINAL, Facts, Incarnation
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated
from kvtrace.timeline.vmscope import START_REVISION, controller_refs, mapping_at
from parsers.timestamps import parse_time

VM_FINALIZER = "kubevirt.io/virtualMachineControllerFinalize"
FOREGROUND = {"kubevirt.io/foregroundDeleteVirtualMachine", "foregroundDeleteVirtualMachine"}
GENERATION = "kubevirt.io/vm-generation"
REVISION_BEFORE_VMI = timedelta(seconds=30)
LEGACY_FIRMWARE_NAMESPACE = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")  # firmware.go:83


def legacy_firmware_uuid(vm_name: str) -> str:
    """``CalculateLegacyUUID``: RFC 4122 version 5 of the VM name only (firmware.go:83-89)."""
    return str(uuid.uuid5(LEGACY_FIRMWARE_NAMESPACE, vm_name))


def _meta(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _vmis(facts: Facts) -> list[Incarnation]:
    """The incarnations whose VMI object is whole enough to judge: one the API server returns
    always has a ``spec`` and a ``status`` mapping (startVMI writes both before the create).
    Only VMIs the VM controller made are judged: not one a VirtualMachineInstanceReplicaSet
    owns (replicaset.go:309), nor a user's VMI with no owner and no VM."""
    return [
        inc
        for inc in facts.incarnations
        if inc.vmi is not None and _whole(inc.vmi) and _of_vm_controller(facts, inc.vmi.body)
    ]


def _others_vmis(facts: Facts) -> bool:
    """Every VMI object of the scope was made by another controller (or a user)."""
    vmis = [inc.vmi for inc in facts.incarnations if inc.vmi is not None]
    return bool(vmis) and not any(_of_vm_controller(facts, v.body) for v in vmis)


def _of_vm_controller(facts: Facts, body: dict[str, Any]) -> bool:
    kinds = {kind for kind, _, _ in controller_refs(body)}
    return "VirtualMachine" in kinds if kinds else facts.vm is not None


def _whole(obj: Any) -> bool:
    """A spec and a status mapping, as the API returns a VM the controller has reconciled or a
    VMI; a file cut short loses the status first (it comes last)."""
    return isinstance(obj.body.get("spec"), dict) and isinstance(obj.body.get("status"), dict)


def _row_of(facts: Facts, inc: Incarnation) -> tuple[int, ...]:
    """The VMI's creation row, as evidence for object findings."""
    for i, row in enumerate(facts.rows):
        if row.incarnation == inc.uid and row.what == "VMI created":
            return (i,)
    return ()


def _missing_vmis(facts: Facts) -> Iterator[Finding]:
    partial = [inc for inc in facts.incarnations if inc.vmi is not None and not _whole(inc.vmi)]
    for inc in partial:
        yield unverifiable(
            f"the VMI object of {inc.uid[:8]} has no spec or no status (every VMI read from the "
            "API has both): a truncated or edited object, not judged",
            *_row_of(facts, inc),
        )
    if not _vmis(facts) and not partial and not _others_vmis(facts):
        yield unverifiable("no VMI object in the evidence (a deleted VMI leaves only log lines)")


def revision_name(facts: Facts) -> Iterator[Finding]:
    """startVMI names the revision of the VM's generation at the start, and records the name in
    the VMI's status (vm.go:1284-1291). The VMI's ``kubevirt.io/vm-generation`` starts at that
    generation and only moves up, when a later edit leaves ``spec.template`` alone
    (vm.go:1438-1474), so the named generation is at most the annotation's; and the start
    revision itself is deleted only by a later start (vm.go:1726-1761)."""
    yield from _missing_vmis(facts)
    revisions = {r.name: r for r in facts.timeline.scope.revisions}
    for inc in _vmis(facts):
        assert inc.vmi is not None
        yield _revision_of(facts, inc, revisions)


def _revision_of(facts: Facts, inc: Incarnation, revisions: dict[str, Any]) -> Finding:
    assert inc.vmi is not None
    rows = _row_of(facts, inc)
    owner = _owner_uid(inc.vmi.body)
    annotation = (_meta(inc.vmi.body).get("annotations") or {}).get(GENERATION)
    named = str(inc.status.get("virtualMachineRevisionName") or "")
    found = START_REVISION.match(named)
    if owner is None or annotation is None or not str(annotation).isdigit():
        return unverifiable("needs the VMI's owner uid and its kubevirt.io/vm-generation", *rows)
    if not named:
        return unverifiable(
            "the VMI's status has no virtualMachineRevisionName; startVMI always writes it "
            "(vm.go:1291), and it is the last status field a listing prints, so the object is "
            "most likely cut short or edited",
            *rows,
        )
    if found is None or found.group("uid") != owner:
        return violated(
            f"status.virtualMachineRevisionName is {named!r}, not "
            f"revision-start-vm-{owner}-<generation>",
            *rows,
        )
    generation = int(found.group("gen"))
    if generation > int(annotation):
        return violated(
            f"{named} names generation {generation}, above the VMI's vm-generation {annotation}",
            *rows,
        )
    own = _start_revision_of(inc, owner, revisions)
    if revisions and named not in revisions and own is not None:
        return violated(
            f"the VMI names {named}, which does not exist, while {own} was created for its start",
            *rows,
        )
    return explained(f"{named}: the VM's generation at this start ({generation})", *rows)


def _owner_uid(body: dict[str, Any]) -> str | None:
    for ref in _meta(body).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") == "VirtualMachine":
            return str(ref.get("uid"))
    return None


def _start_revision_of(inc: Incarnation, owner: str, revisions: dict[str, Any]) -> str | None:
    """A start revision of the VM created in the seconds before this VMI: the one its start
    made (a slow VMI create can take the webhook's 10 s and more)."""
    created = inc.created.at if inc.created else None
    if created is None:
        return None
    for name, revision in revisions.items():
        found = START_REVISION.match(name)
        when = parse_time(str(_meta(revision.body).get("creationTimestamp") or ""))
        if found is None or found.group("uid") != owner or when is None:
            continue
        if timedelta(0) <= created - when.at <= REVISION_BEFORE_VMI:
            return name
    return None


def vmi_metadata(facts: Facts) -> Iterator[Finding]:
    yield from _missing_vmis(facts)
    for inc in _vmis(facts):
        assert inc.vmi is not None
        problems = _metadata_problems(inc, facts.timeline.scope.vm_uid)
        rows = _row_of(facts, inc)
        if problems:
            yield violated("; ".join(problems), *rows)
        else:
            yield explained("finalizers and owner reference as set by startVMI", *rows)


def generation_annotation(facts: Facts) -> Iterator[Finding]:
    """startVMI writes ``kubevirt.io/vm-generation`` (vm.go:1291; from v1.0.0, vm.go:974). A
    VMI missing from the evidence is KV-SV-02's open question, not asked twice."""
    for inc in _vmis(facts):
        assert inc.vmi is not None
        generation = (_meta(inc.vmi.body).get("annotations") or {}).get(GENERATION)
        rows = _row_of(facts, inc)
        if generation is None or not str(generation).isdigit():
            yield violated(
                f"annotation {GENERATION} missing or not a number ({generation!r})", *rows
            )
        else:
            yield explained(f"{GENERATION} {generation} as set by startVMI", *rows)


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
    if vm is None and _others_vmis(facts):
        return  # no VM, and its VMIs are another controller's: nothing startVMI made
    if vm is None:
        yield unverifiable("no VM object: the template's firmware UUID is unknown")
        return
    if not _whole(vm):
        yield unverifiable(
            "the VM object has no spec or no status (a VM the controller has seen has both): "
            "a truncated or edited object, whose template cannot be trusted to be whole"
        )
        return
    yield from _missing_vmis(facts)
    for inc in _vmis(facts):
        assert inc.vmi is not None
        rows = _row_of(facts, inc)
        if not isinstance((inc.vmi.body.get("spec") or {}).get("domain"), dict):
            yield unverifiable("the VMI object has no spec.domain: its firmware UUID is unknown")
            continue
        started_from = _template_at_start(facts, inc)
        if started_from is None:
            yield unverifiable(
                "the VM changed after this VMI started (metadata.generation past its "
                f"{GENERATION}) and the start revision is not in the evidence: the template "
                "it was started from is unknown",
                *rows,
            )
            continue
        if not isinstance(started_from.get("domain"), dict):
            yield unverifiable(
                "the VM template in the evidence has no spec.domain (every template has one: "
                "the object is truncated or edited): whether it set a firmware UUID is unknown",
                *rows,
            )
            continue
        actual = _firmware(inc.vmi.body.get("spec", {}))
        template = _firmware(started_from)
        expected = template or legacy_firmware_uuid(vm.name)
        source = "the VM template" if template else "the legacy uuid5 of the VM name"
        if actual == expected:
            yield explained(f"firmware UUID {actual} comes from {source}", *rows)
        else:
            yield violated(f"firmware UUID {actual} differs from {source} ({expected})", *rows)


def _template_at_start(facts: Facts, inc: Incarnation) -> dict[str, Any] | None:
    """The template spec the VMI was made from (vm.go:1933-1948 copies the UUID only then): the
    VM's own while its generation is still the VMI's ``kubevirt.io/vm-generation``, else the
    start revision's copy of the VM spec (vm.go:1840-1866)."""
    assert facts.vm is not None and inc.vmi is not None
    annotation = mapping_at(inc.vmi.body, "metadata", "annotations").get(GENERATION)
    generation = mapping_at(facts.vm.body, "metadata").get("generation")
    if annotation is not None and str(annotation) == str(generation):
        return dict(mapping_at(facts.vm.body, "spec", "template", "spec"))
    named = str(inc.status.get("virtualMachineRevisionName") or "")
    for revision in facts.timeline.scope.revisions:
        if revision.name == named:
            return dict(mapping_at(revision.body, "data", "spec", "template", "spec"))
    return None


def _firmware(spec: Any) -> str | None:
    if not isinstance(spec, dict):
        return None
    firmware = (spec.get("domain") or {}).get("firmware") or {}
    value = firmware.get("uuid") if isinstance(firmware, dict) else None
    return str(value) if value else None
