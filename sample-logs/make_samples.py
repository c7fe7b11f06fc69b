#!/usr/bin/env python3
"""Generate kvtrace's sample bundles (deterministic; commit the output too).

    python3 sample-logs/make_samples.py            # rewrite every sample under sample-logs/
    python3 sample-logs/make_samples.py --check    # regenerate into a temp dir and diff

Every name, UID and time here is invented. Log lines follow the KubeVirt v1.9.0 shapes (the
logger log.go:43, 187-199 and go-kit's json_logger.go:23-37; the messages and positions of
kvtrace/timeline/catalog.py): sorted-key compact JSON from go-kit, 6-digit µs timestamps with a
literal Z, klog text lines for client-go leader election, stdlib-adapter lines with pos
stdlib.go:105 and ts, and a kubelet ``--timestamps`` prefix (9 fraction digits) a few µs-ms after
the body time. Only lines printed at the default verbosity 2 appear.

Standard library + PyYAML only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import filecmp
import json
import random
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
KUBEVIRT_NS = "kubevirt"
KV_VERSION = "v1.9.0"
SERVER_VERSION = "v1.31.2"
LAUNCHER_IMAGE = "quay.io/kubevirt/virt-launcher:v1.9.0"
CONTROLLER_IMAGE = "quay.io/kubevirt/virt-controller:v1.9.0"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
STOPPED_MSG = "Stopped the virtual machine by deleting the virtual machine instance "
STARTED_MSG = "Started the virtual machine by creating the new virtual machine instance "

# --------------------------------------------------------------------------------------
# deterministic ids and times
# --------------------------------------------------------------------------------------


class Ids:
    """Seeded source of UUIDv4s, pod-name suffixes and hex strings."""

    POD_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s rand.String alphabet

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(self.POD_ALPHABET) for _ in range(n))

    def hexstr(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))


def t_us(s: str) -> int:
    """'2026-11-28T00:42:31.846213' (UTC) -> integer µs since the epoch."""
    if "." not in s:
        s += ".000000"
    d = dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
    delta = d - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _dt(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=us)


def fmt_us(us: int) -> str:
    """KubeVirt log / MicroTime format: 6 fraction digits, literal Z."""
    return _dt(us).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fmt_s(us: int) -> str:
    """metav1.Time: whole seconds (truncated), literal Z."""
    return _dt(us).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_ns(ns: int) -> str:
    """kubelet --timestamps prefix: RFC3339Nano with a fixed 9-digit fraction."""
    sec, frac = divmod(ns, 1_000_000_000)
    return _dt(sec * 1_000_000).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def event_name(obj: str, us: int, extra_ns: int) -> str:
    """Event name = <involvedObject name>.<hex of creation UnixNano>."""
    return f"{obj}.{us * 1000 + extra_ns:x}"


# --------------------------------------------------------------------------------------
# virt-controller log writer
# --------------------------------------------------------------------------------------


def go_json(fields: dict[str, Any]) -> str:
    """go-kit JSON logger output: map keys sorted, compact, HTML escaping off."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class ControllerLog:
    """Collects the stderr lines of one virt-controller container instance."""

    def __init__(self, pod: str, seed: str) -> None:
        self.pod = pod
        self.lines: list[tuple[int, str]] = []  # (body time µs, body)
        self.rng = random.Random(seed)

    # KubeVirt logger ---------------------------------------------------------------
    def kv(
        self,
        us: int,
        level: str,
        msg: str,
        pos: str,
        obj: dict[str, str] | None = None,
        reason: str | None = None,
    ) -> None:
        f: dict[str, Any] = {
            "component": "virt-controller",
            "level": level,
            "msg": msg,
            "pos": pos,
            "timestamp": fmt_us(us),
        }
        if obj is not None:
            if obj.get("namespace"):
                f["namespace"] = obj["namespace"]
            f["name"] = obj["name"]
            f["kind"] = obj.get("kind", "")  # "" for informer (watch) delivered objects
            f["uid"] = obj["uid"]
        if reason is not None:
            f["reason"] = reason
        self.lines.append((us, go_json(f)))

    def listening(self, us: int, port: int = 8443) -> None:
        f = {
            "action": "listening",
            "component": "virt-controller",
            "interface": "0.0.0.0",
            "level": "info",
            "port": port,
            "pos": "application.go:584",
            "service": "http",
            "timestamp": fmt_us(us),
        }
        self.lines.append((us, go_json(f)))

    def stdlib(self, us: int, msg: str) -> None:
        """Go stdlib log routed through go-kit's StdlibAdapter (ts = container local = UTC)."""
        ts = _dt(us - 40).strftime("%Y/%m/%d %H:%M:%S")
        f = {
            "component": "virt-controller",
            "level": "info",
            "msg": msg,
            "pos": "stdlib.go:105",
            "timestamp": fmt_us(us),
            "ts": ts,
        }
        self.lines.append((us, go_json(f)))

    # klog (client-go) --------------------------------------------------------------
    def klog(self, us: int, sev: str, fileline: str, msg: str, pid: int = 1) -> None:
        d = _dt(us)
        head = f"{sev}{d:%m%d} {d:%H:%M:%S}.{d.microsecond:06d} {pid:7d} {fileline}] "
        self.lines.append((us, head + msg))

    # output ------------------------------------------------------------------------
    def render(self) -> str:
        """Body lines with the kubelet prefix, capture time a few µs-ms after the body."""
        out = []
        last_ns = 0
        for us, body in self.lines:
            delay_ns = self.rng.randint(9_000, 2_400_000) + self.rng.randint(0, 999)
            ns = max(us * 1000 + delay_ns, last_ns + self.rng.randint(1_500, 40_000))
            last_ns = ns
            out.append(f"{fmt_ns(ns)} {body}\n")
        return "".join(out)

    def check_monotonic(self) -> None:
        prev = 0
        for us, _ in self.lines:
            if us < prev:
                raise SystemExit(f"{self.pod}: body timestamps go backwards at {fmt_us(us)}")
            prev = us


def startup(log: ControllerLog, t0: int, cdi: bool = True) -> int:
    """Lines every replica prints before leader election; returns the 'attempting' time."""
    if cdi:
        log.kv(t0, "info", "CDI detected, DataVolume integration enabled", "application.go:428")
    else:
        log.kv(
            t0, "info", "CDI not detected, DataVolume integration disabled", "application.go:438"
        )
    log.kv(t0 + 29_793, "info", "we are on kubernetes", "application.go:449")
    log.listening(t0 + 1_202_397)
    t_attempt = t0 + 1_398_099
    log.klog(
        t_attempt,
        "I",
        "leaderelection.go:257",
        "attempting to acquire leader lease kubevirt/virt-controller...",
    )
    return t_attempt


INFORMERS = [
    "vmiInformer",
    "vmInformer",
    "kubeVirtPodInformer",
    "kubeVirtNodeInformer",
    "vmimInformer",
    "vmirsInformer",
    "vmpool",
    "persistentVolumeClaimInformer",
    "controllerRevisionInformer",
    "dataVolumeInformer",
    "namespaceInformer",
    "vmExportInformer",
    "vmSnapshotInformer",
    "vmSnapshotContentInformer",
    "vmRestoreInformer",
    "migrationPolicyInformer",
    "virtualMachineCloneInformer",
    "vmInstancetypeInformer",
    "vmClusterInstancetypeInformer",
    "vmPreferenceInformer",
    "vmClusterPreferenceInformer",
]

CONTROLLER_STARTS = [
    ("Starting evacuation controller.", "evacuation.go:259"),
    ("Starting disruption budget controller.", "disruptionbudget.go:316"),
    ("Starting node controller.", "node.go:127"),
    ("Starting vmi controller.", "vmi.go:246"),
    ("Starting VirtualMachineInstanceReplicaSet controller.", "replicaset.go:119"),
    ("Starting pool controller.", "pool.go:419"),
    ("Starting VirtualMachine controller.", "vm.go:311"),
    ("Starting migration controller.", "migration.go:286"),
    ("Starting snapshot controller.", "snapshot_base.go:235"),
    ("Starting restore controller.", "restore_base.go:121"),
    ("Starting export controller.", "export.go:528"),
    ("Starting workload update controller.", "workload-updater.go:259"),
    ("Starting clone controller", "clone_base.go:374"),
    ("Starting backup controller.", "backup.go:342"),
]


def became_leader(log: ControllerLog, t_acq: int, rng: random.Random) -> int:
    """klog 'successfully acquired', informer burst, STARTING controllers, controller starts."""
    log.klog(
        t_acq, "I", "leaderelection.go:271", "successfully acquired lease kubevirt/virt-controller"
    )
    t = t_acq + 612
    names = INFORMERS[:]
    rng.shuffle(names)  # Go map iteration order
    for n in names:
        t += rng.randint(18, 95)
        log.kv(t, "info", f"STARTING informer {n}", "virtinformers.go:397")
    t += rng.randint(300, 900)
    log.stdlib(
        t,
        "STARTING controllers with following threads : node 3, vmi 10, replicaset 3, "
        "vm 3, migration 3, evacuation 3, disruptionBudget 3",
    )
    t += rng.randint(40, 120)
    ptrs = " ".join(f"0xc000{rng.randint(0x100000, 0xFFFFFF):06x}" for _ in range(6))
    log.stdlib(
        t,
        f"\nvca.migrationInformer :&{{{ptrs} 43200000000000 43200000000000 <nil> "
        f"{{{{0 0}} 0 0 0 0}} 0xc000{rng.randint(0x100000, 0xFFFFFF):06x} false}}",
    )
    starts = CONTROLLER_STARTS[:]
    rng.shuffle(starts)  # each controller runs in its own goroutine
    for msg, pos in starts:
        t += rng.randint(25, 260)
        log.kv(t, "info", msg, pos)
    return t


# --------------------------------------------------------------------------------------
# YAML output in kubectl style
# --------------------------------------------------------------------------------------


class KubeDumper(yaml.SafeDumper):
    """Like kubectl -o yaml: sorted keys, indentless lists, ambiguous strings double-quoted."""


def _repr_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    if (
        data == ""
        or dumper.resolve(yaml.ScalarNode, data, (True, False)) != "tag:yaml.org,2002:str"
    ):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


KubeDumper.add_representer(str, _repr_str)


def to_yaml(obj: Any) -> str:
    return yaml.dump(
        obj,
        Dumper=KubeDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=80,
    )


def k_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def owner(api: str, kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": name,
        "uid": uid,
    }


# --------------------------------------------------------------------------------------
# object builders
# --------------------------------------------------------------------------------------


class RV:
    """Monotonic resourceVersion source (etcd revision)."""

    def __init__(self, start: int) -> None:
        self.v = start

    def __call__(self, step: int = 1) -> str:
        self.v += step
        return str(self.v)


def vm_template_spec(name: str, fw_uuid: str, fw_serial: str, pvc: str) -> dict[str, Any]:
    return {
        "architecture": "amd64",
        "domain": {
            "cpu": {"cores": 1, "sockets": 1, "threads": 1},
            "devices": {
                "disks": [
                    {"disk": {"bus": "virtio"}, "name": "rootdisk"},
                    {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"},
                ],
                "interfaces": [{"masquerade": {}, "name": "default"}],
            },
            "firmware": {"serial": fw_serial, "uuid": fw_uuid},
            "machine": {"type": "q35"},
            "memory": {"guest": "2Gi"},
            "resources": {"requests": {"memory": "2Gi"}},
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
            {"name": "rootdisk", "persistentVolumeClaim": {"claimName": pvc}},
            {
                "cloudInitNoCloud": {
                    "userData": "#cloud-config\nuser: fedora\npassword: changeme\n"
                    "chpasswd: { expire: False }\n"
                },
                "name": "cloudinitdisk",
            },
        ],
    }


def make_vm(
    *,
    name: str,
    ns: str,
    uid: str,
    created: int,
    rv: str,
    generation: int,
    run_strategy: str,
    fw_uuid: str,
    fw_serial: str,
    status: dict[str, Any],
    app_label: str | None = None,
) -> dict[str, Any]:
    labels = {"app": app_label or name}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {
            "annotations": {
                "kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1",
            },
            "creationTimestamp": fmt_s(created),
            "finalizers": ["kubevirt.io/virtualMachineControllerFinalize"],
            "generation": generation,
            "name": name,
            "namespace": ns,
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": {
            "runStrategy": run_strategy,
            "template": {
                "metadata": {"creationTimestamp": None, "labels": labels},
                "spec": vm_template_spec(name, fw_uuid, fw_serial, f"{name}-rootdisk"),
            },
        },
        "status": status,
    }


def vmi_spec_from_template(tmpl: dict[str, Any]) -> dict[str, Any]:
    """The template spec as the VMI mutating webhook leaves it (defaults filled in)."""
    spec = json.loads(json.dumps(tmpl))
    d = spec["domain"]
    d["cpu"].update({"maxSockets": 4, "model": "host-model"})
    d["features"] = {"acpi": {"enabled": True}}
    d["memory"]["maxGuest"] = "8Gi"
    spec["evictionStrategy"] = "None"
    return spec


def make_vmi(
    *,
    vm: dict[str, Any],
    uid: str,
    created: int,
    rv: str,
    node: str,
    phases: list[tuple[str, int]],
    phase: str,
    pod_uid: str,
    ready_since: int,
) -> dict[str, Any]:
    name = vm["metadata"]["name"]
    ns = vm["metadata"]["namespace"]
    gen = vm["metadata"]["generation"]
    labels = dict(vm["spec"]["template"]["metadata"]["labels"])
    labels["kubevirt.io/nodeName"] = node
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "annotations": {
                "kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1",
                "kubevirt.io/vm-generation": str(gen),
            },
            "creationTimestamp": fmt_s(created),
            "finalizers": [
                "kubevirt.io/virtualMachineControllerFinalize",
                "kubevirt.io/foregroundDeleteVirtualMachine",
            ],
            "generation": 12,
            "labels": labels,
            "name": name,
            "namespace": ns,
            "ownerReferences": [
                owner("kubevirt.io/v1", "VirtualMachine", name, vm["metadata"]["uid"])
            ],
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": vmi_spec_from_template(vm["spec"]["template"]["spec"]),
        "status": {
            "activePods": {pod_uid: node},
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(ready_since),
                    "status": "True",
                    "type": "Ready",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": None,
                    "status": "True",
                    "type": "LiveMigratable",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": None,
                    "status": "True",
                    "type": "StorageLiveMigratable",
                },
            ],
            "currentCPUTopology": {"cores": 1, "sockets": 1, "threads": 1},
            "guestOSInfo": {},
            "interfaces": [
                {
                    "infoSource": "domain",
                    "ipAddress": "10.244.3.57",
                    "ipAddresses": ["10.244.3.57"],
                    "mac": "02:6e:1c:00:00:1f",
                    "name": "default",
                    "podInterfaceName": "eth0",
                    "queueCount": 1,
                }
            ],
            "launcherContainerImageVersion": LAUNCHER_IMAGE,
            "machine": {"type": "pc-q35-rhel9.6.0"},
            "memory": {
                "guestAtBoot": "2Gi",
                "guestCurrent": "2Gi",
                "guestRequested": "2Gi",
                "memoryOverhead": "272Mi",
            },
            "migrationMethod": "LiveMigration",
            "migrationTransport": "Unix",
            "nodeName": node,
            "phase": phase,
            "phaseTransitionTimestamps": [
                {"phase": p, "phaseTransitionTimestamp": fmt_s(t)} for p, t in phases
            ],
            "qosClass": "Burstable",
            "runtimeUser": 107,
            "selinuxContext": "none",
            "virtualMachineRevisionName": f"revision-start-vm-{vm['metadata']['uid']}-{gen}",
            "volumeStatus": [
                {"name": "cloudinitdisk", "size": 1048576, "target": "vdb"},
                {
                    "name": "rootdisk",
                    "persistentVolumeClaimInfo": {
                        "accessModes": ["ReadWriteMany"],
                        "capacity": {"storage": "30Gi"},
                        "filesystemOverhead": "0",
                        "requests": {"storage": "30Gi"},
                        "volumeMode": "Block",
                    },
                    "target": "vda",
                },
            ],
        },
    }


def make_revision(vm: dict[str, Any], created: int, rv: str) -> dict[str, Any]:
    uid = vm["metadata"]["uid"]
    gen = vm["metadata"]["generation"]
    spec = json.loads(json.dumps(vm["spec"]))
    return {
        "apiVersion": "apps/v1",
        "data": {"spec": spec},
        "kind": "ControllerRevision",
        "metadata": {
            "creationTimestamp": fmt_s(created),
            "name": f"revision-start-vm-{uid}-{gen}",
            "namespace": vm["metadata"]["namespace"],
            "ownerReferences": [
                owner("kubevirt.io/v1", "VirtualMachine", vm["metadata"]["name"], uid)
            ],
            "resourceVersion": rv,
            "uid": _rev_uid(uid, gen),
        },
        "revision": gen,
    }


def _rev_uid(vm_uid: str, gen: int) -> str:
    return Ids(f"rev-{vm_uid}-{gen}").uuid4()


def make_launcher_pod(
    *,
    vmi: dict[str, Any],
    pod_name: str,
    pod_uid: str,
    created: int,
    rv: str,
    node: str,
    started: int,
    ready: int,
    qemu_timeout: int,
    pod_ip: str,
) -> dict[str, Any]:
    name = vmi["metadata"]["name"]
    ns = vmi["metadata"]["namespace"]
    vmi_uid = vmi["metadata"]["uid"]
    labels = dict(vmi["metadata"]["labels"])
    labels.update(
        {
            "kubevirt.io": "virt-launcher",
            "kubevirt.io/created-by": vmi_uid,
            "vm.kubevirt.io/name": name,
            "vmi.kubevirt.io/id": name,
        }
    )
    freeze = f'["/usr/bin/virt-freezer", "--freeze", "--name", "{name}", "--namespace", "{ns}"]'
    unfreeze = f'["/usr/bin/virt-freezer", "--unfreeze", "--name", "{name}", "--namespace", "{ns}"]'
    command = [
        "/usr/bin/virt-launcher-monitor",
        "--qemu-timeout",
        f"{qemu_timeout}s",
        "--name",
        name,
        "--uid",
        vmi_uid,
        "--namespace",
        ns,
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
    devres = {
        "devices.kubevirt.io/kvm": "1",
        "devices.kubevirt.io/tun": "1",
        "devices.kubevirt.io/vhost-net": "1",
    }
    mounts = [
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
    ]
    pvc = vmi["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {
                "descheduler.alpha.kubernetes.io/request-evict-only": "",
                "kubectl.kubernetes.io/default-container": "compute",
                "kubevirt.io/domain": name,
                "kubevirt.io/memory-overhead-bytes": "285212672",
                "kubevirt.io/migrationTransportUnix": "true",
                "kubevirt.io/vm-generation": vmi["metadata"]["annotations"][
                    "kubevirt.io/vm-generation"
                ],
                "post.hook.backup.velero.io/command": unfreeze,
                "post.hook.backup.velero.io/container": "compute",
                "pre.hook.backup.velero.io/command": freeze,
                "pre.hook.backup.velero.io/container": "compute",
                "pre.hook.backup.velero.io/timeout": "60s",
            },
            "creationTimestamp": fmt_s(created),
            "generateName": f"virt-launcher-{name}-",
            "labels": labels,
            "name": pod_name,
            "namespace": ns,
            "ownerReferences": [owner("kubevirt.io/v1", "VirtualMachineInstance", name, vmi_uid)],
            "resourceVersion": rv,
            "uid": pod_uid,
        },
        "spec": {
            "automountServiceAccountToken": False,
            "containers": [
                {
                    "command": command,
                    "env": [
                        {"name": "XDG_CACHE_HOME", "value": "/var/run/kubevirt-private"},
                        {"name": "XDG_CONFIG_HOME", "value": "/var/run/kubevirt-private"},
                        {"name": "XDG_RUNTIME_DIR", "value": "/var/run"},
                        {
                            "name": "POD_NAME",
                            "valueFrom": {
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}
                            },
                        },
                    ],
                    "image": LAUNCHER_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "name": "compute",
                    "resources": {
                        "limits": dict(devres),
                        "requests": {
                            "cpu": "100m",
                            **devres,
                            "ephemeral-storage": "50M",
                            "memory": "2320Mi",
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
                    "volumeDevices": [{"devicePath": "/dev/rootdisk", "name": "rootdisk"}],
                    "volumeMounts": mounts,
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": False,
            "hostname": name,
            "initContainers": [
                {
                    "args": ["--logfile", f"/var/run/kubevirt-private/{vmi_uid}/virt-serial0-log"],
                    "command": ["/usr/bin/virt-tail"],
                    "env": [{"name": "VIRT_LAUNCHER_LOG_VERBOSITY", "value": "2"}],
                    "image": LAUNCHER_IMAGE,
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
                        {
                            "mountPath": "/var/run/kubevirt-private",
                            "name": "private",
                            "readOnly": True,
                        }
                    ],
                }
            ],
            "nodeName": node,
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
            "terminationGracePeriodSeconds": 60,
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
                {"emptyDir": {}, "name": "private"},
                {"emptyDir": {}, "name": "public"},
                {"emptyDir": {}, "name": "sockets"},
                {"emptyDir": {}, "name": "virt-bin-share-dir"},
                {"emptyDir": {}, "name": "libvirt-runtime"},
                {"emptyDir": {}, "name": "ephemeral-disks"},
                {"name": "rootdisk", "persistentVolumeClaim": {"claimName": pvc}},
                {"emptyDir": {}, "name": "hotplug-disks"},
            ],
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(ready),
                    "status": "True",
                    "type": "kubevirt.io/virtual-machine-unpaused",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(started),
                    "status": "True",
                    "type": "PodReadyToStartContainers",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(started - 1_000_000),
                    "status": "True",
                    "type": "Initialized",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(ready),
                    "status": "True",
                    "type": "Ready",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(ready),
                    "status": "True",
                    "type": "ContainersReady",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(created),
                    "status": "True",
                    "type": "PodScheduled",
                },
            ],
            "containerStatuses": [
                {
                    "containerID": "containerd://" + Ids(pod_uid + "c").hexstr(64),
                    "image": LAUNCHER_IMAGE,
                    "imageID": "quay.io/kubevirt/virt-launcher@sha256:"
                    + Ids("launcher-image").hexstr(64),
                    "lastState": {},
                    "name": "compute",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": fmt_s(started)}},
                }
            ],
            "hostIP": "192.168.122.14",
            "hostIPs": [{"ip": "192.168.122.14"}],
            "initContainerStatuses": [
                {
                    "containerID": "containerd://" + Ids(pod_uid + "i").hexstr(64),
                    "image": LAUNCHER_IMAGE,
                    "imageID": "quay.io/kubevirt/virt-launcher@sha256:"
                    + Ids("launcher-image").hexstr(64),
                    "lastState": {},
                    "name": "guest-console-log",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": fmt_s(started - 1_000_000)}},
                }
            ],
            "phase": "Running",
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "qosClass": "Burstable",
            "startTime": fmt_s(created),
        },
    }


def make_controller_pod(
    *,
    name: str,
    uid: str,
    rs_hash: str,
    created: int,
    started: int,
    ready: int,
    rv: str,
    node: str,
    ip: str,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {
                "kubevirt.io/install-strategy-identifier": "0f5a2c8e9b1d3a7c",
                "kubevirt.io/install-strategy-registry": "quay.io/kubevirt",
                "kubevirt.io/install-strategy-version": KV_VERSION,
                "openshift.io/required-scc": "restricted-v2",
            },
            "creationTimestamp": fmt_s(created),
            "generateName": f"virt-controller-{rs_hash}-",
            "labels": {
                "app.kubernetes.io/component": "kubevirt",
                "app.kubernetes.io/managed-by": "virt-operator",
                "app.kubernetes.io/version": KV_VERSION,
                "kubevirt.io": "virt-controller",
                "pod-template-hash": rs_hash,
                "prometheus.kubevirt.io": "true",
            },
            "name": name,
            "namespace": KUBEVIRT_NS,
            "ownerReferences": [
                owner(
                    "apps/v1",
                    "ReplicaSet",
                    f"virt-controller-{rs_hash}",
                    Ids("rs-" + rs_hash).uuid4(),
                )
            ],
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": {
            "containers": [
                {
                    "args": [
                        "--launcher-image",
                        LAUNCHER_IMAGE,
                        "--exporter-image",
                        "quay.io/kubevirt/virt-exportserver:v1.9.0",
                        "--port",
                        "8443",
                        "-v",
                        "2",
                    ],
                    "command": ["virt-controller"],
                    "image": CONTROLLER_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "name": "virt-controller",
                    "ports": [{"containerPort": 8443, "name": "metrics", "protocol": "TCP"}],
                    "readinessProbe": {
                        "failureThreshold": 3,
                        "httpGet": {"path": "/leader", "port": 8443, "scheme": "HTTPS"},
                        "initialDelaySeconds": 15,
                        "periodSeconds": 10,
                        "successThreshold": 1,
                        "timeoutSeconds": 10,
                    },
                    "livenessProbe": {
                        "failureThreshold": 8,
                        "httpGet": {"path": "/healthz", "port": 8443, "scheme": "HTTPS"},
                        "initialDelaySeconds": 15,
                        "periodSeconds": 10,
                        "successThreshold": 1,
                        "timeoutSeconds": 10,
                    },
                    "resources": {"requests": {"cpu": "10m", "memory": "275Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "nodeName": node,
            "priorityClassName": "kubevirt-cluster-critical",
            "restartPolicy": "Always",
            "serviceAccountName": "kubevirt-controller",
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(ready),
                    "status": "True",
                    "type": "Ready",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(created),
                    "status": "True",
                    "type": "PodScheduled",
                },
            ],
            "containerStatuses": [
                {
                    "containerID": "containerd://" + Ids(uid + "c").hexstr(64),
                    "image": CONTROLLER_IMAGE,
                    "imageID": "quay.io/kubevirt/virt-controller@sha256:"
                    + Ids("ctl-image").hexstr(64),
                    "lastState": {},
                    "name": "virt-controller",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": fmt_s(started)}},
                }
            ],
            "hostIP": "192.168.122.11",
            "phase": "Running",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "qosClass": "Burstable",
            "startTime": fmt_s(created),
        },
    }


def make_event(
    *,
    ns: str,
    involved: dict[str, Any],
    reason: str,
    message: str,
    us: int,
    component: str,
    rv: str,
    extra_ns: int,
    etype: str = "Normal",
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "count": 1,
        "eventTime": None,
        "firstTimestamp": fmt_s(us),
        "involvedObject": involved,
        "kind": "Event",
        "lastTimestamp": fmt_s(us),
        "message": message,
        "metadata": {
            "creationTimestamp": fmt_s(us),
            "name": event_name(involved["name"], us, extra_ns),
            "namespace": ns,
            "resourceVersion": rv,
            "uid": Ids(f"ev-{involved['name']}-{us}-{reason}").uuid4(),
        },
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": "",
        "source": {"component": component},
        "type": etype,
    }


def ref(obj: dict[str, Any], rv: str | None = None) -> dict[str, Any]:
    r = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "namespace": obj["metadata"]["namespace"],
        "uid": obj["metadata"]["uid"],
    }
    if rv is not None:
        r["resourceVersion"] = rv
    return r


def make_lease(
    *, holder: str, acquire: int, renew: int, transitions: int, created: int, rv: str, uid: str
) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "creationTimestamp": fmt_s(created),
            "name": "virt-controller",
            "namespace": KUBEVIRT_NS,
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": {
            "acquireTime": fmt_us(acquire),
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "leaseTransitions": transitions,
            "renewTime": fmt_us(renew),
        },
    }


def make_kubevirt(*, uid: str, created: int, rv: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {
            "annotations": {
                "kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1",
            },
            "creationTimestamp": fmt_s(created),
            "finalizers": ["foregroundDeleteKubeVirt"],
            "generation": 3,
            "name": "kubevirt",
            "namespace": KUBEVIRT_NS,
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": {
            "certificateRotateStrategy": {},
            "configuration": {"developerConfiguration": {}},
            "customizeComponents": {},
            "imagePullPolicy": "IfNotPresent",
            "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate"]},
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": fmt_s(created + 95_000_000),
                    "lastTransitionTime": fmt_s(created + 95_000_000),
                    "message": "All components are ready.",
                    "reason": "AllComponentsReady",
                    "status": "True",
                    "type": "Available",
                },
                {
                    "lastProbeTime": fmt_s(created + 95_000_000),
                    "lastTransitionTime": fmt_s(created + 95_000_000),
                    "message": "All components are ready.",
                    "reason": "AllComponentsReady",
                    "status": "False",
                    "type": "Progressing",
                },
                {
                    "lastProbeTime": fmt_s(created + 95_000_000),
                    "lastTransitionTime": fmt_s(created + 95_000_000),
                    "message": "All components are ready.",
                    "reason": "AllComponentsReady",
                    "status": "False",
                    "type": "Degraded",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": None,
                    "message": "All resources were created.",
                    "reason": "AllResourcesCreated",
                    "status": "True",
                    "type": "Created",
                },
            ],
            "defaultArchitecture": "amd64",
            "observedDeploymentConfig": "{}",
            "observedDeploymentID": "b3f1c0a9e7d2c4f6",
            "observedGeneration": 3,
            "observedKubeVirtRegistry": "quay.io/kubevirt",
            "observedKubeVirtVersion": KV_VERSION,
            "operatorVersion": KV_VERSION,
            "phase": "Deployed",
            "targetDeploymentConfig": "{}",
            "targetDeploymentID": "b3f1c0a9e7d2c4f6",
            "targetKubeVirtRegistry": "quay.io/kubevirt",
            "targetKubeVirtVersion": KV_VERSION,
        },
    }


def make_node(
    *, name: str, uid: str, created: int, rv: str, heartbeat: int, ip: str
) -> dict[str, Any]:
    hb = fmt_s(heartbeat)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "kubevirt.io/heartbeat": hb,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": fmt_s(created),
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "cpu-model.node.kubevirt.io/Skylake-Client-IBRS": "true",
                "host-model-cpu.node.kubevirt.io/Skylake-Client-IBRS": "true",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubevirt.io/schedulable": "true",
                "machine-type.node.kubevirt.io/pc-q35-rhel9.6.0": "true",
            },
            "name": name,
            "resourceVersion": rv,
            "uid": uid,
        },
        "spec": {"podCIDR": "10.244.3.0/24", "podCIDRs": ["10.244.3.0/24"]},
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {
                "cpu": "16",
                "devices.kubevirt.io/kvm": "1k",
                "devices.kubevirt.io/tun": "1k",
                "devices.kubevirt.io/vhost-net": "1k",
                "ephemeral-storage": "189217404516",
                "memory": "65550140Ki",
                "pods": "110",
            },
            "capacity": {
                "cpu": "16",
                "devices.kubevirt.io/kvm": "1k",
                "devices.kubevirt.io/tun": "1k",
                "devices.kubevirt.io/vhost-net": "1k",
                "ephemeral-storage": "205313288Ki",
                "memory": "65652540Ki",
                "pods": "110",
            },
            "conditions": [
                {
                    "lastHeartbeatTime": hb,
                    "lastTransitionTime": fmt_s(created + 40_000_000),
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                },
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": Ids(name + "boot").uuid4(),
                "containerRuntimeVersion": "containerd://1.7.23",
                "kernelVersion": "6.8.0-48-generic",
                "kubeProxyVersion": SERVER_VERSION,
                "kubeletVersion": SERVER_VERSION,
                "machineID": Ids(name + "mid").hexstr(32),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.1 LTS",
                "systemUUID": Ids(name + "sys").uuid4(),
            },
        },
    }


# --------------------------------------------------------------------------------------
# bundle writers
# --------------------------------------------------------------------------------------


PLURALS = [  # (kind, file)
    ("VirtualMachine", "virtualmachines"),
    ("VirtualMachineInstance", "virtualmachineinstances"),
    ("Pod", "pods"),
    ("ControllerRevision", "controllerrevisions"),
    ("Event", "events"),
    ("Lease", "leases"),
    ("KubeVirt", "kubevirts"),
    ("Node", "nodes"),
]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def write_kvtrace_bundle(
    root: Path,
    *,
    captured: int,
    objects: dict[str, list[dict[str, Any]]],
    logs: list[ControllerLog],
    readme: str,
) -> None:
    collected = []
    for kind, plural in PLURALS:
        items = objects.get(kind)
        if items is None:
            continue
        rel = f"objects/{plural}.yaml"
        write(root / rel, to_yaml(k_list(items)))
        collected.append({"kind": kind, "file": rel, "count": len(items)})
    log_entries = []
    for log in logs:
        log.check_monotonic()
        rel = f"logs/{KUBEVIRT_NS}/{log.pod}/virt-controller/current.log"
        write(root / rel, log.render())
        log_entries.append(
            {
                "namespace": KUBEVIRT_NS,
                "pod": log.pod,
                "container": "virt-controller",
                "instance": "current",
                "file": rel,
                "timestamps": True,
            }
        )
    manifest = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": fmt_us(captured),
        "kvtraceVersion": "0.1.0",
        "serverVersion": SERVER_VERSION,
        "kubevirtVersion": KV_VERSION,
        "kubevirtNamespace": KUBEVIRT_NS,
        "scope": {"allNamespaces": False, "namespaces": ["default"], "vms": []},
        "collected": collected,
        "logs": log_entries,
        "missing": [],
    }
    write(root / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    write(root / "README.md", readme)


def go_time_string(us: int, mono_ns: int) -> str:
    """Go time.Time.String(): '2026-11-28 00:44:07.331902114 +0000 UTC m=+0.081622945'."""
    d = _dt(us)
    frac = d.microsecond * 1000 + (us * 7) % 1000
    return f"{d:%Y-%m-%d %H:%M:%S}.{frac:09d} +0000 UTC m=+{mono_ns / 1e9:.9f}"


def strip_managed(obj: dict[str, Any]) -> dict[str, Any]:
    o = json.loads(json.dumps(obj))
    o["metadata"].pop("managedFields", None)
    return o


def write_must_gather(
    root: Path,
    *,
    captured: int,
    objects: dict[str, list[dict[str, Any]]],
    logs: list[ControllerLog],
    readme: str,
    ids: Ids,
) -> None:
    wrapper = root / f"must-gather.local.{ids.rng.randint(10**18, 10**19 - 1)}"
    image_dir = wrapper / f"quay-io-kubevirt-must-gather-sha256-{ids.hexstr(64)}"
    end = captured + 48_512_330
    write(
        wrapper / "timestamp",
        go_time_string(captured - 1_800_000, 81_622_945)
        + "\n"
        + go_time_string(end, 50_393_114_020)
        + "\n",
    )
    write(image_dir / "version", "kubevirt/must-gather\nUnknown\n")
    for log in logs:
        log.check_monotonic()
        write(
            image_dir / f"namespaces/{KUBEVIRT_NS}/pods/{log.pod}/virt-controller/virt-controller/"
            "logs/current.log",
            log.render(),
        )

    def by_ns(kind: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for o in objects.get(kind, []):
            out.setdefault(o["metadata"].get("namespace", ""), []).append(o)
        return out

    for ns, vms in by_ns("VirtualMachine").items():
        for vm in vms:
            write(
                image_dir / f"namespaces/{ns}/kubevirt.io/virtualmachines/custom/"
                f"{vm['metadata']['name']}.yaml",
                to_yaml(strip_managed(vm)),
            )
    for ns, vmis in by_ns("VirtualMachineInstance").items():
        for vmi in vmis:
            write(
                image_dir / f"namespaces/{ns}/crs/virtualmachineinstances.kubevirt.io/"
                f"{vmi['metadata']['name']}.yaml",
                to_yaml(vmi),
            )
    for ns, pods in by_ns("Pod").items():
        write(image_dir / f"namespaces/{ns}/core/pods.yaml", to_yaml(k_list(pods)))
        for pod in pods:
            if pod["status"].get("phase") == "Running":
                write(
                    image_dir / f"namespaces/{ns}/pods/{pod['metadata']['name']}/"
                    f"{pod['metadata']['name']}.yaml",
                    to_yaml(pod),
                )
    for ns, evs in by_ns("Event").items():
        write(image_dir / f"namespaces/{ns}/core/events.yaml", to_yaml(k_list(evs)))
    for ns, revs in by_ns("ControllerRevision").items():
        for rev in revs:
            write(
                image_dir
                / f"namespaces/{ns}/apps/controllerrevisions/{rev['metadata']['name']}.yaml",
                to_yaml(rev),
            )
    for kv in objects.get("KubeVirt", []):
        write(
            image_dir / f"namespaces/{KUBEVIRT_NS}/crs/kubevirts.kubevirt.io/"
            f"{kv['metadata']['name']}.yaml",
            to_yaml(kv),
        )
    for node in objects.get("Node", []):
        write(
            image_dir / f"cluster-scoped-resources/core/nodes/{node['metadata']['name']}.yaml",
            to_yaml(node),
        )
    write(root / "README.md", readme)


# --------------------------------------------------------------------------------------
# scenario 1: always-restart (also used for the must-gather sample)
# --------------------------------------------------------------------------------------


def scenario_always_restart() -> dict[str, Any]:
    ids = Ids("kvtrace-sample-always-restart")
    rv = RV(4_187_300)
    node = "node-c04"
    leader = "virt-controller-6f8b9c7d54-" + ids.suffix()
    standby = "virt-controller-6f8b9c7d54-" + ids.suffix()

    vm_uid, old_vmi_uid, new_vmi_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()
    old_pod, new_pod = (
        "virt-launcher-testvm-" + ids.suffix(),
        "virt-launcher-testvm-" + ids.suffix(),
    )
    _old_pod_uid, new_pod_uid = ids.uuid4(), ids.uuid4()
    fw_uuid, fw_serial = ids.uuid4(), ids.uuid4()
    ovm_uid, ovmi_uid = ids.uuid4(), ids.uuid4()
    ovm_pod = "virt-launcher-other-vm-" + ids.suffix()
    ofw_uuid, ofw_serial = ids.uuid4(), ids.uuid4()
    leader_uid, standby_uid = ids.uuid4(), ids.uuid4()
    node_uid, kv_uid, lease_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()

    # ---- key times -------------------------------------------------------------------
    vm_created = t_us("2026-11-27T22:10:05.402118")
    old_vmi_created = t_us("2026-11-27T22:10:06.117204")
    leader_start = t_us("2026-11-28T00:41:56.702115")
    standby_start = t_us("2026-11-28T00:41:58.213388")
    t_acquire = t_us("2026-11-28T00:42:14.581937")
    ovm_stop = t_us("2026-11-28T00:42:20.418774")
    t_stop1 = t_us("2026-11-28T00:42:31.846213")  # first decision line
    t_dispatch = t_us("2026-11-28T00:42:31.858904")
    t_stop2 = t_us("2026-11-28T00:42:31.942677")
    t_startdec = t_us("2026-11-28T00:42:32.019350")
    t_created = t_stop1 + 190_000  # create 0.19 s after the first decision
    new_pod_created = t_us("2026-11-28T00:42:32.241806")
    captured = t_us("2026-11-28T00:44:07.331902")

    # ---- logs ------------------------------------------------------------------------
    lrng = random.Random("always-restart-lines")
    L = ControllerLog(leader, "always-restart-leader")
    t_att = startup(L, leader_start)
    assert 15_000_000 <= t_acquire - t_att <= 19_400_000
    became_leader(L, t_acquire, lrng)

    ovm = {"namespace": "default", "name": "other-vm", "uid": ovm_uid}
    testvm = {"namespace": "default", "name": "testvm", "uid": vm_uid}
    conflict = (
        'Operation cannot be fulfilled on virtualmachines.kubevirt.io "other-vm": the object '
        "has been modified; please apply your changes to the latest version and try again"
    )
    L.kv(
        ovm_stop,
        "info",
        "Stopping VM with VMI in phase Running due to runStrategy: Halted",
        "vm.go:1134",
        ovm,
    )
    L.kv(
        ovm_stop + 17_338,
        "info",
        "Dispatching delete event for vmi default/other-vm with phase Running",
        "vm.go:1685",
        ovm,
    )
    L.kv(
        ovm_stop + 28_756,
        "error",
        "Updating the VirtualMachine status failed.",
        "vm.go:453",
        ovm,
        reason=conflict,
    )
    L.kv(
        ovm_stop + 28_901,
        "info",
        "re-enqueuing VirtualMachine default/other-vm",
        "vm.go:348",
        reason=conflict,
    )
    L.kv(
        ovm_stop + 47_615,
        "info",
        "Stopping VM with VMI in phase Running due to runStrategy: Halted",
        "vm.go:1134",
        ovm,
    )
    L.kv(
        t_us("2026-11-28T00:42:21.027441"),
        "info",
        "Stopping VM with VMI in phase Running due to runStrategy: Halted",
        "vm.go:1134",
        ovm,
    )
    ovmi_final = t_us("2026-11-28T00:42:24.873090")
    L.kv(
        ovmi_final,
        "info",
        "Stopping VM with VMI in phase Succeeded due to runStrategy: Halted",
        "vm.go:1134",
        ovm,
    )
    L.kv(
        ovmi_final + 41_207,
        "info",
        "Stopping VM with VMI in phase Succeeded due to runStrategy: Halted",
        "vm.go:1134",
        ovm,
    )

    L.kv(
        t_stop1,
        "info",
        "Stopping VM with VMI in phase Failed and VM runStrategy: Always",
        "vm.go:1005",
        testvm,
    )
    L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/testvm with phase Failed",
        "vm.go:1685",
        testvm,
    )
    L.kv(
        t_stop2,
        "info",
        "Stopping VM with VMI in phase Failed and VM runStrategy: Always",
        "vm.go:1005",
        testvm,
    )
    L.kv(t_startdec, "info", "Starting VM due to runStrategy: Always", "vm.go:1032", testvm)
    L.kv(
        t_created,
        "info",
        "Started VM by creating the new virtual machine instance testvm",
        "vm.go:1341",
        testvm,
    )

    S = ControllerLog(standby, "always-restart-standby")
    startup(S, standby_start)

    # ---- objects ---------------------------------------------------------------------
    rv_rev = rv(11)
    vm_status = {
        "conditions": [
            {
                "lastProbeTime": None,
                "lastTransitionTime": "2026-11-28T00:42:36Z",
                "status": "True",
                "type": "Ready",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": None,
                "status": "True",
                "type": "LiveMigratable",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": None,
                "status": "True",
                "type": "StorageLiveMigratable",
            },
        ],
        "created": True,
        "desiredGeneration": 1,
        "observedGeneration": 1,
        "printableStatus": "Running",
        "ready": True,
        "runStrategy": "Always",
        "volumeSnapshotStatuses": [
            {
                "enabled": False,
                "name": "rootdisk",
                "reason": "No VolumeSnapshotClass: Volume snapshots are not configured for this "
                "StorageClass [ceph-block] [rootdisk]",
            },
            {
                "enabled": False,
                "name": "cloudinitdisk",
                "reason": "Snapshot is not supported for this volumeSource type [cloudinitdisk]",
            },
        ],
    }
    vm_obj = make_vm(
        name="testvm",
        ns="default",
        uid=vm_uid,
        created=vm_created,
        rv="0",
        generation=1,
        run_strategy="Always",
        fw_uuid=fw_uuid,
        fw_serial=fw_serial,
        status=vm_status,
    )
    ovm_obj = make_vm(
        name="other-vm",
        ns="default",
        uid=ovm_uid,
        created=t_us("2026-11-20T14:31:40.000000"),
        rv="0",
        generation=2,
        run_strategy="Halted",
        fw_uuid=ofw_uuid,
        fw_serial=ofw_serial,
        status={
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-28T00:42:24Z",
                    "message": "VMI does not exist",
                    "reason": "VMINotExists",
                    "status": "False",
                    "type": "Ready",
                }
            ],
            "desiredGeneration": 2,
            "observedGeneration": 2,
            "printableStatus": "Stopped",
            "runStrategy": "Halted",
            "volumeSnapshotStatuses": [
                {
                    "enabled": False,
                    "name": "rootdisk",
                    "reason": "No VolumeSnapshotClass: Volume snapshots are not configured "
                    "for this StorageClass [ceph-block] [rootdisk]",
                },
                {
                    "enabled": False,
                    "name": "cloudinitdisk",
                    "reason": "Snapshot is not supported for this volumeSource type "
                    "[cloudinitdisk]",
                },
            ],
        },
    )
    rev_obj = make_revision(vm_obj, old_vmi_created, rv_rev)
    ovm_first = dict(
        ovm_obj,
        metadata=dict(ovm_obj["metadata"], generation=1),
        spec=dict(ovm_obj["spec"], runStrategy="Always"),
    )
    orev_obj = make_revision(ovm_first, t_us("2026-11-20T14:31:41.000000"), str(int(rv_rev) - 7))

    # events first (their rvs come in time order)
    rv_ev_ovm = rv(40_000)
    rv_ev_ovmi = rv(3)
    rv_old_vmi_final = rv(1_900)
    rv_ev_old_pod = rv(2)
    rv_ev_vm_del = rv(2)
    rv_ev_vm_create = rv(9)
    new_vmi_rv_created = rv(1)
    rv_ev_new_pod = rv(5)
    ovm_obj["metadata"]["resourceVersion"] = str(int(rv_ev_ovm) + 120)

    phases = [
        ("Pending", t_created),
        ("Scheduling", t_us("2026-11-28T00:42:32.250000")),
        ("Scheduled", t_us("2026-11-28T00:42:35.100000")),
        ("Running", t_us("2026-11-28T00:42:36.400000")),
    ]
    new_vmi = make_vmi(
        vm=vm_obj,
        uid=new_vmi_uid,
        created=t_created - 9_000,
        rv=rv(60),
        node=node,
        phases=phases,
        phase="Running",
        pod_uid=new_pod_uid,
        ready_since=t_us("2026-11-28T00:42:36.400000"),
    )
    vm_obj["metadata"]["resourceVersion"] = rv(4)
    pod_obj = make_launcher_pod(
        vmi=new_vmi,
        pod_name=new_pod,
        pod_uid=new_pod_uid,
        created=new_pod_created,
        rv=rv(3),
        node=node,
        started=t_us("2026-11-28T00:42:34.000000"),
        ready=t_us("2026-11-28T00:42:35.000000"),
        qemu_timeout=287,
        pod_ip="10.244.3.57",
    )

    ev = []
    ev.append(
        make_event(
            ns="default",
            involved=ref(ovm_obj, str(int(rv_ev_ovm) - 2)),
            reason="SuccessfulDelete",
            message=f"{STOPPED_MSG}{ovmi_uid}",
            us=ovm_stop + 16_900,
            component="virtualmachine-controller",
            rv=rv_ev_ovm,
            extra_ns=311,
        )
    )
    ovmi_ref = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "name": "other-vm",
        "namespace": "default",
        "resourceVersion": str(int(rv_ev_ovmi) - 1),
        "uid": ovmi_uid,
    }
    ev.append(
        make_event(
            ns="default",
            involved=ovmi_ref,
            reason="SuccessfulDelete",
            message=f"Deleted virtual machine pod {ovm_pod}",
            us=t_us("2026-11-28T00:42:20.502318"),
            component="virtualmachine-controller",
            rv=rv_ev_ovmi,
            extra_ns=87,
        )
    )
    old_vmi_ref = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "name": "testvm",
        "namespace": "default",
        "resourceVersion": rv_old_vmi_final,
        "uid": old_vmi_uid,
    }
    ev.append(
        make_event(
            ns="default",
            involved=ref(vm_obj, str(int(rv_ev_vm_del) - 1)),
            reason="SuccessfulDelete",
            message=f"{STOPPED_MSG}{old_vmi_uid}",
            us=t_dispatch - 240,
            component="virtualmachine-controller",
            rv=rv_ev_vm_del,
            extra_ns=502,
        )
    )
    ev.append(
        make_event(
            ns="default",
            involved=old_vmi_ref,
            reason="SuccessfulDelete",
            message=f"Deleted virtual machine pod {old_pod}",
            us=t_us("2026-11-28T00:42:31.881547"),
            component="virtualmachine-controller",
            rv=rv_ev_old_pod,
            extra_ns=164,
        )
    )
    ev.append(
        make_event(
            ns="default",
            involved=ref(vm_obj, str(int(rv_ev_vm_create) - 1)),
            reason="SuccessfulCreate",
            message=f"{STARTED_MSG}testvm",
            us=t_created + 180,
            component="virtualmachine-controller",
            rv=rv_ev_vm_create,
            extra_ns=719,
        )
    )
    ev.append(
        make_event(
            ns="default",
            involved=ref(new_vmi, new_vmi_rv_created),
            reason="SuccessfulCreate",
            message=f"Created virtual machine pod {new_pod}",
            us=new_pod_created + 5_210,
            component="virtualmachine-controller",
            rv=rv_ev_new_pod,
            extra_ns=933,
        )
    )
    lease_obj = make_lease(
        holder=leader,
        acquire=t_acquire,
        renew=captured - 813_470,
        transitions=3,
        created=t_us("2026-10-02T09:31:12.000000"),
        rv=rv(2_300),
        uid=lease_uid,
    )
    lease_ev = make_event(
        ns=KUBEVIRT_NS,
        involved={
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "name": "virt-controller",
            "namespace": KUBEVIRT_NS,
            "resourceVersion": str(int(rv_ev_ovm) - 3000),
            "uid": lease_uid,
        },
        reason="LeaderElection",
        message=f"{leader} became leader",
        us=t_acquire + 1_102,
        component="virt-controller",
        rv=str(int(rv_ev_ovm) - 2999),
        extra_ns=402,
    )
    events = sorted(
        [*ev, lease_ev], key=lambda e: (e["metadata"]["namespace"], e["metadata"]["name"])
    )

    pods = [
        pod_obj,
        make_controller_pod(
            name=leader,
            uid=leader_uid,
            rs_hash="6f8b9c7d54",
            created=leader_start - 3_100_000,
            started=leader_start - 900_000,
            ready=leader_start + 15_600_000,
            rv=str(int(rv_ev_ovm) - 3400),
            node="node-c01",
            ip="10.244.0.31",
        ),
        make_controller_pod(
            name=standby,
            uid=standby_uid,
            rs_hash="6f8b9c7d54",
            created=standby_start - 3_300_000,
            started=standby_start - 900_000,
            ready=standby_start + 15_900_000,
            rv=str(int(rv_ev_ovm) - 3300),
            node="node-c02",
            ip="10.244.1.24",
        ),
    ]
    objects = {
        "VirtualMachine": [ovm_obj, vm_obj],
        "VirtualMachineInstance": [new_vmi],
        "Pod": pods,
        "ControllerRevision": [orev_obj, rev_obj],
        "Event": events,
        "Lease": [lease_obj],
        "KubeVirt": [
            make_kubevirt(uid=kv_uid, created=t_us("2026-10-02T09:30:20.000000"), rv="1523")
        ],
        "Node": [
            make_node(
                name=node,
                uid=node_uid,
                created=t_us("2026-10-02T09:14:51.000000"),
                rv=rv(17),
                heartbeat=captured - 21_000_000,
                ip="192.168.122.14",
            )
        ],
    }
    facts = {
        "vm": "default/testvm",
        "vm_uid": vm_uid,
        "old_vmi_uid": old_vmi_uid,
        "new_vmi_uid": new_vmi_uid,
        "old_pod": old_pod,
        "new_pod": new_pod,
        "leader": leader,
        "standby": standby,
        "other_vm_uid": ovm_uid,
        "other_vmi_uid": ovmi_uid,
        "first_decision": fmt_us(t_stop1),
        "create": fmt_us(t_created),
        "captured": fmt_us(captured),
    }
    return {"objects": objects, "logs": [L, S], "captured": captured, "facts": facts, "ids": ids}


README_ALWAYS = (
    "always-restart: kvtrace bundle — `default/testvm` (runStrategy Always): its VMI had "
    "been Running, went `Failed`, and the leader virt-controller deleted it (vm.go:1005, "
    "1685) and created a new one 0.19 s after the first decision line, with no "
    "start-failure backoff; the standby replica only waits for the lease.\n"
)

README_MG = (
    "must-gather-always-restart: the always-restart incident in KubeVirt must-gather layout "
    "(wrapper dir, `version`, `timestamp`, inspect-style `namespaces/…` tree, "
    "kubelet-prefixed virt-controller logs of both replicas); like every must-gather it has "
    "no Lease object.\n"
)

README_RERUN = (
    "rerun-on-failure-succeeded: kvtrace bundle — `default/batch-job` (runStrategy "
    "RerunOnFailure): its VMI ran and then `Succeeded` (guest shut down); the controller "
    "deleted it once (vm.go:1052, 1685) and, as designed, never started it again (VM "
    "`Stopped`, no VMI left).\n"
)


# --------------------------------------------------------------------------------------
# scenario 3: rerun-on-failure-succeeded
# --------------------------------------------------------------------------------------


def scenario_rerun_succeeded() -> dict[str, Any]:
    ids = Ids("kvtrace-sample-rerun-on-failure-succeeded")
    rv = RV(9_310_100)
    node = "node-c07"
    leader = "virt-controller-84d6c5f9b7-" + ids.suffix()
    standby = "virt-controller-84d6c5f9b7-" + ids.suffix()
    vm_uid, vmi_uid = ids.uuid4(), ids.uuid4()
    pod = "virt-launcher-batch-job-" + ids.suffix()
    fw_uuid, fw_serial = ids.uuid4(), ids.uuid4()
    leader_uid, standby_uid = ids.uuid4(), ids.uuid4()
    node_uid, kv_uid, lease_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()

    leader_start = t_us("2026-12-02T19:20:03.118240")
    standby_start = t_us("2026-12-02T19:20:04.902771")
    t_acquire = t_us("2026-12-02T19:20:21.671509")
    vm_created = t_us("2026-12-03T06:00:11.204417")
    t_startdec = t_us("2026-12-03T06:00:11.512806")
    t_created = t_us("2026-12-03T06:00:11.547332")
    t_stop = t_us("2026-12-03T07:48:51.622408")
    t_dispatch = t_us("2026-12-03T07:48:51.640931")
    captured = t_us("2026-12-03T08:05:12.208331")

    lrng = random.Random("rerun-lines")
    L = ControllerLog(leader, "rerun-leader")
    t_att = startup(L, leader_start)
    assert 15_000_000 <= t_acquire - t_att <= 19_400_000
    became_leader(L, t_acquire, lrng)
    bj = {"namespace": "default", "name": "batch-job", "uid": vm_uid}
    L.kv(t_startdec, "info", "Starting VM due to runStrategy: RerunOnFailure", "vm.go:1081", bj)
    L.kv(
        t_created,
        "info",
        "Started VM by creating the new virtual machine instance batch-job",
        "vm.go:1341",
        bj,
    )
    L.kv(
        t_stop,
        "info",
        "Stopping VM with VMI in phase Succeeded and VM runStrategy: RerunOnFailure",
        "vm.go:1052",
        bj,
    )
    L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/batch-job with phase Succeeded",
        "vm.go:1685",
        bj,
    )
    S = ControllerLog(standby, "rerun-standby")
    startup(S, standby_start)

    rv_rev = rv(5)
    rv_ev_vm = rv(88_000)
    rv_ev_pod = rv(4)
    vm_obj = make_vm(
        name="batch-job",
        ns="default",
        uid=vm_uid,
        created=vm_created,
        rv=rv(61),
        generation=1,
        run_strategy="RerunOnFailure",
        fw_uuid=fw_uuid,
        fw_serial=fw_serial,
        status={
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-12-03T07:48:52Z",
                    "message": "VMI does not exist",
                    "reason": "VMINotExists",
                    "status": "False",
                    "type": "Ready",
                }
            ],
            "desiredGeneration": 1,
            "observedGeneration": 1,
            "printableStatus": "Stopped",
            "runStrategy": "RerunOnFailure",
            "volumeSnapshotStatuses": [
                {
                    "enabled": False,
                    "name": "rootdisk",
                    "reason": "No VolumeSnapshotClass: Volume snapshots are not configured "
                    "for this StorageClass [ceph-block] [rootdisk]",
                },
                {
                    "enabled": False,
                    "name": "cloudinitdisk",
                    "reason": "Snapshot is not supported for this volumeSource type "
                    "[cloudinitdisk]",
                },
            ],
        },
        app_label="batch-job",
    )
    rev_obj = make_revision(vm_obj, t_created - 20_000, rv_rev)
    vmi_ref = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "name": "batch-job",
        "namespace": "default",
        "resourceVersion": str(int(rv_ev_vm) - 3),
        "uid": vmi_uid,
    }
    events = [
        make_event(
            ns="default",
            involved=ref(vm_obj, str(int(rv_ev_vm) - 1)),
            reason="SuccessfulDelete",
            message=f"{STOPPED_MSG}{vmi_uid}",
            us=t_dispatch - 310,
            component="virtualmachine-controller",
            rv=rv_ev_vm,
            extra_ns=226,
        ),
        make_event(
            ns="default",
            involved=vmi_ref,
            reason="SuccessfulDelete",
            message=f"Deleted virtual machine pod {pod}",
            us=t_us("2026-12-03T07:48:51.671052"),
            component="virtualmachine-controller",
            rv=rv_ev_pod,
            extra_ns=845,
        ),
    ]
    events.sort(key=lambda e: e["metadata"]["name"])
    objects = {
        "VirtualMachine": [vm_obj],
        "VirtualMachineInstance": [],
        "Pod": [
            make_controller_pod(
                name=leader,
                uid=leader_uid,
                rs_hash="84d6c5f9b7",
                created=leader_start - 2_800_000,
                started=leader_start - 800_000,
                ready=leader_start + 15_500_000,
                rv=str(int(rv_rev) - 41_000),
                node="node-c01",
                ip="10.244.0.77",
            ),
            make_controller_pod(
                name=standby,
                uid=standby_uid,
                rs_hash="84d6c5f9b7",
                created=standby_start - 3_000_000,
                started=standby_start - 800_000,
                ready=standby_start + 15_800_000,
                rv=str(int(rv_rev) - 40_900),
                node="node-c02",
                ip="10.244.1.52",
            ),
        ],
        "ControllerRevision": [rev_obj],
        "Event": events,
        "Lease": [
            make_lease(
                holder=leader,
                acquire=t_acquire,
                renew=captured - 1_402_118,
                transitions=5,
                created=t_us("2026-10-02T09:31:12.000000"),
                rv=rv(7_700),
                uid=lease_uid,
            )
        ],
        "KubeVirt": [
            make_kubevirt(uid=kv_uid, created=t_us("2026-10-02T09:30:20.000000"), rv="1523")
        ],
        "Node": [
            make_node(
                name=node,
                uid=node_uid,
                created=t_us("2026-10-02T09:15:02.000000"),
                rv=rv(12),
                heartbeat=captured - 33_000_000,
                ip="192.168.122.17",
            )
        ],
    }
    facts = {
        "vm": "default/batch-job",
        "vm_uid": vm_uid,
        "vmi_uid": vmi_uid,
        "pod": pod,
        "leader": leader,
        "standby": standby,
        "start": fmt_us(t_created),
        "stop": fmt_us(t_stop),
        "dispatch": fmt_us(t_dispatch),
        "captured": fmt_us(captured),
    }
    return {"objects": objects, "logs": [L, S], "captured": captured, "facts": facts, "ids": ids}


# --------------------------------------------------------------------------------------
# fault-injection samples: each shows one injected controller fault (one model rule)
# --------------------------------------------------------------------------------------


def snapshot_statuses() -> list[dict[str, Any]]:
    return [
        {
            "enabled": False,
            "name": "rootdisk",
            "reason": "No VolumeSnapshotClass: Volume snapshots are not configured for this "
            "StorageClass [ceph-block] [rootdisk]",
        },
        {
            "enabled": False,
            "name": "cloudinitdisk",
            "reason": "Snapshot is not supported for this volumeSource type [cloudinitdisk]",
        },
    ]


def vm_status_running(*, ready_since: int, generation: int, strategy: str) -> dict[str, Any]:
    return {
        "conditions": [
            {
                "lastProbeTime": None,
                "lastTransitionTime": fmt_s(ready_since),
                "status": "True",
                "type": "Ready",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": None,
                "status": "True",
                "type": "LiveMigratable",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": None,
                "status": "True",
                "type": "StorageLiveMigratable",
            },
        ],
        "created": True,
        "desiredGeneration": generation,
        "observedGeneration": generation,
        "printableStatus": "Running",
        "ready": True,
        "runStrategy": strategy,
        "volumeSnapshotStatuses": snapshot_statuses(),
    }


def vm_status_stopped(*, since: int, generation: int, strategy: str) -> dict[str, Any]:
    return {
        "conditions": [
            {
                "lastProbeTime": None,
                "lastTransitionTime": fmt_s(since),
                "message": "VMI does not exist",
                "reason": "VMINotExists",
                "status": "False",
                "type": "Ready",
            }
        ],
        "desiredGeneration": generation,
        "observedGeneration": generation,
        "printableStatus": "Stopped",
        "runStrategy": strategy,
        "volumeSnapshotStatuses": snapshot_statuses(),
    }


def vmi_ref(name: str, uid: str, rv: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "name": name,
        "namespace": "default",
        "resourceVersion": rv,
        "uid": uid,
    }


class FaultScene:
    """One fault sample's cluster: a leader and a standby virt-controller (the standby only
    waits for the lease), the Lease, the KubeVirt CR and one node. A scenario adds its VM's
    log lines, objects and Events."""

    def __init__(
        self,
        name: str,
        *,
        rv_start: int,
        rs_hash: str,
        leader_start: int,
        acquire_after: int,
        node: str,
        node_ip: str,
    ) -> None:
        # a stale Lease record: 15 s from the first look, then the next 2-4.4 s retry
        # (client-go leaderelection.go:252-273, 461-470 at v1.9.0)
        assert 15_000_000 <= acquire_after <= 19_400_000
        self.name = name
        self.ids = Ids(f"kvtrace-sample-{name}")
        self.rv = RV(rv_start)
        self.rs_hash = rs_hash
        self.node, self.node_ip = node, node_ip
        self.leader = f"virt-controller-{rs_hash}-" + self.ids.suffix()
        self.standby = f"virt-controller-{rs_hash}-" + self.ids.suffix()
        self.leader_uid, self.standby_uid = self.ids.uuid4(), self.ids.uuid4()
        self.node_uid, self.kv_uid, self.lease_uid = (
            self.ids.uuid4(),
            self.ids.uuid4(),
            self.ids.uuid4(),
        )
        self.leader_start = leader_start
        self.standby_start = leader_start + self.ids.rng.randint(900_000, 2_100_000)
        self.L = ControllerLog(self.leader, f"{name}-leader")
        self.t_acquire = startup(self.L, leader_start) + acquire_after
        became_leader(self.L, self.t_acquire, random.Random(f"{name}-lines"))
        self.S = ControllerLog(self.standby, f"{name}-standby")
        startup(self.S, self.standby_start)
        self.events: list[dict[str, Any]] = []

    # objects -------------------------------------------------------------------------
    def vm(
        self,
        name: str,
        uid: str,
        *,
        created: int,
        generation: int,
        strategy: str,
        status: dict[str, Any],
    ) -> dict[str, Any]:
        return make_vm(
            name=name,
            ns="default",
            uid=uid,
            created=created,
            rv="0",  # set by finish(): the VM's last write comes after its Events
            generation=generation,
            run_strategy=strategy,
            fw_uuid=self.ids.uuid4(),
            fw_serial=self.ids.uuid4(),
            status=status,
        )

    def vmi_and_pod(
        self,
        vm: dict[str, Any],
        *,
        uid: str,
        created: int,
        phases: list[tuple[str, int]],
        pod_name: str,
        pod_uid: str,
        pod_ip: str,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A VMI with its launcher pod; the pod appears with Scheduling and is Ready just
        before the Scheduled hand-over (lifecycle.go:396)."""
        at = dict(phases)
        phase = phases[-1][0]
        vmi = make_vmi(
            vm=vm,
            uid=uid,
            created=created,
            rv=self.rv(self.ids.rng.randint(40, 90)),
            node=self.node,
            phases=phases,
            phase=phase,
            pod_uid=pod_uid,
            ready_since=at.get("Running", at["Scheduled"]),
        )
        iface = vmi["status"]["interfaces"][0]
        iface.update({"ipAddress": pod_ip, "ipAddresses": [pod_ip]})
        iface["mac"] = "02:" + ":".join(self.ids.hexstr(2) for _ in range(5))
        pod = make_launcher_pod(
            vmi=vmi,
            pod_name=pod_name,
            pod_uid=pod_uid,
            created=at["Scheduling"] - self.ids.rng.randint(4_000, 12_000),
            rv=self.rv(self.ids.rng.randint(2, 9)),
            node=self.node,
            started=at["Scheduled"] - self.ids.rng.randint(900_000, 1_400_000),
            ready=at["Scheduled"] - self.ids.rng.randint(60_000, 180_000),
            qemu_timeout=self.ids.rng.randint(240, 300),
            pod_ip=pod_ip,
        )
        pod["status"]["hostIP"] = self.node_ip
        pod["status"]["hostIPs"] = [{"ip": self.node_ip}]
        return vmi, pod

    def event(
        self,
        involved: dict[str, Any],
        reason: str,
        message: str,
        us: int,
        *,
        etype: str = "Normal",
        last: int | None = None,
        count: int = 1,
    ) -> None:
        rv = self.rv(self.ids.rng.randint(3, 60))
        e = make_event(
            ns="default",
            involved=involved,
            reason=reason,
            message=message,
            us=us,
            component="virtualmachine-controller",
            rv=rv,
            extra_ns=self.ids.rng.randint(0, 999),
            etype=etype,
        )
        if count > 1 and last is not None:
            e["count"] = count
            e["lastTimestamp"] = fmt_s(last)
        self.events.append(e)

    def vm_event(self, vm: dict[str, Any], reason: str, message: str, us: int, **kw: Any) -> None:
        self.event(ref(vm, str(self.rv.v - 1)), reason, message, us, **kw)

    def finish(
        self,
        *,
        captured: int,
        vms: list[dict[str, Any]],
        vmis: list[dict[str, Any]],
        pods: list[dict[str, Any]],
        revisions: list[dict[str, Any]],
        transitions: int,
    ) -> dict[str, Any]:
        for vm in vms:
            vm["metadata"]["resourceVersion"] = self.rv(self.ids.rng.randint(5, 30))
        lease = make_lease(
            holder=self.leader,
            acquire=self.t_acquire,
            renew=captured - self.ids.rng.randint(200_000, 1_900_000),
            transitions=transitions,
            created=t_us("2026-10-02T09:31:12.000000"),
            rv=self.rv(self.ids.rng.randint(200, 900)),
            uid=self.lease_uid,
        )
        lease_ev = make_event(
            ns=KUBEVIRT_NS,
            involved={
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "name": "virt-controller",
                "namespace": KUBEVIRT_NS,
                "resourceVersion": str(int(lease["metadata"]["resourceVersion"]) - 1_000),
                "uid": self.lease_uid,
            },
            reason="LeaderElection",
            message=f"{self.leader} became leader",
            us=self.t_acquire + self.ids.rng.randint(700, 1_500),
            component="virt-controller",
            rv=str(int(lease["metadata"]["resourceVersion"]) - 999),
            extra_ns=self.ids.rng.randint(0, 999),
        )
        events = sorted(
            [*self.events, lease_ev],
            key=lambda e: (e["metadata"]["namespace"], e["metadata"]["name"]),
        )
        first_rv = int(lease_ev["metadata"]["resourceVersion"])
        controllers = [
            make_controller_pod(
                name=pod,
                uid=uid,
                rs_hash=self.rs_hash,
                created=start - 3_000_000 - shift,
                started=start - 850_000,
                ready=start + 15_700_000,
                rv=str(first_rv - 400 + shift // 1_000),
                node=node,
                ip=ip,
            )
            for pod, uid, start, shift, node, ip in (
                (self.leader, self.leader_uid, self.leader_start, 0, "node-c01", "10.244.0.42"),
                (
                    self.standby,
                    self.standby_uid,
                    self.standby_start,
                    100_000,
                    "node-c02",
                    "10.244.1.37",
                ),
            )
        ]
        objects = {
            "VirtualMachine": vms,
            "VirtualMachineInstance": vmis,
            "Pod": [*pods, *controllers],
            "ControllerRevision": revisions,
            "Event": events,
            "Lease": [lease],
            "KubeVirt": [
                make_kubevirt(
                    uid=self.kv_uid, created=t_us("2026-10-02T09:30:20.000000"), rv="1523"
                )
            ],
            "Node": [
                make_node(
                    name=self.node,
                    uid=self.node_uid,
                    created=t_us("2026-10-02T09:15:40.000000"),
                    rv=self.rv(self.ids.rng.randint(5, 40)),
                    heartbeat=captured - self.ids.rng.randint(10_000_000, 50_000_000),
                    ip=self.node_ip,
                )
            ],
        }
        return {"objects": objects, "logs": [self.L, self.S], "captured": captured}


def vm_key(name: str, uid: str) -> dict[str, str]:
    """The object fields a VM-controller line carries for the VM (log.go:238-255)."""
    return {"namespace": "default", "name": name, "uid": uid}


def start_lines(
    log: ControllerLog, t: int, vm: dict[str, str], strategy: str, create_after: int
) -> int:
    """A create decision and the successful VMI create (vm.go:1032/1081, 1341)."""
    pos = {"Always": "vm.go:1032", "RerunOnFailure": "vm.go:1081"}[strategy]
    log.kv(t, "info", f"Starting VM due to runStrategy: {strategy}", pos, vm)
    log.kv(
        t + create_after,
        "info",
        f"Started VM by creating the new virtual machine instance {vm['name']}",
        "vm.go:1341",
        vm,
    )
    return t + create_after


def normal_phases(created: int, rng: random.Random) -> list[tuple[str, int]]:
    scheduling = created + rng.randint(190_000, 320_000)
    scheduled = scheduling + rng.randint(2_600_000, 3_400_000)
    return [
        ("Pending", created),
        ("Scheduling", scheduling),
        ("Scheduled", scheduled),
        ("Running", scheduled + rng.randint(1_100_000, 1_700_000)),
    ]


# ---- 1: duplicate create on a stale VMI cache (KV-EX-01) ------------------------------


def scenario_fault_duplicate_create() -> dict[str, Any]:
    sc = FaultScene(
        "fault-duplicate-create",
        rv_start=5_402_200,
        rs_hash="7d9f4c6b58",
        leader_start=t_us("2026-12-05T10:02:11.508412"),
        acquire_after=16_874_209,
        node="node-c03",
        node_ip="192.168.122.13",
    )
    ids = sc.ids
    vm_uid, vmi_uid, pod_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()
    pod = "virt-launcher-web-frontend-" + ids.suffix()
    vm_created = t_us("2026-12-05T10:15:40.214773")
    t_start = vm_created + 288_410
    obj = vm_key("web-frontend", vm_uid)
    t_created = start_lines(sc.L, t_start, obj, "Always", 33_918)
    phases = normal_phases(t_created, ids.rng)
    running = phases[-1][1]

    # 5 min later the creation expectation has expired (expectations.go:48) while the VMI
    # informer still misses the add event: the reconcile sees no VMI and starts again.
    exists = 'virtualmachineinstances.kubevirt.io "web-frontend" already exists'
    reason = f"Failure while starting VMI: {exists}"
    t_dup = t_created + 309_412_331
    rounds = []
    t = t_dup
    for gap in (0, 5_602):  # the re-enqueue retries after 5 ms (workqueue rate limiter)
        t += gap
        sc.L.kv(t, "info", "Starting VM due to runStrategy: Always", "vm.go:1032", obj)
        t += ids.rng.randint(2_800, 4_100)
        sc.L.kv(t, "info", "Failed to create VirtualMachineInstance: /", "vm.go:1336", obj)
        rounds.append(t)
        t += ids.rng.randint(280, 450)
        sc.L.kv(t, "error", "Reconciling the VirtualMachine failed.", "vm.go:448", obj, reason)
        t += ids.rng.randint(7_000, 9_000)
        sc.L.kv(
            t,
            "info",
            "re-enqueuing VirtualMachine default/web-frontend",
            "vm.go:348",
            reason=reason,
        )
    captured = t_dup + 131_772_504

    vm_obj = sc.vm(
        "web-frontend",
        vm_uid,
        created=vm_created,
        generation=1,
        strategy="Always",
        status=vm_status_running(ready_since=running, generation=1, strategy="Always"),
    )
    rev = make_revision(vm_obj, t_created - 19_870, sc.rv(7))
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=vmi_uid,
        created=t_created - 8_211,
        phases=phases,
        pod_name=pod,
        pod_uid=pod_uid,
        pod_ip="10.244.3.81",
    )
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}web-frontend", t_created + 171)
    sc.event(
        vmi_ref("web-frontend", vmi_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {pod}",
        phases[1][1] - 3_114,
    )
    sc.vm_event(
        vm_obj,
        "FailedCreate",
        f"Error creating virtual machine instance: {exists}",
        rounds[0] - 120,
        etype="Warning",
        count=2,
        last=rounds[1] - 95,
    )
    out = sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=4,
    )
    return out


# ---- 2: RerunOnFailure restarts a VMI that Succeeded (KV-RS-03) -----------------------


def scenario_fault_rerun_after_succeeded() -> dict[str, Any]:
    sc = FaultScene(
        "fault-rerun-after-succeeded",
        rv_start=6_118_400,
        rs_hash="5c7b8d9f46",
        leader_start=t_us("2026-12-08T12:51:40.330871"),
        acquire_after=15_902_117,
        node="node-c05",
        node_ip="192.168.122.15",
    )
    ids = sc.ids
    vm_uid, old_uid, new_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()
    old_pod = "virt-launcher-report-gen-" + ids.suffix()
    new_pod, new_pod_uid = "virt-launcher-report-gen-" + ids.suffix(), ids.uuid4()
    obj = vm_key("report-gen", vm_uid)
    vm_created = t_us("2026-12-08T13:20:05.118230")
    t_first = start_lines(sc.L, vm_created + 301_772, obj, "RerunOnFailure", 31_004)
    t_stop = t_us("2026-12-08T14:02:47.530118")
    t_dispatch = t_stop + 17_823
    sc.L.kv(
        t_stop,
        "info",
        "Stopping VM with VMI in phase Succeeded and VM runStrategy: RerunOnFailure",
        "vm.go:1052",
        obj,
    )
    sc.L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/report-gen with phase Succeeded",
        "vm.go:1685",
        obj,
    )
    # the fault: no Start request exists (Succeeded appends none, vm.go:1059-1063), yet the
    # VMI is recreated as soon as the old one is gone
    t_restart = t_stop + 2_904_115
    t_created = start_lines(sc.L, t_restart, obj, "RerunOnFailure", 28_773)
    phases = normal_phases(t_created, ids.rng)
    captured = t_created + 184_207_660

    vm_obj = sc.vm(
        "report-gen",
        vm_uid,
        created=vm_created,
        generation=1,
        strategy="RerunOnFailure",
        status=vm_status_running(
            ready_since=phases[-1][1], generation=1, strategy="RerunOnFailure"
        ),
    )
    rev = make_revision(vm_obj, t_first - 20_411, sc.rv(9))
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}report-gen", t_first + 188)
    sc.event(
        vmi_ref("report-gen", old_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {old_pod}",
        t_first + 243_512,
    )
    sc.rv(41_000)
    sc.vm_event(vm_obj, "SuccessfulDelete", f"{STOPPED_MSG}{old_uid}", t_dispatch - 281)
    sc.event(
        vmi_ref("report-gen", old_uid, str(sc.rv.v - 1)),
        "SuccessfulDelete",
        f"Deleted virtual machine pod {old_pod}",
        t_dispatch + 31_950,
    )
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=new_uid,
        created=t_created - 9_027,
        phases=phases,
        pod_name=new_pod,
        pod_uid=new_pod_uid,
        pod_ip="10.244.5.23",
    )
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}report-gen", t_created + 166)
    sc.event(
        vmi_ref("report-gen", new_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {new_pod}",
        phases[1][1] - 2_870,
    )
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=6,
    )


# ---- 3: delete and create in one reconcile (KV-RC-01) ---------------------------------


def scenario_fault_delete_create_one_reconcile() -> dict[str, Any]:
    sc = FaultScene(
        "fault-delete-create-one-reconcile",
        rv_start=7_730_900,
        rs_hash="69c4f7b8d5",
        leader_start=t_us("2026-12-10T07:38:52.017734"),
        acquire_after=17_316_085,
        node="node-c06",
        node_ip="192.168.122.16",
    )
    ids = sc.ids
    vm_uid, old_uid, new_uid = ids.uuid4(), ids.uuid4(), ids.uuid4()
    new_pod, new_pod_uid = "virt-launcher-cache-node-" + ids.suffix(), ids.uuid4()
    obj = vm_key("cache-node", vm_uid)
    vm_created = t_us("2026-12-01T15:44:09.000000")
    rev_created = t_us("2026-12-01T15:44:09.602511")
    # one reconcile, no return after stopVMI (vm.go:1016): stop, delete, start, create
    t_stop = t_us("2026-12-10T07:41:17.981207")
    t_dispatch = t_stop + 12_388
    sc.L.kv(
        t_stop,
        "info",
        "Stopping VM with VMI in phase Failed and VM runStrategy: Always",
        "vm.go:1005",
        obj,
    )
    sc.L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/cache-node with phase Failed",
        "vm.go:1685",
        obj,
    )
    t_created = start_lines(sc.L, t_dispatch + 1_902, obj, "Always", 16_874)
    phases = normal_phases(t_created, ids.rng)
    captured = t_created + 95_140_322

    vm_obj = sc.vm(
        "cache-node",
        vm_uid,
        created=vm_created,
        generation=1,
        strategy="Always",
        status=vm_status_running(ready_since=phases[-1][1], generation=1, strategy="Always"),
    )
    rev = make_revision(vm_obj, rev_created, sc.rv(3))
    sc.rv(52_000)
    sc.vm_event(vm_obj, "SuccessfulDelete", f"{STOPPED_MSG}{old_uid}", t_dispatch - 247)
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=new_uid,
        created=t_created - 8_530,
        phases=phases,
        pod_name=new_pod,
        pod_uid=new_pod_uid,
        pod_ip="10.244.6.40",
    )
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}cache-node", t_created + 193)
    sc.event(
        vmi_ref("cache-node", new_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {new_pod}",
        phases[1][1] - 3_402,
    )
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=2,
    )


# ---- 4: phase timestamps out of order (KV-PH-01) -------------------------------------


def scenario_fault_phase_regression() -> dict[str, Any]:
    sc = FaultScene(
        "fault-phase-regression",
        rv_start=8_204_500,
        rs_hash="8b6d5f7c94",
        leader_start=t_us("2026-12-12T15:58:30.774190"),
        acquire_after=18_240_662,
        node="node-c02",
        node_ip="192.168.122.12",
    )
    ids = sc.ids
    vm_uid, vmi_uid = ids.uuid4(), ids.uuid4()
    pod, pod_uid = "virt-launcher-api-server-" + ids.suffix(), ids.uuid4()
    obj = vm_key("api-server", vm_uid)
    vm_created = t_us("2026-12-12T16:05:33.402991")
    t_created = start_lines(sc.L, vm_created + 276_118, obj, "Always", 35_442)
    scheduling = t_created + 262_000
    # the fault: Running is stamped 5.5 s before Scheduled
    phases = [
        ("Pending", t_created),
        ("Scheduling", scheduling),
        ("Scheduled", t_created + 9_114_000),
        ("Running", t_created + 3_629_000),
    ]
    captured = t_created + 121_655_018

    vm_obj = sc.vm(
        "api-server",
        vm_uid,
        created=vm_created,
        generation=1,
        strategy="Always",
        status=vm_status_running(ready_since=phases[-1][1], generation=1, strategy="Always"),
    )
    rev = make_revision(vm_obj, t_created - 21_305, sc.rv(5))
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=vmi_uid,
        created=t_created - 8_870,
        phases=[
            ("Pending", t_created),
            ("Scheduling", scheduling),
            ("Scheduled", t_created + 3_180_000),
            ("Running", t_created + 3_629_000),
        ],
        pod_name=pod,
        pod_uid=pod_uid,
        pod_ip="10.244.2.66",
    )
    vmi["status"]["phaseTransitionTimestamps"] = [
        {"phase": p, "phaseTransitionTimestamp": fmt_s(t)} for p, t in phases
    ]
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}api-server", t_created + 158)
    sc.event(
        vmi_ref("api-server", vmi_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {pod}",
        scheduling - 2_955,
    )
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=3,
    )


# ---- 5: VMI names the wrong start revision (KV-SV-01) --------------------------------


def scenario_fault_wrong_revision_name() -> dict[str, Any]:
    sc = FaultScene(
        "fault-wrong-revision-name",
        rv_start=9_016_700,
        rs_hash="4f8c6d7b59",
        leader_start=t_us("2026-12-14T11:20:06.551904"),
        acquire_after=16_018_774,
        node="node-c04",
        node_ip="192.168.122.14",
    )
    ids = sc.ids
    vm_uid, vmi_uid = ids.uuid4(), ids.uuid4()
    pod, pod_uid = "virt-launcher-db-replica-" + ids.suffix(), ids.uuid4()
    obj = vm_key("db-replica", vm_uid)
    vm_created = t_us("2026-11-30T08:12:40.000000")
    t_created = start_lines(sc.L, t_us("2026-12-14T11:47:02.661540"), obj, "Always", 37_203)
    phases = normal_phases(t_created, ids.rng)
    captured = t_created + 142_890_117

    vm_obj = sc.vm(
        "db-replica",
        vm_uid,
        created=vm_created,
        generation=3,
        strategy="Always",
        status=vm_status_running(ready_since=phases[-1][1], generation=3, strategy="Always"),
    )
    rev = make_revision(vm_obj, t_created - 20_118, sc.rv(6))
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=vmi_uid,
        created=t_created - 9_340,
        phases=phases,
        pod_name=pod,
        pod_uid=pod_uid,
        pod_ip="10.244.4.19",
    )
    # the fault: generation 3 was started (annotation, revision), the VMI names generation 2
    vmi["status"]["virtualMachineRevisionName"] = f"revision-start-vm-{vm_uid}-2"
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}db-replica", t_created + 204)
    sc.event(
        vmi_ref("db-replica", vmi_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {pod}",
        phases[1][1] - 3_033,
    )
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=5,
    )


# ---- 6: restart 2 s after a failed start, no backoff (KV-BO-01) ----------------------


def scenario_fault_backoff_violated() -> dict[str, Any]:
    sc = FaultScene(
        "fault-backoff-violated",
        rv_start=9_870_300,
        rs_hash="6d9b7c5f84",
        leader_start=t_us("2026-12-16T21:12:44.092515"),
        acquire_after=15_611_930,
        node="node-c08",
        node_ip="192.168.122.18",
    )
    ids = sc.ids
    vm_uid, vmi_uid = ids.uuid4(), ids.uuid4()
    pod, pod_uid = "virt-launcher-flaky-app-" + ids.suffix(), ids.uuid4()
    obj = vm_key("flaky-app", vm_uid)
    vm_created = t_us("2026-12-16T21:30:12.504331")
    t_first = start_lines(sc.L, vm_created + 266_930, obj, "Always", 30_518)
    scheduling = t_first + 251_000
    scheduled = t_first + 3_402_000
    failed = t_first + 6_118_000  # qemu crashed before the guest ran: Scheduled → Failed
    t_stop = t_first + 6_342_771
    t_dispatch = t_stop + 14_466
    stop_msg = "Stopping VM with VMI in phase Failed and VM runStrategy: Always"
    sc.L.kv(t_stop, "info", stop_msg, "vm.go:1005", obj)
    sc.L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/flaky-app with phase Failed",
        "vm.go:1685",
        obj,
    )
    sc.L.kv(t_stop + 88_902, "info", stop_msg, "vm.go:1005", obj)  # VMI terminating
    # the fault: startFailure says retry after 12 s, the VMI is recreated after 2 s
    t_restart = start_lines(sc.L, t_stop + 2_011_604, obj, "Always", 29_337)
    # kvtrace collect listed the objects while the failed VMI was still terminating; the
    # logs, fetched afterwards, already hold the restart
    captured = t_stop + 537_118
    assert t_restart > captured

    vm_obj = sc.vm(
        "flaky-app",
        vm_uid,
        created=vm_created,
        generation=1,
        strategy="Always",
        status={
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_s(t_stop + 21_000),
                    "message": "virt-launcher pod is terminating",
                    "reason": "PodTerminating",
                    "status": "False",
                    "type": "Ready",
                }
            ],
            "created": True,
            "desiredGeneration": 1,
            "observedGeneration": 1,
            "printableStatus": "CrashLoopBackOff",
            "runStrategy": "Always",
            "startFailure": {
                "consecutiveFailCount": 1,
                "lastFailedVMIUID": vmi_uid,
                "retryAfterTimestamp": fmt_s(t_stop + 12_000_000),
            },
            "volumeSnapshotStatuses": snapshot_statuses(),
        },
    )
    rev = make_revision(vm_obj, t_first - 19_602, sc.rv(4))
    phases = [
        ("Pending", t_first),
        ("Scheduling", scheduling),
        ("Scheduled", scheduled),
        ("Failed", failed),
    ]
    vmi, pod_obj = sc.vmi_and_pod(
        vm_obj,
        uid=vmi_uid,
        created=t_first - 8_164,
        phases=phases,
        pod_name=pod,
        pod_uid=pod_uid,
        pod_ip="10.244.8.52",
    )
    meta, status = vmi["metadata"], vmi["status"]
    meta["deletionGracePeriodSeconds"] = 0
    meta["deletionTimestamp"] = fmt_s(t_dispatch)
    meta["finalizers"] = ["kubevirt.io/foregroundDeleteVirtualMachine"]  # vm.go:2503-2511
    status["conditions"] = [
        {
            "lastProbeTime": None,
            "lastTransitionTime": fmt_s(t_stop + 21_000),
            "message": "virt-launcher pod is terminating",
            "reason": "PodTerminating",
            "status": "False",
            "type": "Ready",
        }
    ]
    for never_ran in ("guestOSInfo", "interfaces", "currentCPUTopology"):
        status.pop(never_ran)
    status["memory"].pop("guestCurrent")
    pmeta, pstatus = pod_obj["metadata"], pod_obj["status"]
    pmeta["deletionGracePeriodSeconds"] = 60
    pmeta["deletionTimestamp"] = fmt_s(t_dispatch + 31_000 + 60_000_000)
    compute = pstatus["containerStatuses"][0]
    compute["ready"] = False
    for cond in pstatus["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady", "kubevirt.io/virtual-machine-unpaused"):
            cond["status"] = "False"
            cond["lastTransitionTime"] = fmt_s(failed)
            if cond["type"] != "kubevirt.io/virtual-machine-unpaused":
                cond["reason"] = "ContainersNotReady"
                cond["message"] = "containers with unready status: [compute]"
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}flaky-app", t_first + 177)
    sc.event(
        vmi_ref("flaky-app", vmi_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {pod}",
        scheduling - 3_240,
    )
    sc.vm_event(vm_obj, "SuccessfulDelete", f"{STOPPED_MSG}{vmi_uid}", t_dispatch - 262)
    sc.event(
        vmi_ref("flaky-app", vmi_uid, str(sc.rv.v - 1)),
        "SuccessfulDelete",
        f"Deleted virtual machine pod {pod}",
        t_dispatch + 31_408,
    )
    vmi["metadata"]["resourceVersion"] = sc.rv(4)
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[vmi],
        pods=[pod_obj],
        revisions=[rev],
        transitions=7,
    )


# ---- 7: the standby replica acts without the lease (KV-LD-01) ------------------------


def scenario_fault_non_leader_action() -> dict[str, Any]:
    sc = FaultScene(
        "fault-non-leader-action",
        rv_start=10_552_800,
        rs_hash="7b5d8c6f49",
        leader_start=t_us("2026-12-18T05:11:03.662018"),
        acquire_after=16_470_351,
        node="node-c09",
        node_ip="192.168.122.19",
    )
    ids = sc.ids
    vm_uid, vmi_uid = ids.uuid4(), ids.uuid4()
    pod = "virt-launcher-batch-worker-" + ids.suffix()
    obj = vm_key("batch-worker", vm_uid)
    vm_created = t_us("2026-12-18T05:26:44.190552")
    # the fault: the standby, which never acquired the lease, starts the new VM
    t_created = start_lines(sc.S, vm_created + 251_337, obj, "Always", 34_009)
    # 4 min later `virtctl stop` sets runStrategy Halted; the leader stops the VMI
    t_halt = t_created + 252_604_118
    running = "Stopping VM with VMI in phase Running due to runStrategy: Halted"
    done = "Stopping VM with VMI in phase Succeeded due to runStrategy: Halted"
    sc.L.kv(t_halt, "info", running, "vm.go:1134", obj)
    t_dispatch = t_halt + 16_204
    sc.L.kv(
        t_dispatch,
        "info",
        "Dispatching delete event for vmi default/batch-worker with phase Running",
        "vm.go:1685",
        obj,
    )
    sc.L.kv(t_halt + 51_877, "info", running, "vm.go:1134", obj)
    sc.L.kv(t_halt + 604_315, "info", running, "vm.go:1134", obj)
    t_final = t_halt + 4_118_092
    sc.L.kv(t_final, "info", done, "vm.go:1134", obj)
    sc.L.kv(t_final + 40_771, "info", done, "vm.go:1134", obj)
    captured = t_halt + 183_700_425

    vm_obj = sc.vm(
        "batch-worker",
        vm_uid,
        created=vm_created,
        generation=2,
        strategy="Halted",
        status=vm_status_stopped(since=t_final + 61_000, generation=2, strategy="Halted"),
    )
    first = json.loads(json.dumps(vm_obj))
    first["metadata"]["generation"] = 1
    first["spec"]["runStrategy"] = "Always"
    rev = make_revision(first, t_created - 20_775, sc.rv(6))
    sc.vm_event(vm_obj, "SuccessfulCreate", f"{STARTED_MSG}batch-worker", t_created + 181)
    sc.event(
        vmi_ref("batch-worker", vmi_uid, str(sc.rv.v - 2)),
        "SuccessfulCreate",
        f"Created virtual machine pod {pod}",
        t_created + 238_460,
    )
    sc.rv(24_000)
    sc.vm_event(vm_obj, "SuccessfulDelete", f"{STOPPED_MSG}{vmi_uid}", t_dispatch - 233)
    sc.event(
        vmi_ref("batch-worker", vmi_uid, str(sc.rv.v - 1)),
        "SuccessfulDelete",
        f"Deleted virtual machine pod {pod}",
        t_dispatch + 29_873,
    )
    return sc.finish(
        captured=captured,
        vms=[vm_obj],
        vmis=[],
        pods=[],
        revisions=[rev],
        transitions=8,
    )


FAULTS: list[tuple[str, str, Any, str]] = [  # (dir, rule, scenario, README line)
    (
        "fault-duplicate-create",
        "KV-EX-01",
        scenario_fault_duplicate_create,
        "kvtrace bundle — `default/web-frontend` (Always): 5 min after its VMI was created the "
        "leader, on a VMI cache that missed the add event, decides to start it again; the "
        "create collides (`Failed to create VirtualMachineInstance: /`, vm.go:1336; "
        "`Failure while starting VMI: … already exists`, vm.go:448, 348) twice. Trips KV-EX-01.",
    ),
    (
        "fault-rerun-after-succeeded",
        "KV-RS-03",
        scenario_fault_rerun_after_succeeded,
        "kvtrace bundle — `default/report-gen` (RerunOnFailure): its VMI `Succeeded` and was "
        "deleted (vm.go:1052, 1685), then recreated 2.9 s later (vm.go:1081, 1341) with no "
        "start request. Trips KV-RS-03.",
    ),
    (
        "fault-delete-create-one-reconcile",
        "KV-RC-01",
        scenario_fault_delete_create_one_reconcile,
        "kvtrace bundle — `default/cache-node` (Always): one reconcile of the leader stops "
        "and deletes the Failed VMI (vm.go:1005, 1685) and, without returning, starts and "
        "creates its successor 2–19 ms later (vm.go:1032, 1341). Trips KV-RC-01.",
    ),
    (
        "fault-phase-regression",
        "KV-PH-01",
        scenario_fault_phase_regression,
        "kvtrace bundle — `default/api-server` (Always): a normal start, but the VMI's "
        "`phaseTransitionTimestamps` stamp `Running` 5.5 s before `Scheduled`. Trips KV-PH-01.",
    ),
    (
        "fault-wrong-revision-name",
        "KV-SV-01",
        scenario_fault_wrong_revision_name,
        "kvtrace bundle — `default/db-replica` (Always, generation 3): the VMI carries "
        '`kubevirt.io/vm-generation: "3"` and revision `…-3` exists, but its '
        "`status.virtualMachineRevisionName` names generation 2. Trips KV-SV-01.",
    ),
    (
        "fault-backoff-violated",
        "KV-BO-01",
        scenario_fault_backoff_violated,
        "kvtrace bundle — `default/flaky-app` (Always): its first VMI failed before Running "
        "(`startFailure` count 1, retry after 12 s) and was recreated 2 s after the stop "
        "decision with no `Delaying start` line; the objects were listed while the failed VMI "
        "was still terminating. Trips KV-BO-01.",
    ),
    (
        "fault-non-leader-action",
        "KV-LD-01",
        scenario_fault_non_leader_action,
        "kvtrace bundle — `default/batch-worker`: the standby replica, which only logged "
        "`attempting to acquire leader lease`, starts the new VM (vm.go:1032, 1341) while the "
        "other replica holds the Lease; 4 min later the leader stops it (Halted). Trips "
        "KV-LD-01.",
    ),
]


# --------------------------------------------------------------------------------------


TOP_README = """\
# sample-logs

Invented, internally consistent incidents in the shapes KubeVirt v1.9.0 and kvtrace produce.
Regenerate with `python3 sample-logs/make_samples.py` (deterministic; commit the output).

- `always-restart/` — kvtrace bundle: Always VM whose Running-then-Failed VMI is deleted \
and recreated 0.19 s after the first decision line (no backoff), two controller replicas.
- `must-gather-always-restart/` — the same incident in KubeVirt must-gather layout (no Lease).
- `overhead/` — not a bundle: constructed v1.9.0 launcher pods and VMIs for \
`kvtrace verify-overhead` (8 clean cases, 15 mutated copies that each fail one check); see \
`overhead/CASES.md`.
- `rerun-on-failure-succeeded/` — kvtrace bundle: RerunOnFailure VM whose VMI Succeeded is \
deleted once and never restarted.

Fault-injection samples: each shows one injected virt-controller fault, and `kvtrace check -A` \
reports exactly that rule as violated (exit code 3).
"""


# Written by make_leader_samples.py's samples; listed here because this script writes README.md.
LEADER_README = """\
Leader-election samples (`python3 sample-logs/make_leader_samples.py`), for `kvtrace leader \
status|history` (docs/leader.md); `always-restart/` is the healthy two-replica case.

- `leader-failover-gap/` — the leader's node loses the API; it logs `failed to renew lease \
…` and `leaderelection lost` (end of previous.log) and restarts; the only other replica, a \
fresh pod, acquires 26.3 s later and then starts `default/web-2`, created in the gap. status \
0, history 3.
- `leader-expired-holder-gone/` — after a rollout the Lease names the deleted old leader and \
expired 3 min before capture; both new replicas are forbidden to read it. status 3, history \
3.
- `leader-split-brain/` — the leader's node freezes for 25 s; the standby takes over and \
starts `default/api-2` and `default/api-3`; the old leader resumes, re-enqueues \
`default/api-1` twice on conflicts, then loses the lease. status 0, history 3.
- `leader-endpoints-lock/` — the pre-v1.3 lock: an Endpoints with the \
`control-plane.alpha.kubernetes.io/leader` annotation record, no Lease (v1.9.0-shaped logs). \
status 0, history 0.
"""


def generate(out: Path) -> dict[str, Any]:
    a = scenario_always_restart()
    write_kvtrace_bundle(
        out / "always-restart",
        captured=a["captured"],
        objects=a["objects"],
        logs=a["logs"],
        readme=README_ALWAYS,
    )
    write_must_gather(
        out / "must-gather-always-restart",
        captured=a["captured"] + 96_000_000,
        objects={k: v for k, v in a["objects"].items() if k != "Lease"},
        logs=a["logs"],
        readme=README_MG,
        ids=Ids("kvtrace-sample-must-gather"),
    )
    r = scenario_rerun_succeeded()
    write_kvtrace_bundle(
        out / "rerun-on-failure-succeeded",
        captured=r["captured"],
        objects=r["objects"],
        logs=r["logs"],
        readme=README_RERUN,
    )
    facts = {"always-restart": a["facts"], "rerun-on-failure-succeeded": r["facts"]}
    fault_lines = []
    for name, rule, scenario, line in FAULTS:
        f = scenario()
        write_kvtrace_bundle(
            out / name,
            captured=f["captured"],
            objects=f["objects"],
            logs=f["logs"],
            readme=f"{name}: {line}\n",
        )
        fault_lines.append(f"- `{name}/` ({rule}) — {line}\n")
        facts[name] = {"rule": rule, "captured": fmt_us(f["captured"])}
    write(out / "README.md", TOP_README + "\n" + "".join(fault_lines) + "\n" + LEADER_README)
    return facts


SAMPLE_DIRS = [
    "always-restart",
    "must-gather-always-restart",
    "rerun-on-failure-succeeded",
    *(name for name, *_ in FAULTS),
]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--out", type=Path, default=HERE, help="output directory (default: sample-logs/)"
    )
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare")
    ap.add_argument("--facts", action="store_true", help="print the key names/UIDs/times as JSON")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            bad = []
            for d in [*SAMPLE_DIRS, "README.md"]:
                a, b = Path(tmp) / d, HERE / d
                if a.is_file():
                    if not b.is_file() or not filecmp.cmp(a, b, shallow=False):
                        bad.append(d)
                    continue
                for f in sorted(a.rglob("*")):
                    g = b / f.relative_to(a)
                    if f.is_file() and (not g.is_file() or not filecmp.cmp(f, g, shallow=False)):
                        bad.append(str(g.relative_to(HERE)))
            if bad:
                print("out of date:", *bad, sep="\n  ")
                return 1
            print("samples are up to date")
            return 0
    for d in SAMPLE_DIRS:
        if (args.out / d).exists():
            shutil.rmtree(args.out / d)
    facts = generate(args.out)
    if args.facts:
        print(json.dumps(facts, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
