"""What the renderer puts into the compute container's memory and CPU (KubeVirt v1.9.0).

``expected_memory`` follows ``services/renderresources.go:220-306, 356-359`` (base request,
overhead, limits, hugepages, ``overcommitGuestOverhead``); ``expected_cpu`` follows
``:120-147, 319-354`` (allocation ratio, dedicated CPUs, emulator thread). The VMI's own CPU
request and limit win over calculated ones (``:77-89``). Before v1.6.4 the base is the request as
the webhook defaulted it (``v1.0.0:services/renderresources.go:176-189``); up to v0.55 the
dedicated-CPU memory limit was set to the finished request (``v0.53.0:services/template.go:1044``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from kvtrace.overhead.settings import OverheadSettings
from kvtrace.overhead.versions import HIGHEST, Release
from kvtrace.overhead.vmi_spec import (
    VmiView,
    as_map,
    dig,
    pod_vcpus,
    topology_vcpus,
    webhook_memory_request,
)
from parsers.quantity import Quantity, parse_quantity, quantity_of

PARITY_ANNOTATION = "alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity"


@dataclass
class MemoryPlan:
    request: int | None
    limit: int | None
    hugepages: tuple[str, int] | None = None  # (resource name, bytes on request and limit)
    notes: list[str] = field(default_factory=list)


@dataclass
class CpuPlan:
    request: Quantity | None
    limit: Quantity | None
    notes: list[str] = field(default_factory=list)
    limit_note: str = ""


def base_memory(
    vmi: VmiView, settings: OverheadSettings, release: Release = HIGHEST
) -> tuple[int | None, str]:
    """The base request before the overhead (``renderresources.go:263-293``); before v1.6.4 the
    VMI's request as the webhook left it (``v1.6.0:services/renderresources.go:255-268``)."""
    if release.request_defaulted_by_webhook:
        value, why = webhook_memory_request(vmi, settings.memory_overcommit.value)
        return (value or None), why
    request = vmi.resource("requests", "memory")
    if request is not None and request.value != 0:
        return request.bytes(), "VMI memory request"
    limit = vmi.resource("limits", "memory")
    if limit is not None and limit.value != 0:
        return limit.bytes(), "VMI memory limit (no request)"
    guest = vmi.memory("guest")
    if guest is not None and guest.bytes() > 0:
        overcommit = settings.memory_overcommit.value
        if overcommit == 100 or vmi.hugepages_size or vmi.dedicated:
            return guest.bytes(), "memory.guest"
        return guest.bytes() * 100 // overcommit, f"memory.guest ×100/{overcommit} (overcommit)"
    size = vmi.hugepages_size
    if size:
        return parse_quantity(size).bytes(), f"hugepage size {size}"
    return None, "no memory request, limit, guest or hugepages"


def _limit_base(vmi: VmiView, base: int | None) -> int | None:
    if vmi.dedicated and base is not None:
        return base  # limits aligned with requests before the overhead (:356-359)
    limit = vmi.resource("limits", "memory")
    return limit.bytes() if limit is not None else None


def expected_memory(
    vmi: VmiView, settings: OverheadSettings, overhead: int, release: Release = HIGHEST
) -> MemoryPlan:
    base, why = base_memory(vmi, settings, release)
    plan = _memory_plan(vmi, base, why, overhead)
    if vmi.dedicated and release.dedicated_limit_is_request:
        plan.limit = plan.request
        plan.notes.append(f"dedicated: limit = the finished request ({release.tag})")
    return plan


def _memory_plan(vmi: VmiView, base: int | None, why: str, overhead: int) -> MemoryPlan:
    limit_base = _limit_base(vmi, base)
    if vmi.hugepages_size:
        return _hugepages_plan(vmi, base, limit_base, overhead, why)
    plan = MemoryPlan(None, None, notes=[f"base: {why}"])
    if vmi.domain("resources", "overcommitGuestOverhead") is True:
        plan.request = base or 0
        plan.notes.append("overcommitGuestOverhead: the request leaves the overhead out")
    else:
        plan.request = (base or 0) + overhead
    if limit_base is not None:
        plan.limit = limit_base + overhead
    return plan


def _hugepages_plan(
    vmi: VmiView, base: int | None, limit_base: int | None, overhead: int, why: str
) -> MemoryPlan:
    """Guest memory in ``hugepages-<size>``; memory holds the overhead (``:220-259``)."""
    guest_q = vmi.memory("guest")
    guest = guest_q.bytes() if guest_q is not None else None
    pages = base or 0
    if guest is not None and pages > guest:
        pages = guest
    extra = max(0, (base or 0) - guest) if guest is not None else 0
    plan = MemoryPlan(overhead + extra, None, (f"hugepages-{vmi.hugepages_size}", pages))
    if limit_base is not None:
        plan.limit = overhead + (max(0, limit_base - guest) if guest is not None else 0)
    plan.notes += [f"base: {why}", "hugepages: overcommitGuestOverhead is ignored"]
    return plan


def controller_cpu_string(total: int, ratio: int) -> str:
    """``%g`` of total/ratio, or ``%gm`` of it ×1000 below 1 (``renderresources.go:120-147``).

    Python's ``repr`` of a float has the same shortest digits as Go's ``%g``.
    """
    value = float(total) / float(ratio)
    if value < 1:
        return f"{_go_g(value * 1000)}m"
    return _go_g(value)


def _go_g(value: float) -> str:
    return repr(value).removesuffix(".0")


def expected_cpu(vmi: VmiView, release: Release, settings: OverheadSettings) -> CpuPlan:
    if vmi.dedicated:
        return _dedicated_cpu(vmi, release)
    pool = vmi.supplemental_pool_threads if release.io_threads_in_cpu else 0
    total, ratio = pod_vcpus(vmi) + pool, settings.cpu_allocation_ratio.value
    own_request = vmi.resource("requests", "cpu")
    own_limit = vmi.resource("limits", "cpu")
    plan = CpuPlan(own_request, own_limit)
    if own_request is not None:
        plan.notes.append("the VMI's own CPU request wins over the calculated one")
    elif total and ratio > 0:
        text = controller_cpu_string(total, ratio)
        plan.request = parse_quantity(text)
        plan.notes.append(f"({pod_vcpus(vmi)} vCPU + {pool} pool threads)/{ratio} → {text!r}")
    if own_limit is None:
        plan.limit_note = "none unless auto CPU limits (ResourceQuota/namespace) apply"
    return plan


def _dedicated_cpu(vmi: VmiView, release: Release) -> CpuPlan:
    pool = vmi.supplemental_pool_threads if release.io_threads_in_cpu else 0
    vcpus = topology_vcpus(vmi.domain("cpu"))
    if vcpus:
        request: Decimal | None = Decimal(vcpus + pool)
        limit: Decimal | None = request
    else:
        own_req, own_lim = vmi.resource("requests", "cpu"), vmi.resource("limits", "cpu")
        request = own_req.value + pool if own_req is not None else None
        limit = own_lim.value + pool if own_lim is not None else None
    notes = [f"dedicated: {vcpus} vCPU + {pool} pool threads"]
    if vmi.domain("cpu", "isolateEmulatorThread") is True:
        extra = _emulator_threads(vmi, limit or Decimal(0), pool, release)
        limit = (limit or Decimal(0)) + extra
        request = request + extra if request is not None else None
        notes.append(f"isolateEmulatorThread: +{extra}")
    return CpuPlan(_cpu(request), _cpu(limit), notes)


def _emulator_threads(vmi: VmiView, limit: Decimal, pool: int, release: Release) -> int:
    """1, or 2 with the parity annotation and an even count.

    The annotation is read from v1.1.1 (``v1.1.1:services/renderresources.go:220-224``).
    """
    annotations = as_map(dig(vmi.body, "metadata", "annotations"))
    policy = vmi.domain("ioThreadsPolicy")
    additional = pool if policy == "supplementalPool" else 0
    whole = int(limit.to_integral_value(rounding="ROUND_UP"))
    parity = release.emulator_parity and PARITY_ANNOTATION in annotations
    if parity and (whole + additional) % 2 == 0:
        return 2
    return 1


def _cpu(value: Decimal | None) -> Quantity | None:
    return None if value is None else quantity_of(value)
