"""The memory overhead, term by term, for one VMI under one release.

``overhead_terms`` returns every term in the order the controller adds them, applied or not,
each with its condition, why, bytes and source position. Positions are exact for v1.9.0
(``kvm/hypervisorbackend.go``, which v1.8.0 already has); for older releases they name the
function at the release's tag (``GetMemoryOverhead`` in ``services/template.go`` up to v0.55,
in ``services/renderresources.go`` from v0.56 to v1.7; ``Release.overhead_at``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtrace.overhead.settings import OverheadSettings
from kvtrace.overhead.versions import Release
from kvtrace.overhead.vmi_spec import (
    VmiView,
    as_list,
    as_map,
    overhead_vcpus,
    webhook_memory_request,
)
from parsers.quantity import mebibytes

MI = 1024 * 1024


@dataclass(frozen=True)
class Term:
    """One addend of the overhead; ``bytes`` counts only when ``applied``."""

    key: str
    title: str
    condition: str
    applied: bool
    why: str
    bytes: int
    source: str

    @property
    def counted(self) -> int:
        return self.bytes if self.applied else 0


def source(release: Release, v19: str) -> str:
    """The v1.9.0 position for v1.8/v1.9, else the release's ``GetMemoryOverhead``."""
    if release.key >= (1, 8):
        return v19
    return f"{release.overhead_at} (GetMemoryOverhead)"


def _kvm(lines: str) -> str:
    return f"kvm/hypervisorbackend.go:{lines}"


@dataclass(frozen=True)
class Context:
    vmi: VmiView
    release: Release
    settings: OverheadSettings

    def term(  # one line per column of the output row
        self, key: str, title: str, condition: str, hit: bool, why: str, size: int, pos: str
    ) -> Term:
        return Term(key, title, condition, hit, why, size, source(self.release, _kvm(pos)))


def effective_request(ctx: Context) -> tuple[int, str]:
    """R for the page tables: the VMI memory request (before v1.6.4 as the webhook defaulted it)."""
    if ctx.release.request_defaulted_by_webhook:
        return webhook_memory_request(ctx.vmi, ctx.settings.memory_overcommit.value)
    request = ctx.vmi.resource("requests", "memory")
    if request is not None and request.value != 0:
        return request.bytes(), f"spec.domain.resources.requests.memory {request}"
    return 0, "no spec.domain.resources.requests.memory (memory.guest is not used)"


def page_tables(ctx: Context) -> Term:
    request, why = effective_request(ctx)
    size = (request + 999) // 1000 * 1000 // 512
    return ctx.term(
        "pageTables",
        "page tables",
        "always; R = VMI requests.memory, rounded up to kB, /512",
        True,
        why,
        size,
        "71, 75-78",
    )


def fixed_terms(ctx: Context) -> list[Term]:
    """The per-process constants; before v0.59 the daemon was libvirtd (key kept virtqemud)."""
    rel = ctx.release
    daemon = "virtqemud" if rel.virtqemud else "libvirtd"
    parts = [
        ("virtLauncherMonitor", "virt-launcher-monitor", 25, "38, 83"),
        ("virtLauncher", "virt-launcher", rel.virt_launcher_mi, "39, 84"),
        ("virtlogd", "virtlogd", rel.virtlogd_mi, "40, 85"),
        ("virtqemud", daemon, rel.virtqemud_mi, "41, 86"),
        ("qemu", "QEMU (without guest RAM)", 30, "42, 87"),
    ]
    return [
        ctx.term(key, title, "always", True, f"{mi}Mi in {rel.tag}", mebibytes(mi), pos)
        for key, title, mi, pos in parts
    ]


def vcpu_term(ctx: Context) -> Term:
    count, how = overhead_vcpus(ctx.vmi)
    return ctx.term(
        "vcpus", "per vCPU", "8Mi × vCPUs", True, f"{count} vCPU ({how})", count * 8 * MI, "89-113"
    )


def iothread_term(ctx: Context) -> Term:
    why = "one fixed 8Mi whatever the IO-thread policy or count"
    return ctx.term("ioThread", "IO thread", "always", True, why, 8 * MI, "115-116")


def video_term(ctx: Context) -> Term:
    off = ctx.vmi.domain("devices", "autoattachGraphicsDevice") is False
    why = "autoattachGraphicsDevice: false" if off else "graphics device attached (unset = on)"
    mi = ctx.release.video_mi
    return ctx.term(
        "video",
        "video RAM",
        "unless autoattachGraphicsDevice is false",
        not off,
        why,
        mebibytes(mi),
        "118-121",
    )


def arm64_term(ctx: Context) -> Term:
    vmi_arch = ctx.vmi.spec("architecture") if ctx.release.vmi_architecture else None
    arch = str(vmi_arch or ctx.settings.architecture.value)
    where = "spec.architecture" if vmi_arch else f"controller ({ctx.settings.architecture.source})"
    return ctx.term(
        "arm64",
        "arm64 UEFI pflash",
        "architecture is arm64",
        arch == "arm64",
        f"architecture {arch} from {where}",
        128 * MI,
        "123-128",
    )


def vfio_term(ctx: Context) -> Term:
    devices = as_map(ctx.vmi.domain("devices"))
    reasons = [k for k in ("hostDevices", "gpus") if devices.get(k)]
    reasons += ["sriov interface"] if any("sriov" in i for i in ctx.vmi.interfaces) else []
    why = ", ".join(reasons) if reasons else "no hostDevices, gpus or sriov interface"
    return ctx.term(
        "vfio",
        "VFIO",
        "any hostDevice, GPU or SR-IOV interface (once)",
        bool(reasons),
        why,
        1024 * MI,
        "130-135",
    )


def downward_metrics_term(ctx: Context) -> Term:
    volumes = [v for v in as_list(ctx.vmi.spec("volumes")) if isinstance(v, dict)]
    hit = any("downwardMetrics" in v for v in volumes)
    why = (
        "a downwardMetrics volume"
        if hit
        else "no downwardMetrics volume (the device does not count)"
    )
    return ctx.term(
        "downwardMetrics",
        "downwardMetrics volume",
        "a volume with downwardMetrics",
        hit,
        why,
        MI,
        "137-141",
    )


def exec_probe_term(ctx: Context) -> Term:
    probes = [p for p in ("livenessProbe", "readinessProbe") if "exec" in as_map(ctx.vmi.spec(p))]
    size = (len(probes) * 10 + 100) * MI if probes else 0
    why = f"exec probes: {', '.join(probes)}" if probes else "no exec probe"
    return ctx.term(
        "execProbes",
        "exec probes",
        "10Mi per exec probe + 100Mi once",
        bool(probes),
        why,
        size,
        "143, 180-201",
    )


def sev_term(ctx: Context) -> Term:
    security = as_map(ctx.vmi.domain("launchSecurity"))
    kinds = ["sev"] + (["snp"] if ctx.release.sev_counts_snp else [])
    found = [k for k in kinds if security.get(k) is not None]
    why = f"launchSecurity.{found[0]}" if found else f"no launchSecurity.{' / '.join(kinds)}"
    return ctx.term(
        "sev",
        "SEV / SEV-ES / SEV-SNP",
        "launchSecurity sev (or snp from v1.7)",
        bool(found),
        why,
        256 * MI,
        "145-149",
    )


def tpm_term(ctx: Context) -> Term:
    tpm = ctx.vmi.domain("devices", "tpm")
    enabled = not (isinstance(tpm, dict) and tpm.get("enabled") is False)
    if not ctx.release.tpm_checks_enabled:
        enabled = True
    hit = tpm is not None and enabled
    why = "devices.tpm set" if hit else ("tpm.enabled: false" if tpm is not None else "no TPM")
    return ctx.term(
        "tpm", "TPM (swtpm)", "devices.tpm set, enabled not false", hit, why, 53 * MI, "151-155"
    )
