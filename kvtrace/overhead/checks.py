"""Expected vs actual for the overhead record and the compute container's resources.

``ok`` is True (✓), False (✗) or None (could not be checked; ``note`` says why). Quantities are
compared by value: the API server re-canonicalises strings (the controller writes ``1.6``, the
pod then shows ``1600m``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvtrace.overhead.expected import expected_cpu, expected_memory
from kvtrace.overhead.pod import OVERHEAD_ANNOTATION, PodView
from kvtrace.overhead.settings import OVERHEAD_GATE, OverheadSettings
from kvtrace.overhead.versions import Release
from kvtrace.overhead.vmi_spec import FieldError, VmiView, quantity_at
from parsers.quantity import BINARY_SI, Quantity, QuantityError, quantity_of


@dataclass(frozen=True)
class Check:
    key: str
    title: str
    expected: str
    actual: str
    ok: bool | None
    diff: str = ""
    note: str = ""
    source: str = ""


def byte_diff(actual: int, expected: int) -> str:
    delta = actual - expected
    if delta == 0:
        return ""
    sign = "+" if delta > 0 else "-"
    size = abs(delta)
    exact = str(quantity_of(size, BINARY_SI))  # 400Mi, 1536Ki; the bytes when no unit is exact
    unit = f" ({sign}{exact})" if exact != str(size) else ""
    return f"{sign}{size} {'byte' if size == 1 else 'bytes'}{unit}"


def compare_bytes(  # one argument per output column
    key: str, title: str, expected: int | None, actual: Quantity | None, source: str, note: str = ""
) -> Check:
    shown = "absent" if actual is None else f"{actual} ({actual.bytes()})"
    if expected is None:
        ok = actual is None
        diff = "" if ok else "unexpected value"
        return Check(key, title, "absent", shown, ok, diff, note, source)
    want = f"{quantity_of(expected, BINARY_SI)} ({expected})"
    if actual is None:
        return Check(key, title, want, shown, False, "missing", note, source)
    ok = actual.bytes() == expected
    return Check(key, title, want, shown, ok, byte_diff(actual.bytes(), expected), note, source)


def compare_cpu(
    key: str, title: str, expected: Quantity | None, actual: Quantity | None, source: str, note: str
) -> Check:
    want = "absent" if expected is None else str(expected)
    shown = "absent" if actual is None else str(actual)
    if expected is None or actual is None:
        ok = expected is None and actual is None
        return Check(key, title, want, shown, ok, "" if ok else "presence differs", note, source)
    delta = actual.millis() - expected.millis()
    diff = f"{delta:+d}m" if actual.value != expected.value else ""
    return Check(key, title, want, shown, actual.value == expected.value, diff, note, source)


def annotation_expected(release: Release, settings: OverheadSettings) -> tuple[bool, str]:
    """Whether virt-controller writes the annotation (``services/template.go:631-633``)."""
    if release.annotation == "none":
        return False, f"the annotation does not exist before v1.8 ({release.tag})"
    beta = release.annotation == "beta"
    on = settings.gate_enabled(OVERHEAD_GATE, beta_on_by_default=beta)
    state = "on" if on else "off"
    default = "Beta, on unless disabled" if beta else "Alpha, off unless listed"
    return on, f"gate {OVERHEAD_GATE} {state} ({default} in {release.tag})"


def annotation_check(
    pod: PodView, total: int, release: Release, settings: OverheadSettings
) -> Check:
    key, title = "annotation", f"annotation {OVERHEAD_ANNOTATION}"
    wanted, why = annotation_expected(release, settings)
    raw = pod.annotation(OVERHEAD_ANNOTATION)
    src = "services/template.go:631-633, 1678-1694"
    if raw is None:
        expected = str(total) if wanted else "absent"
        return Check(
            key, title, expected, "absent", not wanted, "missing" if wanted else "", why, src
        )
    if not raw.isdigit():
        return Check(key, title, str(total), raw, False, "not a decimal byte count", why, src)
    note = why if wanted else f"present although {why}"
    diff = byte_diff(int(raw), total)
    return Check(key, title, str(total), raw, int(raw) == total, diff, note, src)


def status_check(vmi: VmiView, total: int, release: Release, settings: OverheadSettings) -> Check:
    key, title = "vmiStatus", "VMI status.memory.memoryOverhead"
    src = "watch/vmi/lifecycle.go:313-315, 1165-1183"
    actual = quantity_at(vmi.body, "status.memory.memoryOverhead")
    wanted, why = annotation_expected(release, settings)
    expected = f"{quantity_of(total, BINARY_SI)} ({total})"
    if actual is None:
        return Check(key, title, expected if wanted else "absent", "absent", None, "", why, src)
    diff = byte_diff(actual.bytes(), total)
    return Check(key, title, expected, f"{actual}", actual.bytes() == total, diff, why, src)


def memory_checks(
    pod: PodView, vmi: VmiView, settings: OverheadSettings, total: int, release: Release
) -> list[Check]:
    plan = expected_memory(vmi, settings, total, release)
    note = "; ".join(plan.notes)
    src = "services/renderresources.go:220-306, 356-359"
    checks = [
        compare_bytes(
            "memoryRequest",
            "compute requests.memory",
            plan.request,
            pod.compute_resource("requests", "memory"),
            src,
            note,
        ),
        compare_bytes(
            "memoryLimit",
            "compute limits.memory",
            plan.limit,
            pod.compute_resource("limits", "memory"),
            src,
            "an auto memory limit (ResourceQuota with limits.memory) is not modelled"
            if plan.limit is None
            else "",
        ),
    ]
    if plan.hugepages is not None:
        name, size = plan.hugepages
        for kind in ("requests", "limits"):
            actual = pod.compute_resource(kind, name)
            checks.append(
                compare_bytes(
                    f"hugepages{kind.title()}",
                    f"compute {kind}.{name}",
                    size,
                    actual,
                    "services/renderresources.go:220-234",
                )
            )
    return checks


def cpu_checks(
    pod: PodView, vmi: VmiView, release: Release, settings: OverheadSettings
) -> list[Check]:
    plan = expected_cpu(vmi, release, settings)
    note = "; ".join(plan.notes)
    src = "services/renderresources.go:120-147, 319-354"
    return [
        compare_cpu(
            "cpuRequest",
            "compute requests.cpu",
            plan.request,
            pod.compute_resource("requests", "cpu"),
            src,
            note,
        ),
        compare_cpu(
            "cpuLimit",
            "compute limits.cpu",
            plan.limit,
            pod.compute_resource("limits", "cpu"),
            src,
            plan.limit_note or note,
        ),
    ]


def guarded(key: str, compute: Callable[[], Check | list[Check]]) -> list[Check]:
    """Run a check builder; an unreadable field becomes an unchecked row, not a crash."""
    try:
        result = compute()
    except (FieldError, QuantityError) as err:
        return [Check(key, key, "?", "?", None, "", f"cannot read {err}")]
    return result if isinstance(result, list) else [result]
