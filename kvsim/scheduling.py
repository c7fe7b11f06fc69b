"""The kube-scheduler filters a virt-launcher pod meets in these clusters (NodeUnschedulable,
NodeAffinity for its node selector, InterPodAffinity for a migration target's anti-affinity),
and the condition it writes when no node passes them."""

from __future__ import annotations

from kvsim import timefmt
from kvsim.apiserver import ApiServer, Obj

JOB_LABEL = "kubevirt.io/migrationJobUID"
SELECTED = (  # the node-selector keys the simulated nodes are labelled for
    "kubevirt.io/",
    "cpu-model-migration.node.kubevirt.io/",
    "cpu-feature.node.kubevirt.io/",
    "cpu-vendor.node.kubevirt.io/",
)
REASONS = {
    "cordon": "node(s) were unschedulable",
    "selector": "node(s) didn't match Pod's node affinity/selector",
    "anti-affinity": "node(s) didn't match pod anti-affinity rules",
}


def is_migration_target(pod: Obj) -> bool:
    return JOB_LABEL in (pod["metadata"].get("labels") or {})


def misfit(api: ApiServer, pod: Obj, name: str) -> str | None:
    """Why ``pod`` cannot go to node ``name`` (None: it can)."""
    node = api.peek("Node", "", name)
    if node is None or node.get("spec", {}).get("unschedulable"):
        return "cordon"
    labels = node["metadata"].get("labels") or {}
    selector = pod["spec"].get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items() if k.startswith(SELECTED)):
        return "selector"
    if _repelled(api, pod, name):
        return "anti-affinity"
    return None


def _repelled(api: ApiServer, pod: Obj, node: str) -> bool:
    affinity = (pod["spec"].get("affinity") or {}).get("podAntiAffinity") or {}
    for term in affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        wanted = term["labelSelector"]["matchLabels"]
        for other in api.items("Pod"):
            labels = other["metadata"].get("labels") or {}
            if other["spec"].get("nodeName") != node or other.get("status", {}).get("phase") in (
                "Succeeded",
                "Failed",
            ):
                continue
            if all(labels.get(k) == v for k, v in wanted.items()):
                return True
    return False


def message(verdicts: list[str | None]) -> str:
    counts: dict[str, int] = {}
    for why in verdicts:
        if why is not None:
            counts[why] = counts.get(why, 0) + 1
    parts = sorted(f"{count} {REASONS[why]}" for why, count in counts.items())
    total = len(verdicts)
    return (
        f"0/{total} nodes are available: {', '.join(parts)}. preemption: 0/{total} nodes are "
        f"available: {total} Preemption is not helpful for scheduling."
    )


def unschedulable(pod: Obj, at: int, text: str) -> None:
    for condition in pod["status"].get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition.get("status") == "False":
            condition["message"] = text
            return
    conditions = [c for c in pod["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
    conditions.append(
        {
            "lastProbeTime": None,
            "lastTransitionTime": timefmt.seconds(at),
            "message": text,
            "reason": "Unschedulable",
            "status": "False",
            "type": "PodScheduled",
        }
    )
    pod["status"]["conditions"] = conditions
