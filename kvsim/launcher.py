"""The virt-launcher pod as v1.9.0's template service renders it for the VMIs kvsim creates
(pkg/virt-controller/services/template.go:395-797), and its status as the kubelet reports it.

The compute container asks for the guest memory plus the memory overhead of
``GetMemoryOverhead`` (pkg/hypervisor/kvm/hypervisorbackend.go:37-178 at v1.9.0) for these VMIs
(amd64, no probes, devices or extras): page tables ``floor(ceil(R/1000)·1000/512)`` bytes for a
memory request R, 25+100+25+40+30 Mi fixed, 8 Mi per vCPU, 8 Mi for the IOThread, 32 Mi of video
RAM; and ``vCPUs × 1000m / 10`` CPU (the default cpuAllocationRatio).
"""

from __future__ import annotations

import random
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import Obj

IMAGE = "quay.io/kubevirt/virt-launcher:v1.9.0"
MI = 1024 * 1024
FIXED_OVERHEAD = (25 + 100 + 25 + 40 + 30) * MI
UNITS = {"Ki": 1024, "Mi": MI, "Gi": 1024 * MI, "Ti": 1024**3 * MI, "": 1}
DEVICES = {
    "devices.kubevirt.io/kvm": "1",
    "devices.kubevirt.io/tun": "1",
    "devices.kubevirt.io/vhost-net": "1",
}
POD_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.String


def quantity_bytes(text: str) -> int:
    for suffix in ("Ki", "Mi", "Gi", "Ti"):
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * UNITS[suffix]
    return int(text)


def vcpus(vmi: Obj) -> int:
    cpu = vmi["spec"]["domain"].get("cpu") or {}
    count = 1
    for field in ("cores", "sockets", "threads"):
        count *= int(cpu.get(field) or 1)
    return max(count, 1)


def memory_overhead(vmi: Obj) -> int:
    request = vmi["spec"]["domain"].get("resources", {}).get("requests", {}).get("memory")
    requested = quantity_bytes(request) if request else 0
    page_tables = -(-requested // 1000) * 1000 // 512
    return page_tables + FIXED_OVERHEAD + 8 * MI * vcpus(vmi) + 8 * MI + 32 * MI


def _mi(count: int) -> str:
    return f"{count // MI}Mi" if count % MI == 0 else str(count)


def render(vmi: Obj, rng: random.Random) -> Obj:
    """The pod as created (the API server adds uid, times and status)."""
    meta, spec = vmi["metadata"], vmi["spec"]
    name, namespace, uid = meta["name"], meta["namespace"], meta["uid"]
    guest = quantity_bytes(spec["domain"]["memory"]["guest"])
    overhead = memory_overhead(vmi)
    grace = int(spec.get("terminationGracePeriodSeconds") or 30)
    labels = dict(meta.get("labels") or {})
    labels.update(
        {
            "kubevirt.io": "virt-launcher",
            "kubevirt.io/created-by": uid,
            "vm.kubevirt.io/name": name,
            "vmi.kubevirt.io/id": name,
        }
    )
    suffix = "".join(rng.choice(POD_NAME_ALPHABET) for _ in range(5))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": _annotations(name, namespace, overhead, meta),
            "generateName": f"virt-launcher-{name}-",
            "labels": labels,
            "name": f"virt-launcher-{name}-{suffix}",
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": "kubevirt.io/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "VirtualMachineInstance",
                    "name": name,
                    "uid": uid,
                }
            ],
        },
        "spec": _pod_spec(vmi, guest + overhead, grace, rng),
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def _annotations(name: str, namespace: str, overhead: int, meta: dict[str, Any]) -> dict[str, str]:
    freeze = (
        f'["/usr/bin/virt-freezer", "--freeze", "--name", "{name}", "--namespace", "{namespace}"]'
    )
    unfreeze = (
        f'["/usr/bin/virt-freezer", "--unfreeze", "--name", "{name}", "--namespace", "{namespace}"]'
    )
    return {
        "descheduler.alpha.kubernetes.io/request-evict-only": "",
        "kubectl.kubernetes.io/default-container": "compute",
        "kubevirt.io/domain": name,
        "kubevirt.io/memory-overhead-bytes": str(overhead),
        "kubevirt.io/migrationTransportUnix": "true",
        "kubevirt.io/vm-generation": (meta.get("annotations") or {}).get(
            "kubevirt.io/vm-generation", "1"
        ),
        "post.hook.backup.velero.io/command": unfreeze,
        "post.hook.backup.velero.io/container": "compute",
        "pre.hook.backup.velero.io/command": freeze,
        "pre.hook.backup.velero.io/container": "compute",
        "pre.hook.backup.velero.io/timeout": "60s",
    }


def _command(vmi: Obj, grace: int, rng: random.Random) -> list[str]:
    meta = vmi["metadata"]
    return [
        "/usr/bin/virt-launcher-monitor",
        "--qemu-timeout",
        f"{rng.randint(240, 299)}s",
        "--name",
        meta["name"],
        "--uid",
        meta["uid"],
        "--namespace",
        meta["namespace"],
        "--kubevirt-share-dir",
        "/var/run/kubevirt",
        "--ephemeral-disk-dir",
        "/var/run/kubevirt-ephemeral-disks",
        "--container-disk-dir",
        "/var/run/kubevirt/container-disks",
        "--grace-period-seconds",
        str(grace + 15),
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


def _pod_spec(vmi: Obj, memory: int, grace: int, rng: random.Random) -> dict[str, Any]:
    meta, spec = vmi["metadata"], vmi["spec"]
    claims = [v for v in spec.get("volumes", []) if "persistentVolumeClaim" in v]
    compute = {
        "command": _command(vmi, grace, rng),
        "env": [
            {"name": "XDG_CACHE_HOME", "value": "/var/run/kubevirt-private"},
            {"name": "XDG_CONFIG_HOME", "value": "/var/run/kubevirt-private"},
            {"name": "XDG_RUNTIME_DIR", "value": "/var/run"},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
        ],
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "name": "compute",
        "resources": {
            "limits": dict(DEVICES),
            "requests": {
                "cpu": f"{vcpus(vmi) * 100}m",
                **DEVICES,
                "ephemeral-storage": "50M",
                "memory": _mi(memory),
            },
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
            "privileged": False,
            "runAsGroup": 107,
            "runAsNonRoot": True,
            "runAsUser": 107,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeDevices": [{"devicePath": f"/dev/{v['name']}", "name": v["name"]} for v in claims],
        "volumeMounts": [
            {"mountPath": "/var/run/kubevirt-private", "name": "private"},
            {"mountPath": "/var/run/kubevirt", "name": "public"},
            {"mountPath": "/var/run/kubevirt-ephemeral-disks", "name": "ephemeral-disks"},
            {"mountPath": "/var/run/libvirt", "name": "libvirt-runtime"},
            {"mountPath": "/var/run/kubevirt/sockets", "name": "sockets"},
            {
                "mountPath": "/var/run/kubevirt/hotplug-disks",
                "mountPropagation": "HostToContainer",
                "name": "hotplug-disks",
            },
        ],
    }
    console = {
        "args": ["--logfile", f"/var/run/kubevirt-private/{meta['uid']}/virt-serial0-log"],
        "command": ["/usr/bin/virt-tail"],
        "env": [{"name": "VIRT_LAUNCHER_LOG_VERBOSITY", "value": "2"}],
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "name": "guest-console-log",
        "resources": {
            "limits": {"cpu": "15m", "memory": "60M"},
            "requests": {"cpu": "5m", "memory": "35M"},
        },
        "restartPolicy": "Always",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "runAsUser": 107,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/var/run/kubevirt-private", "name": "private", "readOnly": True}
        ],
    }
    return {
        "automountServiceAccountToken": False,
        "containers": [compute],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": False,
        "hostname": meta["name"],
        "initContainers": [console],
        "nodeSelector": {"kubernetes.io/arch": "amd64", "kubevirt.io/schedulable": "true"},
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {
            "fsGroup": 107,
            "runAsGroup": 107,
            "runAsNonRoot": True,
            "runAsUser": 107,
        },
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": grace + 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            *(
                {"emptyDir": {}, "name": n}
                for n in (
                    "private",
                    "public",
                    "sockets",
                    "virt-bin-share-dir",
                    "libvirt-runtime",
                    "ephemeral-disks",
                )
            ),
            *(
                {"name": v["name"], "persistentVolumeClaim": dict(v["persistentVolumeClaim"])}
                for v in claims
            ),
            {"emptyDir": {}, "name": "hotplug-disks"},
        ],
    }


def _condition(kind: str, at: int, status: str = "True") -> dict[str, Any]:
    return {
        "lastProbeTime": None,
        "lastTransitionTime": timefmt.seconds(at),
        "status": status,
        "type": kind,
    }


def _container(name: str, at: int, ready: bool, rng: random.Random) -> dict[str, Any]:
    return {
        "containerID": "containerd://" + "".join(rng.choice("0123456789abcdef") for _ in range(64)),
        "image": IMAGE,
        "imageID": "quay.io/kubevirt/virt-launcher@sha256:" + "3" * 8 + "c0ffee" * 8 + "42" * 4,
        "lastState": {},
        "name": name,
        "ready": ready,
        "restartCount": 0,
        "started": True,
        "state": {"running": {"startedAt": timefmt.seconds(at)}},
    }


def scheduled(pod: Obj, node: str, at: int) -> None:
    pod["spec"]["nodeName"] = node
    pod["status"]["conditions"] = [_condition("PodScheduled", at)]


def running(pod: Obj, at: int, pod_ip: str, host_ip: str, rng: random.Random) -> None:
    status = pod["status"]
    status.update(
        phase="Running",
        startTime=timefmt.seconds(at),
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        podIP=pod_ip,
        podIPs=[{"ip": pod_ip}],
        containerStatuses=[_container("compute", at, False, rng)],
        initContainerStatuses=[_container("guest-console-log", at - 1_000_000, True, rng)],
    )
    status["conditions"] = [
        _condition("PodReadyToStartContainers", at),
        _condition("Initialized", at - 1_000_000),
        *status.get("conditions", []),
    ]


def ready(pod: Obj, at: int) -> None:
    status = pod["status"]
    keep = [
        c for c in status.get("conditions", []) if c["type"] not in ("Ready", "ContainersReady")
    ]
    status["conditions"] = [
        _condition("kubevirt.io/virtual-machine-unpaused", at),
        *keep,
        _condition("Ready", at),
        _condition("ContainersReady", at),
    ]
    for container in status.get("containerStatuses", []):
        container["ready"] = True


def terminated(pod: Obj, at: int, phase: str) -> None:
    status = pod["status"]
    status["phase"] = phase
    status["conditions"] = [
        {**c, "status": "False", "lastTransitionTime": timefmt.seconds(at)}
        if c.get("type") in ("Ready", "ContainersReady")
        else c
        for c in status.get("conditions", [])
    ]
    code = 0 if phase == "Succeeded" else 1
    for container in status.get("containerStatuses", []):
        started = container.get("state", {}).get("running", {}).get("startedAt")
        container.update(
            ready=False,
            started=False,
            state={
                "terminated": {
                    "exitCode": code,
                    "finishedAt": timefmt.seconds(at),
                    "reason": "Completed" if code == 0 else "Error",
                    **({"startedAt": started} if started else {}),
                }
            },
        )
