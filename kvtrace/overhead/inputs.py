"""Gather the pod, its VMI and the KubeVirt CR from files or from opened evidence.

Errors are typed (:mod:`kvtrace.errors`) and name the object, where kvtrace looked and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvtrace.errors import InputError, NotFoundError
from kvtrace.evidence import KUBEVIRT, POD, VMI, Evidence
from kvtrace.overhead.locate import find_pod, find_vmi, pick_kubevirt
from kvtrace.overhead.pod import PodView
from parsers.manifests import load_manifests

Body = Mapping[str, Any]


@dataclass(frozen=True)
class VerifyInputs:
    pod: Body
    vmi: Body | None
    kubevirt: Body | None
    vmi_lookup: str  # how the VMI was found, or what was looked for
    origin: str
    bundle_version: str | None = None


def load_objects(path: str) -> list[dict[str, Any]]:
    """Every object in a YAML or JSON file (single object, List, or several documents)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from err
    loaded = load_manifests(data, path)
    if loaded.error is not None:
        raise InputError(f"{loaded.error} (expected a YAML or JSON object or List)")
    return loaded.objects


def _of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def from_files(
    pod_file: str, vmi_file: str | None, kubevirt_file: str | None, name: str | None
) -> VerifyInputs:
    objects = load_objects(pod_file)
    pods = _of_kind(objects, POD)
    pod = _choose_pod(pods, pod_file, name)
    vmis = _of_kind(load_objects(vmi_file), VMI) if vmi_file else _of_kind(objects, VMI)
    crs = _of_kind(load_objects(kubevirt_file), KUBEVIRT) if kubevirt_file else []
    vmi, how = find_vmi(PodView(pod), vmis)
    where = vmi_file or pod_file
    return VerifyInputs(pod, vmi, pick_kubevirt(crs), f"{how} in {where}", pod_file)


def _choose_pod(pods: list[dict[str, Any]], path: str, name: str | None) -> dict[str, Any]:
    if name:
        chosen = [p for p in pods if (p.get("metadata") or {}).get("name") == name]
        if not chosen:
            raise NotFoundError(f"no pod named {name} in {path} ({len(pods)} pod(s) there)")
        return chosen[0]
    launchers = [p for p in pods if PodView(p).is_launcher] or pods
    if len(launchers) != 1:
        what = "no Pod" if not launchers else f"{len(launchers)} launcher pods"
        raise InputError(f"{path} holds {what}: give one pod, or name it (POD argument)")
    return launchers[0]


def from_evidence(evidence: Evidence, namespace: str, name: str) -> VerifyInputs:
    pods = [o.body for o in evidence.of_kind(POD)]
    pod = find_pod(pods, namespace, name)
    if pod is None:
        raise NotFoundError(
            f"no pod {namespace}/{name} in {evidence.origin or 'the evidence'} "
            f"({len(pods)} pod(s) there; launcher pods are named virt-launcher-<vmi>-<suffix>)"
        )
    vmis = [o.body for o in evidence.of_kind(VMI)]
    vmi, how = find_vmi(PodView(pod), vmis)
    kubevirt = pick_kubevirt(o.body for o in evidence.of_kind(KUBEVIRT))
    origin = evidence.origin or evidence.layout
    return VerifyInputs(pod, vmi, kubevirt, how, origin, evidence.kubevirt_version)


def require_launcher(inputs: VerifyInputs) -> None:
    pod = PodView(inputs.pod)
    if not pod.is_launcher:
        label = pod.label("kubevirt.io")
        raise InputError(
            f"pod {pod.namespace}/{pod.name} is not a virt-launcher pod "
            f"(label kubevirt.io={label or '<unset>'}): nothing was checked; pass the "
            "virt-launcher-<vmi>-… pod of the VM"
        )
