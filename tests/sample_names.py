"""Names in the simulated samples, read from the samples themselves (the simulator draws them)."""

from __future__ import annotations

from functools import cache

import yaml

from tests.conftest import SAMPLES


@cache
def objects(sample: str, plural: str) -> list[dict]:
    text = (SAMPLES / sample / "objects" / f"{plural}.yaml").read_text(encoding="utf-8")
    return list(yaml.safe_load(text)["items"])


def leader_pod(sample: str = "always-restart") -> str:
    """The Lease holder: the replica that did the work."""
    (lease,) = objects(sample, "leases")
    return str(lease["spec"]["holderIdentity"])


def standby_pod(sample: str = "always-restart") -> str:
    controllers = sorted(
        p["metadata"]["name"]
        for p in objects(sample, "pods")
        if p["metadata"]["labels"].get("kubevirt.io") == "virt-controller"
    )
    return next(name for name in controllers if name != leader_pod(sample))


def launcher_pod(sample: str = "always-restart", vm: str = "testvm") -> str:
    return next(
        p["metadata"]["name"]
        for p in objects(sample, "pods")
        if p["metadata"]["labels"].get("vm.kubevirt.io/name") == vm
        and not p["metadata"].get("deletionTimestamp")
    )


def log_file(pod: str, instance: str = "current", sample_dir: str = "") -> str:
    return f"{sample_dir}logs/kubevirt/{pod}/virt-controller/{instance}.log"
