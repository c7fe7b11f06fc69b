"""Names in the simulated samples, read from the samples themselves (the simulator draws them)."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from types import ModuleType

import yaml

from kvsim.cluster import Capture
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


# What always-restart's testvm goes through, as the VM controller tells it (repeats told once):
# started, its guest crashes, the Failed VMI is stopped and deleted, then the next one started.
ALWAYS_RESTART_STORY = [
    "vm.start",
    "vm.created",
    "vm.stop",
    "vm.deleted",
    "vm.stop",
    "vm.start",
    "vm.created",
]


@cache
def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_samples"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def sample_capture(name: str) -> Capture:
    """Run the history of sample ``name`` again (sample-logs/make_samples.py), to vary it."""
    sample = next(s for s in _generator().SAMPLES if s.name == name)
    capture: Capture = sample.build()
    return capture
