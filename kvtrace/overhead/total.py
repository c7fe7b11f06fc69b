"""Assemble the overhead: the late terms (QoS, reserved, ratio, network) and the total.

Order as in the controller (v1.9.0): the ``GetMemoryOverhead`` terms, the ratio
(``kvm/hypervisorbackend.go:165-175, 203-209``), then the network memory that
``CalculateMemoryOverhead`` adds after it (``services/template.go:1687-1691``;
``network/resources/memory.go:34-100``). Before v1.5.3 the 100Mi dedicated/QoS term came after
the ratio; v0.59–v1.2 had 800Mi per ``passt`` interface before it. Before v0.58.2 (and in
v0.59.0) there was no ratio (``Release.ratio``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvtrace.overhead import terms as t
from kvtrace.overhead.settings import OverheadSettings
from kvtrace.overhead.versions import RELEASES, Release
from kvtrace.overhead.vmi_spec import VmiView, as_map, wants_qos_guaranteed

MI = t.MI
_GO_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class Overhead:
    """Every term (applied or not) and the total the controller would write."""

    terms: list[t.Term]
    release: Release

    @property
    def total(self) -> int:
        return sum(term.counted for term in self.terms)


def overhead_terms(vmi: VmiView, release: Release, settings: OverheadSettings) -> Overhead:
    """Recompute the overhead of ``vmi`` under ``release`` with ``settings``."""
    ctx = t.Context(vmi, release, settings)
    terms = [t.page_tables(ctx), *t.fixed_terms(ctx), t.vcpu_term(ctx), t.iothread_term(ctx)]
    terms += [t.video_term(ctx), t.arm64_term(ctx), t.vfio_term(ctx)]
    terms += [t.downward_metrics_term(ctx), t.exec_probe_term(ctx), t.sev_term(ctx)]
    terms += [t.tpm_term(ctx)]
    if release.qos_term == "before-ratio":
        terms.append(qos_term(ctx))
    terms += [reserved_term(ctx), legacy_passt_term(ctx)]
    terms.append(ratio_term(ctx, sum(term.counted for term in terms)))
    if release.qos_term != "before-ratio":
        terms.append(qos_term(ctx))
    terms += [passt_binding_term(ctx), binding_plugin_term(ctx)]
    return Overhead(terms, release)


def qos_term(ctx: t.Context) -> t.Term:
    dedicated, qos = ctx.vmi.dedicated, wants_qos_guaranteed(ctx.vmi)
    hit = (dedicated or qos) and ctx.release.qos_term != "none"
    if ctx.release.qos_term == "none":
        why = f"no such term before v1.1 ({ctx.release.tag})"
    elif dedicated:
        why = "dedicatedCpuPlacement: true"
    else:
        why = "wants QoS Guaranteed" if qos else "not dedicated, not QoS Guaranteed"
    where = "after the ratio" if ctx.release.qos_term == "after-ratio" else "before the ratio"
    return ctx.term(
        "dedicatedOrQoS",
        f"dedicated CPU / QoS ({where})",
        "dedicatedCpuPlacement, or CPU and memory requests = limits",
        hit,
        why,
        100 * MI,
        "157-159",
    )


def reserved_term(ctx: t.Context) -> t.Term:
    added = ctx.vmi.memory("reservedOverhead.addedOverhead")
    if not ctx.release.reserved_overhead:
        hit, why = False, f"no reservedOverhead before v1.8 ({ctx.release.tag})"
    else:
        hit = added is not None
        why = f"addedOverhead {added}" if added is not None else "no reservedOverhead"
    size = added.bytes() if added is not None else 0
    return ctx.term(
        "reservedOverhead",
        "reserved overhead",
        "memory.reservedOverhead.addedOverhead set",
        hit,
        why,
        size,
        "161-163",
    )


def legacy_passt_term(ctx: t.Context) -> t.Term:
    ifaces = [i for i in ctx.vmi.interfaces if "passt" in i and not i.get("ports")]
    hit = ctx.release.legacy_passt_800 and bool(ifaces)
    if not ctx.release.legacy_passt_800:
        late = ctx.release.key > (1, 2)
        why = "removed in v1.3" if late else f"added in v0.59 (this is {ctx.release.tag})"
    else:
        why = f"{len(ifaces)} passt interface(s) without ports" if ifaces else "no passt interface"
    where = ctx.release if ctx.release.legacy_passt_800 else RELEASES[(1, 2)]
    return t.Term(
        "legacyPasst",
        "passt (v0.59–v1.2)",
        "800Mi per passt interface without ports, before the ratio",
        hit,
        why,
        len(ifaces) * 800 * MI,
        f"{where.overhead_at} (GetMemoryOverhead)",
    )


def parse_ratio(text: str | None, release: Release) -> tuple[float | None, str]:
    """The ratio as Go's ``strconv.ParseFloat`` would read it, or None and why not."""
    if text is None:
        return None, "additionalGuestMemoryOverheadRatio not set"
    if text == "" and release.ratio_needs_non_empty:
        return None, "additionalGuestMemoryOverheadRatio is empty"
    if not _GO_FLOAT.fullmatch(text):
        return None, f"ratio {text!r} does not parse as float64: overhead left as is (warning)"
    return float(text), f"ratio {text}"


def ratio_term(ctx: t.Context, overhead: int) -> t.Term:
    ratio, why = parse_ratio(ctx.settings.overhead_ratio.value, ctx.release)
    if not ctx.release.ratio:
        ratio, why = None, f"no overhead ratio in {ctx.release.tag} (v0.58.2, v0.59.1 and later)"
    added = 0
    if ratio is not None:
        kilobytes = -(-overhead // 1000)
        added = int(kilobytes * (ratio - 1)) * 1000
        why += f" ({ctx.settings.overhead_ratio.source}): +trunc({kilobytes} kB × {ratio - 1:g})"
    return ctx.term(
        "ratio",
        "additionalGuestMemoryOverheadRatio",
        "ratio set: overhead + trunc(ceil(overhead/1000) × (r−1)) × 1000",
        ratio is not None,
        why,
        added,
        "165-175, 203-209",
    )


def passt_binding_term(ctx: t.Context) -> t.Term:
    hit = any("passtBinding" in i for i in ctx.vmi.interfaces)
    if not ctx.release.passt_binding_250:
        why, hit = f"no core passtBinding term before v1.8 ({ctx.release.tag})", False
    else:
        why = "an interface with passtBinding" if hit else "no passtBinding interface"
    return t.Term(
        "passtBinding",
        "passt binding (after the ratio)",
        "any interface with passtBinding, once",
        hit,
        why,
        250 * MI,
        "network/resources/memory.go:40-42, 97-100",
    )


def binding_plugin_term(ctx: t.Context) -> t.Term:
    bindings = [as_map(i.get("binding")).get("name") for i in ctx.vmi.interfaces]
    names = sorted({str(name) for name in bindings if name})
    registered: dict[str, int] = ctx.settings.binding_memory.value
    known = [n for n in names if n in registered]
    size = sum(registered[n] for n in known)
    why = _plugin_why(names, known, ctx)
    hit = ctx.release.binding_plugins and bool(known)
    return t.Term(
        "bindingPlugins",
        "network binding plugins (after the ratio)",
        "computeResourceOverhead.requests.memory of each distinct registered plugin",
        hit,
        why,
        size,
        "network/resources/memory.go:44-95",
    )


def _plugin_why(names: list[str], known: list[str], ctx: t.Context) -> str:
    if not ctx.release.binding_plugins:
        return f"no binding-plugin term before v1.3 ({ctx.release.tag})"
    if not names:
        return "no interface uses a binding plugin"
    unknown = [n for n in names if n not in known]
    text = f"plugins {', '.join(known)} ({ctx.settings.binding_memory.source})" if known else ""
    if unknown:
        text += ("; " if text else "") + f"not registered: {', '.join(unknown)} (no overhead)"
    return text
