#!/usr/bin/env python3
"""Write the verify-overhead samples: VMIs and the launcher pods v1.9.0 renders for them.

    python3 sample-logs/overhead/make_overhead_samples.py          # rewrite the files here
    python3 sample-logs/overhead/make_overhead_samples.py --check  # compare, exit 1 if stale

Deliberately independent of kvtrace: every pod number below is written out by hand from the
KubeVirt v1.9.0 source (the overhead terms of pkg/hypervisor/kvm/hypervisorbackend.go, the
resources of services/renderresources.go, the invariants of services/template.go), so verifying
these pods with ``kvtrace verify-overhead`` is a real cross-check, not kvtrace agreeing with
itself.
Names and UIDs are invented. Standard library + PyYAML only.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
IMAGE = "quay.io/kubevirt/virt-launcher:v1.9.0"
MI = 1024 * 1024
GI = 1024 * MI

# name, vCPUs, VMI memory fields, extras, overhead bytes (summed by hand), pod resources.
CASES: list[dict[str, Any]] = [
    {  # reference case: 4 + 220 + 16 + 8 + 32 = 280Mi
        "name": "vm-2cpu-2gi",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "overhead": 280 * MI,
        "request": "2328Mi",
        "cpu": "200m",
    },
    {  # reference case: 16 + 220 + 64 + 8 + 32 = 340Mi
        "name": "vm-8cpu-8gi",
        "vcpus": 8,
        "memory": {"requests": "8Gi"},
        "overhead": 340 * MI,
        "request": "8532Mi",
        "cpu": "800m",
    },
    {  # only memory.guest: no page tables (hypervisorbackend.go:71 reads only requests.memory)
        # → 276Mi; base request = guest
        "name": "vm-guest-only",
        "vcpus": 2,
        "memory": {"guest": "2Gi"},
        "overhead": 276 * MI,
        "request": "2324Mi",
        "cpu": "200m",
    },
    {  # dedicated: page tables of 4Gi are 8388609 bytes (not 8Mi: kB round-up), then
        # 220 + 32 + 8 + 32 + 100 = 392Mi; CPU req = lim = 4; memory limit = request
        "name": "vm-dedicated",
        "vcpus": 4,
        "memory": {"requests": "4Gi"},
        "dedicated": True,
        "overhead": 8388609 + 392 * MI,
        "request": str(4 * GI + 8388609 + 392 * MI),
        "limit": str(4 * GI + 8388609 + 392 * MI),
        "cpu": "4",
        "cpu_limit": "4",
    },
    {  # QoS Guaranteed (cpu req = lim = 2, mem req = lim = 2Gi): 380Mi; the VMI's CPU wins
        "name": "vm-qos",
        "vcpus": 2,
        "memory": {"requests": "2Gi", "limits": "2Gi"},
        "cpu_resources": "2",
        "overhead": 380 * MI,
        "request": "2428Mi",
        "limit": "2428Mi",
        "cpu": "2",
        "cpu_limit": "2",
    },
    {  # passt binding: 280Mi + 250Mi after the ratio = 530Mi
        "name": "vm-passt",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "passt": True,
        "overhead": 530 * MI,
        "request": "2578Mi",
        "cpu": "200m",
    },
    {  # hugepages 2Mi: guest memory in hugepages-2Mi, memory request = overhead only
        "name": "vm-hugepages",
        "vcpus": 2,
        "memory": {"requests": "2Gi", "guest": "2Gi"},
        "hugepages": "2Mi",
        "overhead": 280 * MI,
        "request": "280Mi",
        "cpu": "200m",
    },
    {  # KubeVirt CR ratio "1.5": 280Mi → 440402280 bytes (kB rounding); request as raw bytes
        "name": "vm-ratio",
        "vcpus": 2,
        "memory": {"requests": "2Gi"},
        "ratio": "1.5",
        "overhead": 440402280,
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
    "qemu-timeout-pod.yaml": ("vm-2cpu-2gi", "qemuTimeout", "'--qemu-timeout 301s' as one"),
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
        "status": {
            "phase": "Running",
            "runtimeUser": 107,
            "qosClass": "Burstable",
            "memory": {"guestAtBoot": memory["guest"], "memoryOverhead": binary(case["overhead"])},
        },
    }


def binary(value: int) -> str:
    """A byte count as Kubernetes prints a BinarySI quantity."""
    for suffix, size in (("Gi", GI), ("Mi", MI), ("Ki", 1024)):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)


def compute_container(case: dict[str, Any], index: int) -> dict[str, Any]:
    argv = [
        "/usr/bin/virt-launcher-monitor",
        "--qemu-timeout",
        f"{240 + (index * 37) % 120}s",
        "--name",
        case["name"],
        "--uid",
        uid(index),
        "--namespace",
        "default",
        "--kubevirt-share-dir",
        "/var/run/kubevirt",
        "--ephemeral-disk-dir",
        "/var/run/kubevirt-ephemeral-disks",
        "--container-disk-dir",
        "/var/run/kubevirt/container-disks",
        "--grace-period-seconds",
        "45",
        "--hook-sidecars",
        "0",
        "--ovmf-path",
        "/usr/share/edk2/ovmf",
        "--disk-memory-limit",
        "2097152000",
        "--hypervisor",
        "kvm",
        "--run-as-nonroot",
        "--image-volume",
        "--libvirt-hook-server-and-client",
        "--upgrade-ordinal-ifaces",
    ]
    devices = {f"devices.kubevirt.io/{d}": "1" for d in ("kvm", "tun", "vhost-net")}
    requests: dict[str, Any] = {
        "cpu": case["cpu"],
        "ephemeral-storage": "50M",
        "memory": case["request"],
        **devices,
    }
    limits: dict[str, Any] = dict(devices)
    if "limit" in case:
        limits["memory"] = case["limit"]
    if "cpu_limit" in case:
        limits["cpu"] = case["cpu_limit"]
    if "hugepages" in case:
        requests["hugepages-2Mi"] = limits["hugepages-2Mi"] = case["memory"]["guest"]
    return {
        "name": "compute",
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": argv,
        "resources": {"requests": requests, "limits": limits},
        "securityContext": {
            "runAsUser": 107,
            "runAsGroup": 107,
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
        },
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }


def console_container(case: dict[str, Any], index: int) -> dict[str, Any]:
    guaranteed = case.get("dedicated") or "cpu_resources" in case
    requests = {"cpu": "15m", "memory": "60M"} if guaranteed else {"cpu": "5m", "memory": "35M"}
    return {
        "name": "guest-console-log",
        "image": IMAGE,
        "command": ["/usr/bin/virt-tail"],
        "args": ["--logfile", f"/var/run/kubevirt-private/{uid(index)}/virt-serial0-log"],
        "env": [{"name": "VIRT_LAUNCHER_LOG_VERBOSITY", "value": "2"}],
        "restartPolicy": "Always",
        "resources": {"requests": requests, "limits": {"cpu": "15m", "memory": "60M"}},
        "securityContext": {
            "runAsUser": 107,
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "private", "mountPath": "/var/run/kubevirt-private", "readOnly": True}
        ],
    }


def pod_object(case: dict[str, Any], index: int) -> dict[str, Any]:
    name = case["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"virt-launcher-{name}-{'abcdefgh'[index % 8]}x{index}z",
            "namespace": "default",
            "generateName": f"virt-launcher-{name}-",
            "labels": {
                "kubevirt.io": "virt-launcher",
                "kubevirt.io/created-by": uid(index),
                "vm.kubevirt.io/name": name,
                "vmi.kubevirt.io/id": name,
            },
            "annotations": {
                "kubevirt.io/domain": name,
                "kubectl.kubernetes.io/default-container": "compute",
                "kubevirt.io/memory-overhead-bytes": str(case["overhead"]),
                "kubevirt.io/migrationTransportUnix": "true",
                "kubevirt.io/vm-generation": "1",
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachineInstance",
                    "name": name,
                    "uid": uid(index),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [compute_container(case, index)],
            "initContainers": [console_container(case, index)],
            "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
            "restartPolicy": "Never",
            "enableServiceLinks": False,
            "securityContext": {
                "fsGroup": 107,
                "runAsGroup": 107,
                "runAsNonRoot": True,
                "runAsUser": 107,
            },
            "terminationGracePeriodSeconds": 60,
            "nodeSelector": {"kubevirt.io/schedulable": "true", "kubernetes.io/arch": "amd64"},
        },
    }


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
    edits = {
        "annotation-pod.yaml": lambda: pod["metadata"]["annotations"].update(
            {"kubevirt.io/memory-overhead-bytes": str(280 * MI + 1)}
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


def dump(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, width=100)


def generate(out: Path) -> None:
    objects: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for index, case in enumerate(CASES, start=1):
        pod, vmi = pod_object(case, index), vmi_object(case, index)
        objects[case["name"]] = (pod, vmi)
        (out / f"{case['name']}-pod.yaml").write_text(dump(pod))
        (out / f"{case['name']}-vmi.yaml").write_text(dump(vmi))
    (out / "kubevirt.yaml").write_text(dump(kubevirt_cr(None)))
    (out / "kubevirt-ratio.yaml").write_text(dump(kubevirt_cr("1.5")))
    (out / "mutated").mkdir(exist_ok=True)
    index_rows = {}
    for file, (base, check, what) in MUTATIONS.items():
        pod, vmi = (copy.deepcopy(o) for o in objects[base])
        (out / "mutated" / file).write_text(dump(mutate(file, pod, vmi)))
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
            if p.is_file() and (HERE / p.relative_to(tmp)).read_bytes() != p.read_bytes()
        ]
    print("out of date:", *stale, sep="\n  ") if stale else print("samples are up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
