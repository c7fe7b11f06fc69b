"""Find the launcher pod, its VMI and the KubeVirt CR among objects.

The pod → VMI links, strongest first: label ``kubevirt.io/created-by`` (the VMI UID), the
controller ownerReference's uid, then the ``kubevirt.io/domain`` annotation (the VMI name) in the
pod's namespace (v1.9.0 services/template.go: labels 1726-1740, owner 722-724, annotation
622-633). ``vm.kubevirt.io/name`` is the pod's hostname (template.go:697), not necessarily the VM
name, and is not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kvtrace.overhead.pod import CREATED_BY, DOMAIN_ANNOTATION, PodView
from kvtrace.overhead.vmi_spec import as_list, dig

Body = Mapping[str, Any]


def _meta(body: Body, key: str) -> str | None:
    value = dig(body, "metadata", key)
    return None if value is None else str(value)


def vmi_links(pod: PodView) -> list[tuple[str, str]]:
    """(how, value) pairs to look the VMI up by, strongest first."""
    links: list[tuple[str, str]] = []
    created_by = pod.label(CREATED_BY)
    if created_by:
        links.append(("uid", created_by))
    for owner in as_list(dig(pod.body, "metadata", "ownerReferences")):
        if isinstance(owner, Mapping) and owner.get("controller") and owner.get("uid"):
            links.append(("uid", str(owner["uid"])))
    domain = pod.annotation(DOMAIN_ANNOTATION)
    if domain:
        links.append(("name", domain))
    return links


def find_vmi(pod: PodView, vmis: Iterable[Body]) -> tuple[Body | None, str]:
    """The pod's VMI and how it was found, or None and what was looked for."""
    candidates = list(vmis)
    links = vmi_links(pod)
    for how, value in links:
        for vmi in candidates:
            if how == "uid" and _meta(vmi, "uid") == value:
                return vmi, f"uid {value}"
            same_ns = (_meta(vmi, "namespace") or "default") == pod.namespace
            if how == "name" and _meta(vmi, "name") == value and same_ns:
                return vmi, f"kubevirt.io/domain {pod.namespace}/{value}"
    looked = ", ".join(f"{how} {value}" for how, value in links) or "no links on the pod"
    return None, f"looked for {looked} among {len(candidates)} VMI(s)"


def find_pod(pods: Iterable[Body], namespace: str, name: str) -> Body | None:
    for pod in pods:
        if _meta(pod, "name") == name and (_meta(pod, "namespace") or "default") == namespace:
            return pod
    return None


def pick_kubevirt(crs: Iterable[Body]) -> Body | None:
    """The KubeVirt CR (there is one per cluster); the first if a bundle holds several."""
    return next(iter(crs), None)
