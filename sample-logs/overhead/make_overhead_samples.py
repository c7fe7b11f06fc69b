#!/usr/bin/env python3
"""Write the verify-overhead samples: VMIs and the launcher pods v1.9.0 renders for them.

    python3 sample-logs/overhead/make_overhead_samples.py          # rewrite the files here
    python3 sample-logs/overhead/make_overhead_samples.py --check  # compare, exit 1 if stale

Each case is a VMI written here; its pod comes from kvsim, the simulator of v1.9.0's
virt-controller: ``kvsim.launcher.render`` (the template service) with the case's KubeVirt CR,
then kvsim's kubelet steps (scheduled on node-a, running, ready). The VMI's status mirrors the
pod as the VMI controller does (qosClass, memoryOverhead).

Each case also carries its overhead and pod resources summed by hand from the KubeVirt v1.9.0
source (the overhead terms of pkg/hypervisor/kvm/hypervisorbackend.go, the resources of
services/renderresources.go, the invariants of services/template.go). The generator stops if
kvsim's pod disagrees with any of them: two derivations from the source, neither of them
kvtrace's, so verifying these pods with ``kvtrace verify-overhead`` is a real cross-check.

``mutate`` then breaks one thing in a copy, for verify-overhead to catch.
Names and UIDs are invented. kvsim + PyYAML only.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from kvsim import launcher, timefmt
from kvsim.quantity import Quantity

HERE = Path(__file__).resolve().parent
MI = 1024 * 1024
GI = 1024 * MI
START = timefmt.from_iso("2026-12-01T10:00:00Z")
MINUTE = 60_000_000  # µs
FIXED = 25 + 100 + 25 + 40 + 30  # Mi: monitor, launcher, virtlogd, virtqemud, QEMU

# name, vCPUs, VMI memory fields, extras; then the hand-summed figures the pod must show:
# overhead bytes, compute memory request (and limit), CPU request (and limit), hugepages,
# QoS class. Page tables: ⌊⌈R/1000⌉·1000/512⌋ of requests.memory R (2Gi → 4Mi exactly).
CASES: list[dict[str, Any]] = [
    {  # reference case: page tables 4 + fixed 220 + 2 vCPU 16 + IOThread 8 + video 32 = 280Mi
        "name": "vm-2cpu-2gi",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "overhead": (4 + FIXED + 16 + 8 + 32) * MI,
        "request": "2328Mi",
        "cpu": "200m",
    },
    {  # reference case: 16 + 220 + 64 + 8 + 32 = 340Mi
        "name": "vm-8cpu-8gi",
        "vcpus": 8,
        "memory": {"requests": "8Gi"},
        "overhead": (16 + FIXED + 64 + 8 + 32) * MI,
        "request": "8532Mi",
        "cpu": "800m",
    },
    {  # only memory.guest: no page tables (hypervisorbackend.go:71 reads only requests.memory)
        # → 276Mi; base request = guest
        "name": "vm-guest-only",
        "vcpus": 2,
        "memory": {"guest": "2Gi"},
        "overhead": (0 + FIXED + 16 + 8 + 32) * MI,
        "request": "2324Mi",
        "cpu": "200m",
    },
    {  # dedicated: page tables of 4Gi are 8388609 bytes (not 8Mi: kB round-up), then
        # 220 + 32 + 8 + 32 + 100 = 392Mi; CPU req = lim = 4; memory limit = request
        "name": "vm-dedicated",
        "vcpus": 4,
        "memory": {"requests": "4Gi"},
        "dedicated": True,
        "overhead": 8388609 + (FIXED + 32 + 8 + 32 + 100) * MI,
        "request": str(4 * GI + 8388609 + 392 * MI),
        "limit": str(4 * GI + 8388609 + 392 * MI),
        "cpu": "4",
        "cpu_limit": "4",
        "qos": "Guaranteed",
    },
    {  # QoS Guaranteed (cpu req = lim = 2, mem req = lim = 2Gi): 280 + 100 = 380Mi; the VMI's
        # CPU wins over the calculated 200m
        "name": "vm-qos",
        "vcpus": 2,
        "memory": {"requests": "2Gi", "limits": "2Gi"},
        "cpu_resources": "2",
        "overhead": (4 + FIXED + 16 + 8 + 32 + 100) * MI,
        "request": "2428Mi",
        "limit": "2428Mi",
        "cpu": "2",
        "cpu_limit": "2",
        "qos": "Guaranteed",
    },
    {  # passt binding: 280Mi + 250Mi after the ratio = 530Mi
        "name": "vm-passt",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "passt": True,
        "overhead": (280 + 250) * MI,
        "request": "2578Mi",
        "cpu": "200m",
    },
    {  # hugepages 2Mi: guest memory in hugepages-2Mi, memory request = overhead only
        "name": "vm-hugepages",
        "vcpus": 2,
        "memory": {"requests": "2Gi", "guest": "2Gi"},
        "hugepages": "2Mi",
        "overhead": 280 * MI,
        "request": str(280 * MI),
        "cpu": "200m",
    },
    {  # KubeVirt CR ratio "1.5": 280Mi = 293601280 → ⌈/1000⌉ = 293602 kB × 0.5 = 146801 kB
        # more = 440402280 bytes; request as raw bytes
        "name": "vm-ratio",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "ratio": "1.5",
        "overhead": 280 * MI + 146801 * 1000,
        "request": str(2 * GI + 440402280),
        "cpu": "200m",
    },
]

# file name → (clean case, check key that must fail, mutation)
MUTATIONS: dict[str, tuple[str, str, str]] = {
    "annotation-pod.yaml": ("vm-2cpu-2gi", "annotation", "annotation 1 byte high"),
    "memory-request-pod.yaml": ("vm-2cpu-2gi", "memoryRequest", "request 2327Mi"),
    "memory-limit-pod.yaml": ("vm-dedicated", "memoryLimit", "limit 4496Mi (8Mi page tables)"),
    "hugepages-pod.yaml": ("vm-hugepages", "hugepagesRequests", "hugepages-2Mi request 1Gi"),
    "cpu-request-pod.yaml": ("vm-8cpu-8gi", "cpuRequest", "cpu request 100m"),
    "cpu-limit-pod.yaml": ("vm-dedicated", "cpuLimit", "cpu limit 5"),
    "grace-argv-pod.yaml": ("vm-2cpu-2gi", "graceArgv", "--grace-period-seconds 30"),
    "grace-pod-pod.yaml": ("vm-2cpu-2gi", "gracePod", "terminationGracePeriodSeconds 45"),
    "qemu-timeout-pod.yaml": ("vm-2cpu-2gi", "qemuTimeout", "'--qemu-timeout Ns' as one"),
    "console-log-pod.yaml": ("vm-2cpu-2gi", "consoleLog", "no restartPolicy"),
    "console-resources-pod.yaml": ("vm-qos", "consoleLogResources", "requests 5m/35M"),
    "readiness-gate-pod.yaml": ("vm-2cpu-2gi", "readinessGate", "no readiness gate"),
    "devices-pod.yaml": ("vm-passt", "devices", "no vhost-net"),
    "run-as-user-pod.yaml": ("vm-guest-only", "runAsUserPod", "pod runAsUser 0"),
    "vmi-status-vmi.yaml": ("vm-2cpu-2gi", "vmiStatus", "status memoryOverhead 276Mi"),
}


def uid(index: int) -> str:
    return f"5e0a1c2d-0000-4000-8000-{index:012d}"


def vmi_object(case: dict[str, Any], index: int) -> dict[str, Any]:
    """The VMI as admitted (the webhook set status.runtimeUser), before virt-controller saw it."""
    mem = case["memory"]
    resources: dict[str, Any] = {}
    if "requests" in mem:
        resources["requests"] = {"memory": mem["requests"]}
    if "limits" in mem:
        resources["limits"] = {"memory": mem["limits"]}
    if "cpu_resources" in case:
        resources["requests"]["cpu"] = resources["limits"]["cpu"] = case["cpu_resources"]
    cpu: dict[str, Any] = {
        "cores": 1,
        "sockets": case["vcpus"],
        "threads": 1,
        "model": "host-model",
    }
    if case.get("dedicated"):
        cpu["dedicatedCpuPlacement"] = True
    memory: dict[str, Any] = {"guest": mem.get("guest", mem.get("requests"))}
    if "hugepages" in case:
        memory["hugepages"] = {"pageSize": case["hugepages"]}
    iface = (
        {"name": "default", "passtBinding": {}}
        if case.get("passt")
        else {"name": "default", "masquerade": {}}
    )
    domain: dict[str, Any] = {
        "cpu": cpu,
        "memory": memory,
        "machine": {"type": "q35"},
        "devices": {
            "disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}}],
            "interfaces": [iface],
        },
    }
    if resources:
        domain["resources"] = resources
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": case["name"],
            "namespace": "default",
            "uid": uid(index),
            "annotations": {"kubevirt.io/vm-generation": "1"},
            "labels": {"kubevirt.io/nodeName": "node-a"},
        },
        "spec": {
            "architecture": "amd64",
            "domain": domain,
            "networks": [{"name": "default", "pod": {}}],
            "volumes": [
                {"name": "rootdisk", "persistentVolumeClaim": {"claimName": f"{case['name']}-disk"}}
            ],
        },
        "status": {"runtimeUser": 107},
    }


def launcher_pod(
    case: dict[str, Any], index: int, vmi: dict[str, Any], kubevirt: dict[str, Any]
) -> dict[str, Any]:
    """kvsim renders the pod, schedules it on node-a, runs it and makes it ready."""
    rng = random.Random(f"overhead/{case['name']}")
    pod = launcher.render(vmi, rng, kubevirt)
    created = START + index * MINUTE
    launcher.scheduled(pod, "node-a", created + 1_000_000)
    launcher.running(pod, created + 4_000_000, f"10.244.1.{10 + index}", "192.168.122.11", rng)
    launcher.ready(pod, created + 9_000_000)
    return pod


def running_vmi(vmi: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    """The VMI once Running: the QoS class copied from the pod (watch/vmi/lifecycle.go:377-380)
    and the overhead annotation as a BinarySI quantity (:1165-1183)."""
    overhead = int(pod["metadata"]["annotations"]["kubevirt.io/memory-overhead-bytes"])
    vmi["status"] = {
        "phase": "Running",
        "runtimeUser": vmi["status"]["runtimeUser"],
        "qosClass": pod["status"]["qosClass"],
        "memory": {
            "guestAtBoot": vmi["spec"]["domain"]["memory"]["guest"],
            "memoryOverhead": Quantity.of(overhead, binary=True).text(),
        },
    }
    return vmi


_QUANTITY = re.compile(r"(\d+)(m|k|M|G|Ki|Mi|Gi|)")
_UNITS = {"m": Fraction(1, 1000), "": Fraction(1), "k": Fraction(10**3), "M": Fraction(10**6)}
_UNITS.update({"G": Fraction(10**9), "Ki": Fraction(1024), "Mi": Fraction(MI), "Gi": Fraction(GI)})


def value(text: object) -> Fraction | None:
    """A quantity's value, read here without kvsim's parser (whole numbers and one suffix)."""
    if text is None:
        return None
    match = _QUANTITY.fullmatch(str(text))
    if match is None:
        raise SystemExit(f"cross-check: cannot read the quantity {text!r}")
    return int(match[1]) * _UNITS[match[2]]


def cross_check(case: dict[str, Any], pod: dict[str, Any]) -> None:
    """kvsim's pod against the figures summed by hand; any difference stops the generator."""
    spec = pod["spec"]
    compute = spec["containers"][0]
    requests, limits = compute["resources"]["requests"], compute["resources"]["limits"]
    console = spec["initContainers"][0]["resources"]
    guaranteed = case.get("qos") == "Guaranteed"
    page = f"hugepages-{case['hugepages']}" if "hugepages" in case else None
    hugepages = value(case["memory"]["guest"]) if page else None
    argv = compute["command"]
    wanted: list[tuple[str, object, object]] = [
        (
            "annotation kubevirt.io/memory-overhead-bytes",
            int(pod["metadata"]["annotations"]["kubevirt.io/memory-overhead-bytes"]),
            case["overhead"],
        ),
        ("requests.memory", value(requests.get("memory")), value(case["request"])),
        ("limits.memory", value(limits.get("memory")), value(case.get("limit"))),
        ("requests.cpu", value(requests.get("cpu")), value(case["cpu"])),
        ("limits.cpu", value(limits.get("cpu")), value(case.get("cpu_limit"))),
        ("requests.ephemeral-storage", value(requests.get("ephemeral-storage")), 50 * 10**6),
        ("qosClass", pod["status"]["qosClass"], case.get("qos", "Burstable")),
        ("--grace-period-seconds", argv[argv.index("--grace-period-seconds") + 1], "45"),
        ("terminationGracePeriodSeconds", spec["terminationGracePeriodSeconds"], 60),
        (
            "console requests.cpu",
            value(console["requests"]["cpu"]),
            value("15m" if guaranteed else "5m"),
        ),
        (
            "console requests.memory",
            value(console["requests"]["memory"]),
            value("60M" if guaranteed else "35M"),
        ),
        ("console limits", console["limits"], {"cpu": "15m", "memory": "60M"}),
    ]
    for device in ("kvm", "tun", "vhost-net"):
        name = f"devices.kubevirt.io/{device}"
        wanted.append((f"limits.{name}", limits.get(name), "1"))
    if page is not None:
        wanted.append((f"requests.{page}", value(requests.get(page)), hugepages))
        wanted.append((f"limits.{page}", value(limits.get(page)), hugepages))
    wrong = [f"{what}: kvsim {got}, by hand {hand}" for what, got, hand in wanted if got != hand]
    if wrong:
        raise SystemExit(
            f"{case['name']}: kvsim and the hand sums disagree:\n  " + "\n  ".join(wrong)
        )


def kubevirt_cr(ratio: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {"developerConfiguration": {}}
    if ratio is not None:
        config["additionalGuestMemoryOverheadRatio"] = ratio
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": config},
        "status": {"observedKubeVirtVersion": "v1.9.0", "defaultArchitecture": "amd64"},
    }


def mutate(file: str, pod: dict[str, Any], vmi: dict[str, Any]) -> dict[str, Any]:
    """Break exactly one thing; returns the object to write (pod or VMI)."""
    compute = pod["spec"]["containers"][0]
    argv = compute["command"]
    console = pod["spec"]["initContainers"][0]
    res = compute["resources"]
    annotations = pod["metadata"]["annotations"]
    overhead = int(annotations["kubevirt.io/memory-overhead-bytes"])
    edits = {
        "annotation-pod.yaml": lambda: annotations.update(
            {"kubevirt.io/memory-overhead-bytes": str(overhead + 1)}
        ),
        "memory-request-pod.yaml": lambda: res["requests"].update({"memory": "2327Mi"}),
        "memory-limit-pod.yaml": lambda: res["limits"].update({"memory": "4496Mi"}),
        "hugepages-pod.yaml": lambda: res["requests"].update({"hugepages-2Mi": "1Gi"}),
        "cpu-request-pod.yaml": lambda: res["requests"].update({"cpu": "100m"}),
        "cpu-limit-pod.yaml": lambda: res["limits"].update({"cpu": "5"}),
        "grace-argv-pod.yaml": lambda: argv.__setitem__(
            argv.index("--grace-period-seconds") + 1, "30"
        ),
        "grace-pod-pod.yaml": lambda: pod["spec"].update({"terminationGracePeriodSeconds": 45}),
        "qemu-timeout-pod.yaml": lambda: argv.__setitem__(
            slice(1, 3), [f"--qemu-timeout {argv[2]}"]
        ),
        "console-log-pod.yaml": lambda: console.pop("restartPolicy"),
        "console-resources-pod.yaml": lambda: console["resources"].update(
            {"requests": {"cpu": "5m", "memory": "35M"}}
        ),
        "readiness-gate-pod.yaml": lambda: pod["spec"].pop("readinessGates"),
        "devices-pod.yaml": lambda: res["limits"].pop("devices.kubevirt.io/vhost-net"),
        "run-as-user-pod.yaml": lambda: pod["spec"]["securityContext"].update({"runAsUser": 0}),
        "vmi-status-vmi.yaml": lambda: vmi["status"]["memory"].update({"memoryOverhead": "276Mi"}),
    }
    edits[file]()
    return vmi if file.endswith("-vmi.yaml") else pod


def dump(obj: Any, sort_keys: bool = False) -> str:
    return yaml.safe_dump(obj, sort_keys=sort_keys, width=100)


def generate(out: Path) -> None:
    crs = {None: kubevirt_cr(None), "1.5": kubevirt_cr("1.5")}
    objects: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for index, case in enumerate(CASES, start=1):
        vmi = vmi_object(case, index)
        pod = launcher_pod(case, index, copy.deepcopy(vmi), crs[case.get("ratio")])
        cross_check(case, pod)
        vmi = running_vmi(vmi, pod)
        objects[case["name"]] = (pod, vmi)
        (out / f"{case['name']}-pod.yaml").write_text(dump(pod, sort_keys=True))
        (out / f"{case['name']}-vmi.yaml").write_text(dump(vmi))
    (out / "kubevirt.yaml").write_text(dump(crs[None]))
    (out / "kubevirt-ratio.yaml").write_text(dump(crs["1.5"]))
    (out / "mutated").mkdir(exist_ok=True)
    index_rows = {}
    for file, (base, check, what) in MUTATIONS.items():
        pod, vmi = (copy.deepcopy(o) for o in objects[base])
        broken = mutate(file, pod, vmi)
        (out / "mutated" / file).write_text(dump(broken, sort_keys=broken is pod))
        index_rows[file] = {"case": base, "fails": check, "mutation": what}
    (out / "mutated" / "index.json").write_text(json.dumps(index_rows, indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    if not parser.parse_args().check:
        generate(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        stale = [
            str(p.relative_to(tmp))
            for p in sorted(Path(tmp).rglob("*"))
            if p.is_file()
            and (
                not (HERE / p.relative_to(tmp)).is_file()
                or (HERE / p.relative_to(tmp)).read_bytes() != p.read_bytes()
            )
        ]
    print("out of date:", *stale, sep="\n  ") if stale else print("samples are up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
