"""The virt-launcher pod as v1.9.0's template service renders it (renderLaunchManifest,
pkg/virt-controller/services/template.go:395-797), and its status as the kubelet reports it.

Paths below are short: ``services/`` is pkg/virt-controller/services/, ``kvm/`` is
pkg/hypervisor/kvm/, all at v1.9.0 under the default KubeVirt configuration (cpuAllocationRatio
10, memoryOvercommit 100, the Beta gates on, no ResourceQuota in the namespace). The KubeVirt CR
may set ``additionalGuestMemoryOverheadRatio``; any other setting is refused.

* Memory overhead (CalculateMemoryOverhead, services/template.go:1678-1694): GetMemoryOverhead
  (kvm/hypervisorbackend.go:69-177) — page tables ``floor(ceil(R/1000)·1000/512)`` bytes for the
  VMI's ``requests.memory`` R (0 without one), 25+100+25+40+30 Mi, 8 Mi per vCPU (:89-113),
  8 Mi for the IOThread, 32 Mi of video RAM unless ``autoattachGraphicsDevice: false``, 100 Mi
  for dedicated CPUs or a VMI that wants QoS Guaranteed (:157-159;
  staging/src/kubevirt.io/api/core/v1/types.go:568-586) — times the CR's ratio with its kB
  rounding (:165-175, 203-209), then 250 Mi for a ``passtBinding`` interface
  (pkg/network/resources/memory.go:34-42, 97-100), which the ratio does not touch.
* Compute resources (services/renderresources.go): the VMI's own requests and limits, 50M of
  ephemeral storage (:103-117), device limits kvm/tun/vhost-net (:466-491), then the rules of
  services/template.go:1644-1650 in order — memory request from the limit or ``memory.guest``
  when the VMI has none (:263-293); dedicated CPUs: CPU request = limit = vCPUs and memory
  limit = request (:319-361), else a CPU request of vCPUs/10 (:128-147); hugepages: a
  ``hugepages-<size>`` request and limit, memory = overhead (+ what the request exceeds the
  guest by) (:220-259), else memory request (and limit) + overhead (:295-308). Calculated values
  first, the VMI's own win (:77-89). The API server then copies limits into missing requests.
* Quantities keep v1.9.0's formats (kvsim.quantity): the hugepages memory request of a VMI with a
  memory request is DecimalSI (``293601280``, not ``280Mi``).
* guest-console-log (services/serialconsolelog.go:16-93): requests 5m/35M, limits 15m/60M,
  requests = limits for dedicated or QoS-Guaranteed VMIs; absent when the VMI turns it off.
* Node selector (services/nodeselectorrenderer.go:33-100): ``kubevirt.io/cpumanager`` for
  dedicated CPUs. Volumes (services/rendervolumes.go): ``hugepages`` and ``hugetblfs-dir`` for
  hugepages VMIs (:499-528).

* Node selector ``machine-type.node.kubevirt.io/<type>`` when the VMI has a machine type
  (services/template.go:815-824), and the host-model node affinity for a VMI with no CPU model or
  host-model (:195-198, 228-232, 246-281); ``--qemu-timeout`` is 240 s plus up to 119 s of jitter
  (:368-372).

A VMI that uses anything else this module does not render (probes, host devices, TPM, SEV,
container disks, …) raises NotRendered instead of yielding a pod v1.9.0 would not write.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from kvsim import timefmt
from kvsim.apiserver import Obj
from kvsim.quantity import NANO, ZERO, Quantity, parse_optional

IMAGE = "quay.io/kubevirt/virt-launcher:v1.9.0"
MI = 1024 * 1024
NON_ROOT_UID = 107
CPU_ALLOCATION_RATIO = 10  # DefaultCPUAllocationRatio, pkg/virt-config/virt-config.go:88
EPHEMERAL_STORAGE_OVERHEAD = Quantity.parse("50M")  # services/template.go:116
# virt-launcher-monitor, virt-launcher, virtlogd, virtqemud, QEMU (kvm/hypervisorbackend.go:38-42)
COMPONENT_OVERHEADS = ("25Mi", "100Mi", "25Mi", "40Mi", "30Mi")
PASST_OVERHEAD = Quantity.parse("250Mi")  # pkg/network/resources/memory.go:97-100
POD_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.String
KVM, TUN, VHOST_NET = (f"devices.kubevirt.io/{d}" for d in ("kvm", "tun", "vhost-net"))

# Parts of a VMI that change its pod in ways this module does not render.
_UNRENDERED_SPEC = (
    "livenessProbe",
    "readinessProbe",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "dnsConfig",
    "dnsPolicy",
    "schedulerName",
    "priorityClassName",
    "subdomain",
    "serviceAccountName",
    "resourceClaims",
    "accessCredentials",
)
_UNRENDERED_DOMAIN = ("launchSecurity", "ioThreads")
_UNRENDERED_DEVICES = ("hostDevices", "gpus", "tpm", "filesystems", "autoattachVSOCK")
_UNRENDERED_ANNOTATIONS = (
    "hooks.kubevirt.io/hookSidecars",
    "kubevirt.io/libvirt-log-filters",
    "kubevirt.io/keep-launcher-alive-after-failure",
    "kubevirt.io/func-test-virt-launcher-fail-fast",
    "kubevirt.io/skip-backup-hooks",
    "sidecar.istio.io/inject",
    "alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity",
)
_UNRENDERED_LABELS = ("logVerbosity", "debugLogs", "virtiofsdDebugLogs")
_API_VERSION_ANNOTATIONS = (
    "kubevirt.io/storage-observed-api-version",
    "kubevirt.io/latest-observed-api-version",
)
_RENDERED_CONFIG = ("developerConfiguration", "additionalGuestMemoryOverheadRatio")


class NotRendered(ValueError):
    """A VMI or KubeVirt setting kvsim does not render."""


def _spec_of(vmi: Obj) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = vmi["spec"]
    return spec, spec["domain"]


def _resources(vmi: Obj, kind: str) -> dict[str, Quantity]:
    raw = (vmi["spec"]["domain"].get("resources") or {}).get(kind) or {}
    return {name: Quantity.parse(value) for name, value in raw.items()}


def number_of_vcpus(cpu: dict[str, Any]) -> int:
    """GetNumberOfVCPUs (pkg/util/hardware/hw_utils.go:87-104): cores × sockets × threads,
    zero fields skipped (all zero gives 0)."""
    count = 0
    for field in ("cores", "sockets", "threads"):
        value = int(cpu.get(field) or 0)
        if value:
            count = value if count == 0 else count * value
    return count


def vcpus(vmi: Obj) -> int:
    """The vCPUs of the overhead (kvm/hypervisorbackend.go:92-113): the topology when
    ``domain.cpu`` is set, else the CPU limit, else the request (rounded up), at least 1."""
    _, domain = _spec_of(vmi)
    if domain.get("cpu") is not None:
        count = number_of_vcpus(domain["cpu"])
    else:
        limits, requests = _resources(vmi, "limits"), _resources(vmi, "requests")
        chosen = limits.get("cpu", requests.get("cpu"))
        count = chosen.whole() if chosen is not None else 0
    return max(count, 1)


def is_cpu_dedicated(vmi: Obj) -> bool:
    """types.go:568-570."""
    return bool((vmi["spec"]["domain"].get("cpu") or {}).get("dedicatedCpuPlacement"))


def wants_qos_guaranteed(vmi: Obj) -> bool:
    """WantsToHaveQOSGuaranteed (types.go:577-586): CPU request non-zero and equal to the limit,
    memory request equal to the limit (non-zero), or no request and a non-zero limit."""
    limits, requests = _resources(vmi, "limits"), _resources(vmi, "requests")

    def value(found: dict[str, Quantity], name: str) -> int:
        return found[name].nanos if name in found else 0

    mem_req, mem_lim = value(requests, "memory"), value(limits, "memory")
    cpu_req, cpu_lim = value(requests, "cpu"), value(limits, "cpu")
    memory = (mem_req == 0 and mem_lim != 0) or (mem_req != 0 and mem_req == mem_lim)
    return memory and cpu_req != 0 and cpu_req == cpu_lim


def _overhead_ratio(kubevirt: Obj | None) -> str | None:
    """The CR's ``spec.configuration``: only the overhead ratio is modelled."""
    config = ((kubevirt or {}).get("spec") or {}).get("configuration") or {}
    unrendered = [k for k in config if k not in _RENDERED_CONFIG]
    if unrendered or config.get("developerConfiguration"):
        raise NotRendered(f"KubeVirt configuration kvsim does not render: {sorted(config)}")
    ratio = config.get("additionalGuestMemoryOverheadRatio")
    return None if ratio in (None, "") else str(ratio)


def _multiply(overhead: Quantity, ratio: str) -> Quantity:
    """MultiplyMemory (kvm/hypervisorbackend.go:203-209): ⌈overhead/1000⌉ × (ratio − 1) as a
    float64, truncated, in kB. The admission webhook rejects a ratio that does not parse."""
    try:
        factor = float(ratio)
    except ValueError as exc:
        raise NotRendered(f"additionalGuestMemoryOverheadRatio {ratio!r}") from exc
    kilo = overhead.scaled(3)
    added = Quantity.of(int(float(kilo) * (factor - 1.0)) * 1000, binary=False)  # NewScaledQuantity
    return overhead.plus(added)


def _overhead(vmi: Obj, kubevirt: Obj | None) -> Quantity:
    _, domain = _spec_of(vmi)
    request = _resources(vmi, "requests").get("memory", ZERO)
    page_tables = request.scaled(3) * 1000 // 512
    overhead = ZERO.plus(Quantity.of(page_tables, binary=False))  # NewScaledQuantity: DecimalSI
    for amount in COMPONENT_OVERHEADS:
        overhead = overhead.plus(Quantity.parse(amount))
    overhead = overhead.plus(Quantity.of(8 * MI * vcpus(vmi), binary=True))
    overhead = overhead.plus(Quantity.parse("8Mi"))  # the IOThread, fixed (:115-116)
    if (domain.get("devices") or {}).get("autoattachGraphicsDevice") is not False:
        overhead = overhead.plus(Quantity.parse("32Mi"))  # video RAM (:118-121)
    if is_cpu_dedicated(vmi) or wants_qos_guaranteed(vmi):
        overhead = overhead.plus(Quantity.parse("100Mi"))
    ratio = _overhead_ratio(kubevirt)
    if ratio is not None:
        overhead = _multiply(overhead, ratio)
    if _has_passt(vmi):
        overhead = overhead.plus(PASST_OVERHEAD)
    return overhead


def memory_overhead(vmi: Obj, kubevirt: Obj | None = None) -> int:
    """The bytes of ``kubevirt.io/memory-overhead-bytes`` (services/template.go:631-633)."""
    return _overhead(vmi, kubevirt).whole()


def _interfaces(vmi: Obj) -> list[dict[str, Any]]:
    return list((vmi["spec"]["domain"].get("devices") or {}).get("interfaces") or [])


def _has_passt(vmi: Obj) -> bool:
    return any("passtBinding" in iface for iface in _interfaces(vmi))


def _check_rendered(vmi: Obj) -> None:
    spec, domain = _spec_of(vmi)
    meta = vmi["metadata"]
    devices = domain.get("devices") or {}
    cpu = domain.get("cpu") or {}
    memory = domain.get("memory") or {}
    found = [f"spec.{k}" for k in _UNRENDERED_SPEC if spec.get(k)]
    found += [f"spec.domain.{k}" for k in _UNRENDERED_DOMAIN if domain.get(k)]
    found += [f"devices.{k}" for k in _UNRENDERED_DEVICES if devices.get(k)]
    found += [f"cpu.{k}" for k in ("isolateEmulatorThread", "features") if cpu.get(k)]
    if cpu.get("model") not in (None, "", "host-model", "host-passthrough"):
        found.append(f"cpu.model {cpu['model']}")
    if memory.get("reservedOverhead"):
        found.append("memory.reservedOverhead")
    if spec.get("architecture") not in (None, "", "amd64"):
        found.append(f"architecture {spec['architecture']}")
    for iface in _interfaces(vmi):
        found += [f"interface {k}" for k in ("sriov", "binding", "ports") if iface.get(k)]
    found += [f"network {n.get('name')}" for n in spec.get("networks") or [] if "pod" not in n]
    for volume in spec.get("volumes") or []:
        claim = volume.get("persistentVolumeClaim")
        no_cloud = volume.get("cloudInitNoCloud")
        if claim is not None and not claim.get("hotpluggable"):
            continue
        if no_cloud is not None and not (
            no_cloud.get("userDataSecretRef") or no_cloud.get("networkDataSecretRef")
        ):
            continue
        found.append(f"volume {volume.get('name')}")
    annotations = meta.get("annotations") or {}
    found += [
        f"annotation {key}"
        for key in annotations
        if any(key.startswith(prefix) for prefix in _UNRENDERED_ANNOTATIONS)
    ]
    found += [f"label {k}" for k in _UNRENDERED_LABELS if k in (meta.get("labels") or {})]
    runtime_user = (vmi.get("status") or {}).get("runtimeUser")
    if runtime_user == 0 and "kubevirt.io/nonroot" not in annotations:
        found.append("a root VMI (status.runtimeUser 0)")
    if found:
        raise NotRendered(f"VMI {meta.get('name')}: kvsim does not render {', '.join(found)}")


def _hostname(vmi: Obj) -> str:
    """SanitizeHostname (pkg/util/net/dns/sanitize.go:33-44)."""
    return str(vmi["spec"].get("hostname") or vmi["metadata"]["name"].split(".")[0][:63])


def _vmi_id(name: str) -> str:
    """CalculateVirtualMachineInstanceID (pkg/apimachinery/labels.go:31-48)."""
    if len(name) <= 63:
        return name
    return f"{name[:54]}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def vmi_owner(name: str, uid: str) -> dict[str, Any]:
    """The controller reference to a VMI, as on its launcher pods (and its PDBs)."""
    return {
        "apiVersion": "kubevirt.io/v1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "VirtualMachineInstance",
        "name": name,
        "uid": uid,
    }


def render(vmi: Obj, rng: random.Random, kubevirt: Obj | None = None, image: str = IMAGE) -> Obj:
    """The pod as created, with the API server's defaults and initial status (phase Pending,
    the QoS class); the API server adds uid and times. ``kubevirt`` is the KubeVirt CR;
    ``image`` the controller's ``--launcher-image`` (its containers run it)."""
    pod = _render(vmi, rng, kubevirt)
    for container in (*pod["spec"]["containers"], *pod["spec"].get("initContainers", [])):
        if container.get("image") == IMAGE:
            container["image"] = image
    return pod


def _render(vmi: Obj, rng: random.Random, kubevirt: Obj | None) -> Obj:
    _check_rendered(vmi)
    meta, spec = vmi["metadata"], vmi["spec"]
    name, namespace, uid = meta["name"], meta["namespace"], meta["uid"]
    overhead = _overhead(vmi, kubevirt)
    grace = spec.get("terminationGracePeriodSeconds")  # gracePeriodInSeconds (:1066-1071)
    grace = 30 if grace is None else int(grace)
    hostname = _hostname(vmi)
    labels = dict(meta.get("labels") or {})
    labels.update(
        {
            "kubevirt.io": "virt-launcher",
            "kubevirt.io/created-by": uid,
            "vm.kubevirt.io/name": hostname,
            "vmi.kubevirt.io/id": _vmi_id(name),
        }
    )
    suffix = "".join(rng.choice(POD_NAME_ALPHABET) for _ in range(5))
    pod_spec = _pod_spec(vmi, overhead, grace, hostname, rng)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": _annotations(vmi, overhead),
            "generateName": f"virt-launcher-{name}-",
            "labels": labels,
            "name": f"virt-launcher-{name}-{suffix}",
            "namespace": namespace,
            "ownerReferences": [vmi_owner(name, uid)],
        },
        "spec": pod_spec,
        "status": {"phase": "Pending", "qosClass": qos_class(pod_spec)},
    }


def _annotations(vmi: Obj, overhead: Quantity) -> dict[str, str]:
    """generatePodAnnotations (services/template.go:1539-1575), the Velero hooks
    (pkg/storage/pod/annotations/generator.go:55-85) and the overhead (:631-633)."""
    meta = vmi["metadata"]
    name, namespace = meta["name"], meta["namespace"]
    skipped = ("kubectl.kubernetes.io", *_API_VERSION_ANNOTATIONS)
    annotations = {"kubevirt.io/domain": name}
    annotations.update(
        {
            key: value
            for key, value in (meta.get("annotations") or {}).items()
            if not key.startswith(skipped)
        }
    )
    freeze = (
        f'["/usr/bin/virt-freezer", "--freeze", "--name", "{name}", "--namespace", "{namespace}"]'
    )
    unfreeze = (
        f'["/usr/bin/virt-freezer", "--unfreeze", "--name", "{name}", "--namespace", "{namespace}"]'
    )
    annotations.update(
        {
            "kubectl.kubernetes.io/default-container": "compute",
            "kubevirt.io/migrationTransportUnix": "true",
            "descheduler.alpha.kubernetes.io/request-evict-only": "",
            "pre.hook.backup.velero.io/container": "compute",
            "pre.hook.backup.velero.io/command": freeze,
            "pre.hook.backup.velero.io/timeout": "60s",
            "post.hook.backup.velero.io/container": "compute",
            "post.hook.backup.velero.io/command": unfreeze,
            "kubevirt.io/memory-overhead-bytes": str(overhead.whole()),
        }
    )
    return dict(sorted(annotations.items()))


def _command(vmi: Obj, grace: int, rng: random.Random) -> list[str]:
    """services/template.go:460-516 with the v1.9.0 default gates (ImageVolume,
    LibvirtHooksServerAndClient, PodSecondaryInterfaceNamingUpgrade on)."""
    meta = vmi["metadata"]
    return [
        "/usr/bin/virt-launcher-monitor",
        "--qemu-timeout",
        f"{240 + rng.randrange(120)}s",  # generateQemuTimeoutWithJitter (template.go:368-372)
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


def _device_limits(vmi: Obj) -> dict[str, Quantity]:
    """getRequiredResources (services/renderresources.go:466-485; network/vmispec/devices.go):
    tun for any interface (or an implicit pod interface), vhost-net for a virtio one, kvm."""
    devices = vmi["spec"]["domain"].get("devices") or {}
    interfaces = _interfaces(vmi)
    found: dict[str, Quantity] = {}
    if interfaces or devices.get("autoattachPodInterface") is not False:
        found[TUN] = Quantity.parse("1")
    if any(iface.get("model") in (None, "", "virtio") for iface in interfaces):
        found[VHOST_NET] = Quantity.parse("1")
    found[KVM] = Quantity.parse("1")
    return found


def _cpu_share(total: int) -> Quantity:
    """WithoutDedicatedCPU's request (services/renderresources.go:128-147): total / ratio printed
    with %g (as millicores below 1) and parsed back. With the ratio 10 that decimal is exact, so
    it is the exact quotient, printed as the API server does (``200m``, ``1600m``, ``1``)."""
    return Quantity(total * NANO // CPU_ALLOCATION_RATIO)


def compute_resources(vmi: Obj, overhead: Quantity) -> tuple[dict[str, str], dict[str, str]]:
    """The compute container's (limits, requests) as stored: newResourceRenderer
    (services/template.go:1023-1037, 1644-1650), then the API server's copy of limits into
    missing requests."""
    _, domain = _spec_of(vmi)
    memory = domain.get("memory") or {}
    cpu = domain.get("cpu")
    vm_limits, vm_requests = _resources(vmi, "limits"), _resources(vmi, "requests")
    calc_limits: dict[str, Quantity] = {}
    calc_requests: dict[str, Quantity] = {}
    # WithEphemeralStorageRequest (renderresources.go:103-117)
    storage = "ephemeral-storage"
    vm_requests[storage] = vm_requests.get(storage, ZERO).plus(EPHEMERAL_STORAGE_OVERHEAD)
    if storage in vm_limits:
        vm_limits[storage] = vm_limits[storage].plus(EPHEMERAL_STORAGE_OVERHEAD)
    vm_limits.update(_device_limits(vmi))  # WithVirtualizationResources (:487-491)
    # WithMemoryRequests, when the VMI has no memory request (:263-293, template.go:1826-1829)
    if vm_requests.get("memory", ZERO).nanos == 0:
        limit, request = vm_limits.get("memory"), vm_requests.get("memory")
        if limit is not None and limit.nanos != 0 and (request is None or request.nanos == 0):
            vm_requests["memory"] = limit
        if "memory" not in vm_requests:
            base = parse_optional(memory.get("guest"))
            if base is None and memory.get("hugepages"):
                base = Quantity.parse(memory["hugepages"]["pageSize"])
            if base is not None and base.whole() > 0:
                vm_requests["memory"] = base  # memoryOvercommit 100
    if is_cpu_dedicated(vmi):  # WithCPUPinning (:319-361)
        count = number_of_vcpus(cpu or {})
        if count != 0:
            vm_limits["cpu"] = vm_requests["cpu"] = Quantity.of(count, binary=True)
        if "memory" in vm_requests:
            vm_limits["memory"] = vm_requests["memory"]
    else:  # WithoutDedicatedCPU (:128-147), calcVCPUs (:459-464)
        total = number_of_vcpus(cpu) if cpu is not None else 1
        if total != 0:
            calc_requests["cpu"] = _cpu_share(total)
    if memory.get("hugepages"):  # WithHugePages (:220-259)
        page = f"hugepages-{memory['hugepages']['pageSize']}"
        guest = parse_optional(memory.get("guest"))
        requested = vm_requests.get("memory", Quantity(0, binary=True))
        hugepages = requested
        if guest is not None and requested.whole() > guest.whole():
            hugepages = guest
        calc_requests[page] = calc_limits[page] = hugepages
        request_extra, limit_extra = ZERO, ZERO
        if guest is not None:
            if vm_requests.get("memory", ZERO).whole() > guest.whole():
                request_extra = request_extra.plus(vm_requests["memory"]).minus(guest)
            if vm_limits.get("memory", ZERO).whole() > guest.whole():
                limit_extra = limit_extra.plus(vm_limits["memory"]).minus(guest)
        vm_requests["memory"] = request_extra.plus(overhead)
        if "memory" in vm_limits:
            vm_limits["memory"] = limit_extra.plus(overhead)
    else:  # WithMemoryOverhead (:295-308)
        request = vm_requests.get("memory", ZERO)
        if not (domain.get("resources") or {}).get("overcommitGuestOverhead"):
            request = request.plus(overhead)
        vm_requests["memory"] = request
        if "memory" in vm_limits:
            vm_limits["memory"] = vm_limits["memory"].plus(overhead)
    limits = {**calc_limits, **vm_limits}  # Limits()/Requests(): the VMI's win (:77-89)
    requests = {**calc_requests, **vm_requests}
    for key, value in limits.items():
        requests.setdefault(key, value)  # API defaulting: a limit without a request
    return (
        {k: v.text() for k, v in sorted(limits.items())},
        {k: v.text() for k, v in sorted(requests.items())},
    )


def _console(vmi: Obj) -> dict[str, Any] | None:
    """generateSerialConsoleLogContainer (services/serialconsolelog.go:16-93)."""
    devices = vmi["spec"]["domain"].get("devices") or {}
    if devices.get("autoattachSerialConsole") is False:
        return None
    if devices.get("logSerialConsole") is False:
        return None
    limits = {"cpu": "15m", "memory": "60M"}
    guaranteed = is_cpu_dedicated(vmi) or wants_qos_guaranteed(vmi)
    requests = dict(limits) if guaranteed else {"cpu": "5m", "memory": "35M"}
    return {
        "args": [
            "--logfile",
            f"/var/run/kubevirt-private/{vmi['metadata']['uid']}/virt-serial0-log",
        ],
        "command": ["/usr/bin/virt-tail"],
        "env": [{"name": "VIRT_LAUNCHER_LOG_VERBOSITY", "value": "2"}],
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "name": "guest-console-log",
        "resources": {"limits": limits, "requests": requests},
        "restartPolicy": "Always",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "runAsUser": NON_ROOT_UID,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/var/run/kubevirt-private", "name": "private", "readOnly": True}
        ],
    }


def _node_selector(vmi: Obj) -> dict[str, str]:
    """NewNodeSelectorRenderer and Render (services/nodeselectorrenderer.go:33-100)."""
    selector = {"kubevirt.io/schedulable": "true"}
    architecture = vmi["spec"].get("architecture")
    if architecture:
        selector["kubernetes.io/arch"] = str(architecture).lower()
    if is_cpu_dedicated(vmi):
        selector["kubevirt.io/cpumanager"] = "true"
    machine = (vmi.get("status", {}).get("machine") or {}).get("type") or (
        vmi["spec"].get("domain", {}).get("machine") or {}
    ).get("type")
    if machine:  # WithMachineType (services/nodeselectorrenderer.go:166-171, template.go:815-824)
        selector[f"machine-type.node.kubevirt.io/{machine}"] = "true"
    return dict(sorted(selector.items()))


def _affinity(vmi: Obj) -> dict[str, Any] | None:
    """setNodeAffinityForHostModelCpuModel (services/template.go:195-198, 228-232, 246-281): a
    VMI with no CPU model or host-model avoids nodes labelled obsolete for host-model."""
    model = (vmi["spec"].get("domain", {}).get("cpu") or {}).get("model")
    if model and model != "host-model":
        return None
    term = {
        "matchExpressions": [
            {"key": "node-labeller.kubevirt.io/obsolete-host-model", "operator": "DoesNotExist"}
        ]
    }
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def _pod_spec(
    vmi: Obj, overhead: Quantity, grace: int, hostname: str, rng: random.Random
) -> dict[str, Any]:
    spec, domain = _spec_of(vmi)
    claims = [v for v in spec.get("volumes", []) if "persistentVolumeClaim" in v]
    hugepages = bool((domain.get("memory") or {}).get("hugepages"))
    hotplug = not (domain.get("devices") or {}).get("disableHotplug")
    limits, requests = compute_resources(vmi, overhead)
    mounts: list[dict[str, Any]] = [  # VolumeRenderer.Mounts (services/rendervolumes.go:70-82)
        {"mountPath": "/var/run/kubevirt-private", "name": "private"},
        {"mountPath": "/var/run/kubevirt", "name": "public"},
        {"mountPath": "/var/run/kubevirt-ephemeral-disks", "name": "ephemeral-disks"},
        {"mountPath": "/var/run/libvirt", "name": "libvirt-runtime"},
        {"mountPath": "/var/run/kubevirt/sockets", "name": "sockets"},
    ]
    volumes: list[dict[str, Any]] = [
        {"emptyDir": {}, "name": n}
        for n in (
            "private",
            "public",
            "sockets",
            "virt-bin-share-dir",
            "libvirt-runtime",
            "ephemeral-disks",
        )
    ]
    for claim in claims:  # block PVCs (:565-610)
        source = claim["persistentVolumeClaim"]
        read_only = {"readOnly": True} if source.get("readOnly") else {}
        volumes.append(
            {"name": claim["name"], "persistentVolumeClaim": {"claimName": source["claimName"]}}
        )
        volumes[-1]["persistentVolumeClaim"].update(read_only)
    if hugepages:  # withHugepages (:499-528)
        mounts.append({"mountPath": "/dev/hugepages", "name": "hugepages"})
        mounts.append({"mountPath": "/dev/hugepages/libvirt/qemu", "name": "hugetblfs-dir"})
        volumes.append({"emptyDir": {"medium": "HugePages"}, "name": "hugepages"})
        volumes.append({"emptyDir": {}, "name": "hugetblfs-dir"})
    if hotplug:  # withHotplugSupport (:530-541)
        mounts.append(
            {
                "mountPath": "/var/run/kubevirt/hotplug-disks",
                "mountPropagation": "HostToContainer",
                "name": "hotplug-disks",
            }
        )
        volumes.append({"emptyDir": {}, "name": "hotplug-disks"})
    compute: dict[str, Any] = {
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
        "resources": {"limits": limits, "requests": requests},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
            "runAsGroup": NON_ROOT_UID,
            "runAsNonRoot": True,
            "runAsUser": NON_ROOT_UID,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeDevices": [{"devicePath": f"/dev/{v['name']}", "name": v["name"]} for v in claims],
        "volumeMounts": mounts,
    }
    if not claims:
        del compute["volumeDevices"]
    console = _console(vmi)
    pod_spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "containers": [compute],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": False,
        "hostname": hostname,
        "initContainers": [console] if console else [],
        "nodeSelector": _node_selector(vmi),
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {
            "fsGroup": NON_ROOT_UID,
            "runAsGroup": NON_ROOT_UID,
            "runAsNonRoot": True,
            "runAsUser": NON_ROOT_UID,
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
        "volumes": volumes,
    }
    affinity = _affinity(vmi)
    if affinity is not None:
        pod_spec["affinity"] = affinity
    if not console:
        del pod_spec["initContainers"]
    return pod_spec


def qos_class(pod_spec: dict[str, Any]) -> str:
    """The pod's QoS class as Kubernetes computes it (GetPodQOS, Kubernetes behaviour): cpu and
    memory over all containers and init containers; Guaranteed when every container limits both
    and the summed requests equal the summed limits, BestEffort with neither, else Burstable."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for container in [*pod_spec.get("containers", []), *pod_spec.get("initContainers", [])]:
        resources = container.get("resources") or {}
        for kind, total in (("requests", requests), ("limits", limits)):
            for name in ("cpu", "memory"):
                amount = (resources.get(kind) or {}).get(name)
                nanos = 0 if amount is None else Quantity.parse(amount).nanos
                if nanos > 0:
                    total[name] = total.get(name, 0) + nanos
        found = resources.get("limits") or {}
        if not all(
            name in found and Quantity.parse(found[name]).nanos > 0 for name in ("cpu", "memory")
        ):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def _condition(kind: str, at: int, status: str = "True") -> dict[str, Any]:
    return {
        "lastProbeTime": None,
        "lastTransitionTime": timefmt.seconds(at),
        "status": status,
        "type": kind,
    }


def _container(
    name: str, at: int, ready: bool, rng: random.Random, image: str = IMAGE
) -> dict[str, Any]:
    return {
        "containerID": "containerd://" + "".join(rng.choice("0123456789abcdef") for _ in range(64)),
        "image": image,
        "imageID": "quay.io/kubevirt/virt-launcher@sha256:" + "3" * 8 + "c0ffee" * 8 + "42" * 4,
        "lastState": {},
        "name": name,
        "ready": ready,
        "restartCount": 0,
        "started": True,
        "state": {"running": {"startedAt": timefmt.seconds(at)}},
    }


def compute_image(pod: Obj) -> str:
    """The image of the pod's compute container (what the VMI's launcher runs)."""
    for container in pod.get("spec", {}).get("containers") or []:
        if container.get("name") == "compute":
            return str(container.get("image") or IMAGE)
    return IMAGE


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
        containerStatuses=[_container("compute", at, False, rng, compute_image(pod))],
        initContainerStatuses=[
            _container("guest-console-log", at - 1_000_000, True, rng, compute_image(pod))
        ],
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
