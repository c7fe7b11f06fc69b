"""Launcher-pod checks (the VMI controller, pkg/virt-controller/watch/vmi/ at v1.9.0).

The VMI controller creates a VMI's launcher pod only when its pod expectations are met — a
created pod it has not seen yet holds back the next sync (``needsSync``, vmi.go:334-338;
``ExpectCreations``, lifecycle.go:1077) — and no pod of the VMI exists, so a VMI has one pod of
its own at a time. A migration's target pod (label ``kubevirt.io/migrationJobUID``) is the
migration controller's and is not counted here (KV-MG-02).
"""

from __future__ import annotations

from collections.abc import Iterator

from kvtrace.evidence import KubeObject
from kvtrace.model.facts import Facts
from kvtrace.model.verdicts import Finding, explained, violated

CREATED_BY = "kubevirt.io/created-by"
MIGRATION_JOB = "kubevirt.io/migrationJobUID"
LIVE_PHASES = ("Pending", "Running")


def _labels(pod: KubeObject) -> dict[str, object]:
    labels = (pod.body.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _live(pod: KubeObject) -> bool:
    """Not being deleted and not finished at capture: a pod that still runs or will."""
    meta = pod.body.get("metadata") or {}
    phase = (pod.body.get("status") or {}).get("phase")
    return not meta.get("deletionTimestamp") and phase in LIVE_PHASES


def one_launcher_pod(facts: Facts) -> Iterator[Finding]:
    own: dict[str, list[KubeObject]] = {}
    for pod in facts.timeline.scope.pods:
        labels = _labels(pod)
        if labels.get(CREATED_BY) and MIGRATION_JOB not in labels:
            own.setdefault(str(labels[CREATED_BY]), []).append(pod)
    for uid, pods in own.items():
        rows = _pod_rows(facts, pods)
        live = [p for p in pods if _live(p)]
        if len(live) > 1:
            names = ", ".join(sorted(p.name for p in live))
            yield violated(
                f"VMI {uid[:8]} has {len(live)} launcher pods of its own alive at once ({names}): "
                "the VMI controller creates one only when none exists and its expectations are met",
                *rows,
            )
        elif pods:
            yield explained(f"VMI {uid[:8]}: one launcher pod at a time", *rows)


def _pod_rows(facts: Facts, pods: list[KubeObject]) -> list[int]:
    sources = {f"Pod/{p.name}" for p in pods}
    return [
        i
        for i, r in enumerate(facts.rows)
        if r.origin == "pod" and r.source in sources and r.what == "launcher pod created"
    ]
