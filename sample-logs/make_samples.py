#!/usr/bin/env python3
"""Generate kvtrace's sample bundles (deterministic; commit the output too).

    python3 sample-logs/make_samples.py            # rewrite every sample under sample-logs/
    python3 sample-logs/make_samples.py --check    # regenerate into a temp dir and diff

Every name, UID and time here is invented. Log lines follow the KubeVirt v1.9.0 shapes
described in the shared reference (controllers.md §1-§3, §7, §9.2; inputs.md §1-§4):
sorted-key compact JSON from go-kit, 6-digit µs timestamps with a literal Z, klog text
lines for client-go leader election, stdlib-adapter lines with pos stdlib.go:105 and ts,
and a kubelet ``--timestamps`` prefix (9 fraction digits) a few µs-ms after the body time.
Only lines printed at the default verbosity 2 appear.

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


TOP_README = """\
# sample-logs

Invented, internally consistent incidents in the shapes KubeVirt v1.9.0 and kvtrace produce.
Regenerate with `python3 sample-logs/make_samples.py` (deterministic; commit the output).

- `always-restart/` — kvtrace bundle: Always VM whose Running-then-Failed VMI is deleted \
and recreated 0.19 s after the first decision line (no backoff), two controller replicas.
- `must-gather-always-restart/` — the same incident in KubeVirt must-gather layout (no Lease).
- `rerun-on-failure-succeeded/` — kvtrace bundle: RerunOnFailure VM whose VMI Succeeded is \
deleted once and never restarted.
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
    write(out / "README.md", TOP_README)
    return {"always-restart": a["facts"], "rerun-on-failure-succeeded": r["facts"]}


SAMPLE_DIRS = ["always-restart", "must-gather-always-restart", "rerun-on-failure-succeeded"]


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
