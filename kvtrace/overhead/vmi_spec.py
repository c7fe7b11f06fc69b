"""Read the VMI fields the overhead and the pod renderer use (KubeVirt v1.9.0's
``GetMemoryOverhead`` in kvm/hypervisorbackend.go and the renderer in services/).

Quantities go through :mod:`parsers.quantity`; a field that cannot be parsed raises
:class:`FieldError` naming the field path, so the report can say what could not be checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parsers.quantity import Quantity, QuantityError, parse_quantity


class FieldError(ValueError):
    """A VMI or pod field holds a value that cannot be read; ``path`` names it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path


def dig(body: Any, *keys: str) -> Any:
    """``body[k1][k2]…`` or None when any step is missing or not a mapping."""
    node = body
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else empty: odd manifests never crash a check."""
    return value if isinstance(value, list) else []


def as_map(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else empty."""
    return value if isinstance(value, Mapping) else {}


def quantity_at(body: Any, path: str) -> Quantity | None:
    """The quantity at dotted ``path`` (None when absent or null)."""
    raw = dig(body, *path.split("."))
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError as err:
        raise FieldError(path, str(err)) from err


@dataclass(frozen=True)
class VmiView:
    """Typed accessors over a VMI body (a plain dict)."""

    body: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(dig(self.body, "metadata", "name") or "")

    @property
    def namespace(self) -> str:
        return str(dig(self.body, "metadata", "namespace") or "default")

    @property
    def uid(self) -> str:
        return str(dig(self.body, "metadata", "uid") or "")

    def spec(self, *keys: str) -> Any:
        return dig(self.body, "spec", *keys)

    def domain(self, *keys: str) -> Any:
        return dig(self.body, "spec", "domain", *keys)

    def resource(self, kind: str, name: str) -> Quantity | None:
        """``spec.domain.resources.<kind>.<name>`` (kind: requests or limits)."""
        return quantity_at(self.body, f"spec.domain.resources.{kind}.{name}")

    def memory(self, field: str) -> Quantity | None:
        """``spec.domain.memory.<field>`` (guest, reservedOverhead.addedOverhead)."""
        return quantity_at(self.body, f"spec.domain.memory.{field}")

    @property
    def interfaces(self) -> list[Mapping[str, Any]]:
        found = as_list(self.domain("devices", "interfaces"))
        return [i for i in found if isinstance(i, Mapping)]

    @property
    def dedicated(self) -> bool:
        return self.domain("cpu", "dedicatedCpuPlacement") is True

    @property
    def hugepages_size(self) -> str | None:
        size = self.domain("memory", "hugepages", "pageSize")
        return str(size) if size else None

    @property
    def supplemental_pool_threads(self) -> int:
        count = self.domain("ioThreads", "supplementalPoolThreadCount")
        return count if isinstance(count, int) and not isinstance(count, bool) else 0


def webhook_memory_request(vmi: VmiView, overcommit: int) -> tuple[int, str]:
    """``requests.memory`` as the VMI webhook of v0.53–v1.6.3 left it, and how it got there.

    The request; else a non-zero limit; else, only when the request key is absent,
    ``memory.guest`` or else the hugepage size, ×100/memoryOvercommit unless that is 100
    (``v0.53.0:vmi-mutator.go:312-343``, ``v1.0.0:webhooks/defaults.go:128-159``,
    ``v1.6.0:defaults/defaults.go:317-349``).
    """
    request = vmi.resource("requests", "memory")
    if request is not None and request.value != 0:
        return request.bytes(), f"spec.domain.resources.requests.memory {request}"
    limit = vmi.resource("limits", "memory")
    if limit is not None and limit.value != 0:
        return limit.bytes(), f"request defaulted from the limit {limit} (webhook, before v1.6.4)"
    if request is not None:
        return 0, f"requests.memory {request} (the webhook keeps a zero request)"
    memory, what = _guest_or_page_size(vmi)
    if memory <= 0:
        return 0, "no memory request, limit, memory.guest or hugepages"
    if overcommit == 100:
        return memory, f"request defaulted from {what} (webhook, before v1.6.4)"
    value = memory * 100 // overcommit
    return value, f"request defaulted from {what} ×100/{overcommit} (webhook, before v1.6.4)"


def _guest_or_page_size(vmi: VmiView) -> tuple[int, str]:
    guest = vmi.memory("guest")
    if guest is not None:
        return guest.bytes(), f"memory.guest {guest}"
    size = vmi.hugepages_size
    if size is None:
        return 0, ""
    try:
        return parse_quantity(size).bytes(), f"hugepage size {size}"
    except QuantityError:  # the webhook skips a page size it cannot parse
        return 0, ""


def topology_vcpus(cpu: Any) -> int:
    """cores × sockets × threads, skipping zeros; all zero gives 0 (``hw_utils.go:87-104``)."""
    product, seen = 1, False
    for key in ("cores", "sockets", "threads"):
        value = dig(cpu, key)
        if isinstance(value, int) and value > 0:
            product, seen = product * value, True
    return product if seen else 0


def overhead_vcpus(vmi: VmiView) -> tuple[int, str]:
    """vCPUs for overhead term 7 and how they were found (``kvm/hypervisorbackend.go:92-110``)."""
    cpu = vmi.domain("cpu")
    if cpu is not None:
        count, how = topology_vcpus(cpu), "spec.domain.cpu topology"
    else:
        quantity = vmi.resource("limits", "cpu") or vmi.resource("requests", "cpu")
        count = quantity.bytes() if quantity else 0
        how = "CPU limit/request (no spec.domain.cpu)"
    if count < 1:
        return 1, f"{how} gives {count}: clamped to 1"
    return count, how


def pod_vcpus(vmi: VmiView) -> int:
    """``calcVCPUs``: the topology product, or 1 without ``spec.domain.cpu`` (``:459-464``)."""
    cpu = vmi.domain("cpu")
    return topology_vcpus(cpu) if cpu is not None else 1


def wants_qos_guaranteed(vmi: VmiView) -> bool:
    """CPU request = limit ≠ 0, and memory request = limit ≠ 0 (or only a limit).

    ``api/core/v1/types.go:580-586``.
    """
    cpu_req, cpu_lim = vmi.resource("requests", "cpu"), vmi.resource("limits", "cpu")
    mem_req, mem_lim = vmi.resource("requests", "memory"), vmi.resource("limits", "memory")
    cpu_ok = _same_nonzero(cpu_req, cpu_lim)
    mem_ok = _same_nonzero(mem_req, mem_lim) if _nonzero(mem_req) else _nonzero(mem_lim)
    return bool(cpu_ok and mem_ok)


def _same_nonzero(request: Quantity | None, limit: Quantity | None) -> bool:
    return request is not None and limit is not None and request.value == limit.value != 0


def _nonzero(quantity: Quantity | None) -> bool:
    return quantity is not None and quantity.value != 0


def is_non_root(vmi: VmiView, absent: tuple[bool, str]) -> tuple[bool, str]:
    """``vmitrait.IsNonRoot``: annotation ``kubevirt.io/nonroot`` or ``status.runtimeUser != 0``
    (``v0.53.0:pkg/util/util.go:28-33`` is the same); ``absent`` when the status lacks it."""
    if dig(vmi.body, "metadata", "annotations", "kubevirt.io/nonroot") is not None:
        return True, "annotation kubevirt.io/nonroot"
    user = dig(vmi.body, "status", "runtimeUser")
    if user is None:
        return absent
    return user != 0, f"status.runtimeUser {user}"


def grace_seconds(vmi: VmiView) -> int:
    """T: ``spec.terminationGracePeriodSeconds`` or 30 (``api/core/v1/types.go:40``)."""
    value = vmi.spec("terminationGracePeriodSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else 30
