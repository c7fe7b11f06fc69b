"""Verify one launcher pod against its VMI: the overhead terms and every pod check.

``verify_pod`` never raises on bad objects: what could not be read becomes a ``problem`` (exit 1)
or an unchecked row, and every check that does not need the missing piece still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvtrace.overhead import checks as c
from kvtrace.overhead import invariants as inv
from kvtrace.overhead.expected import expected_memory
from kvtrace.overhead.pod import PodView
from kvtrace.overhead.settings import OverheadSettings, SettingFlags, resolve_settings
from kvtrace.overhead.total import Overhead, overhead_terms
from kvtrace.overhead.versions import (
    ALL_RELEASES,
    HIGHEST,
    LOWEST,
    Release,
    VersionChoice,
    choose_release,
    image_tag,
)
from kvtrace.overhead.vmi_spec import FieldError, VmiView, dig
from parsers.quantity import QuantityError

POD_ONLY = "qemuTimeout, readinessGate"
_SPAN = f"{LOWEST.line}–{HIGHEST.line}"
NEEDS_VMI = "overhead terms, annotation, VMI status, memory, CPU, grace periods, devices, "
NEEDS_VMI += "guest-console-log, runAsUser"


@dataclass
class OverheadReport:
    pod: PodView
    vmi: VmiView | None
    version: VersionChoice
    settings: OverheadSettings | None
    overhead: Overhead | None = None
    checks: list[c.Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    vmi_lookup: str = ""

    @property
    def failed(self) -> list[c.Check]:
        return [check for check in self.checks if check.ok is False]


def detect_version(
    pod: PodView, kubevirt: Mapping[str, Any] | None, flag: str | None, fallback: str | None = None
) -> VersionChoice:
    """``--kubevirt-version``, else the launcher image tag, else the KubeVirt CR, else fallback."""
    if flag:
        return choose_release(flag, "--kubevirt-version")
    image = pod.launcher_image
    tag = image_tag(image) if image else None
    if tag and choose_release(tag, "").note is None:
        return choose_release(tag, f"launcher image {image}")
    observed = dig(kubevirt, "status", "observedKubeVirtVersion")
    if observed:
        return choose_release(str(observed), "KubeVirt CR status.observedKubeVirtVersion")
    if fallback:
        return choose_release(fallback, "bundle manifest")
    return choose_release(tag, f"launcher image {image}" if image else "no version found")


def verify_pod(
    pod_body: Mapping[str, Any],
    vmi_body: Mapping[str, Any] | None,
    kubevirt: Mapping[str, Any] | None,
    flags: SettingFlags,
    version_flag: str | None = None,
    fallback_version: str | None = None,
    vmi_lookup: str = "",
) -> OverheadReport:
    pod = PodView(pod_body)
    version = detect_version(pod, kubevirt, version_flag, fallback_version)
    vmi = VmiView(vmi_body) if vmi_body else None
    report = OverheadReport(pod, vmi, version, None, vmi_lookup=vmi_lookup)
    try:
        report.settings = resolve_settings(kubevirt, flags)
    except QuantityError as err:
        report.problems.append(f"cluster settings: {err}")
    report.checks += [inv.qemu_timeout_check(pod), inv.readiness_gate_check(pod)]
    if report.vmi is None:
        report.problems.append(f"no VMI: could check only {POD_ONLY}; not checked: {NEEDS_VMI}")
    elif report.settings is not None:
        if version.found is None:  # no flag, tag, CR or manifest named it
            report.version = release_from_request(report.pod, report.vmi, report.settings, version)
        _verify_with_vmi(report, report.vmi, report.settings)
    return report


def release_from_request(
    pod: PodView, vmi: VmiView, settings: OverheadSettings, unknown: VersionChoice
) -> VersionChoice:
    """No tag, CR or flag names the release: the releases whose overhead formula gives the
    compute container's memory request to the byte, named (never a silent v1.9)."""
    try:
        actual = pod.compute_resource("requests", "memory")
    except FieldError:
        actual = None
    if actual is None:
        return unknown
    wanted = actual.bytes()
    matching = [r for r in ALL_RELEASES if _request_of(vmi, r, settings) == wanted]
    if not matching:
        note = (
            f"KubeVirt version unknown ({unknown.source}) and no release {_SPAN} gives the "
            f"request {actual}: checked against {unknown.release.tag}; --kubevirt-version decides"
        )
        return VersionChoice(unknown.release, None, unknown.source, note)
    tags = ", ".join(r.tag for r in matching)
    note = (
        f"KubeVirt version unknown ({unknown.source}): the request {actual} is what {tags} "
        f"compute{'s' if len(matching) == 1 else ''}; checked against {matching[-1].tag}"
        + ("" if len(matching) == 1 else "; --kubevirt-version decides between them")
    )
    return VersionChoice(matching[-1], None, f"memory request ({tags})", note)


def _request_of(vmi: VmiView, release: Release, settings: OverheadSettings) -> int | None:
    try:
        total = overhead_terms(vmi, release, settings).total
        return expected_memory(vmi, settings, total, release).request
    except (FieldError, QuantityError):
        return None


def _verify_with_vmi(report: OverheadReport, vmi: VmiView, settings: OverheadSettings) -> None:
    release, pod = report.version.release, report.pod
    try:
        report.overhead = overhead_terms(vmi, release, settings)
    except (FieldError, QuantityError) as err:
        report.problems.append(
            f"cannot compute the overhead: {err}; not checked: overhead terms, annotation, "
            "VMI status, memory"
        )
    total = report.overhead.total if report.overhead else None
    steps: list[tuple[str, Callable[[], c.Check | list[c.Check]]]] = []
    if total is not None:
        steps += [
            ("annotation", lambda: c.annotation_check(pod, total, release, settings)),
            ("vmiStatus", lambda: c.status_check(vmi, total, release, settings)),
            ("memory", lambda: c.memory_checks(pod, vmi, settings, total, release)),
        ]
    steps += [
        ("cpu", lambda: c.cpu_checks(pod, vmi, release, settings)),
        ("grace", lambda: inv.grace_checks(pod, vmi)),
        ("consoleLog", lambda: inv.console_checks(pod, vmi, release, settings)),
        ("devices", lambda: inv.device_check(pod, vmi, settings)),
        ("runAsUser", lambda: inv.run_as_user_checks(pod, vmi, release, settings)),
    ]
    for key, step in steps:
        found = c.guarded(key, step)
        report.checks += found
        report.problems += [f"{x.key}: {x.note}" for x in found if x.note.startswith("cannot")]
