"""Pod invariants of ``renderLaunchManifest`` (services/template.go:395-797 at v1.9.0).

Grace periods, ``--qemu-timeout``, the readiness gate, device limits, run-as user and the
guest-console-log container, each check with its own position; what differs by release comes from
:mod:`kvtrace.overhead.versions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kvtrace.overhead.checks import Check
from kvtrace.overhead.pod import PodView, container_resource
from kvtrace.overhead.settings import OverheadSettings
from kvtrace.overhead.versions import Release
from kvtrace.overhead.vmi_spec import (
    VmiView,
    as_list,
    as_map,
    dig,
    grace_seconds,
    is_non_root,
    wants_qos_guaranteed,
)
from parsers.quantity import parse_quantity

UNPAUSED_GATE = "kubevirt.io/virtual-machine-unpaused"
CONSOLE = "guest-console-log"
_TIMEOUT = re.compile(r"(\d+)s")
_CONSOLE_DEFAULTS = {
    "requests": {"cpu": "5m", "memory": "35M"},
    "limits": {"cpu": "15m", "memory": "60M"},
}
NON_ROOT_GATES = ("NonRoot", "NonRootExperimental")  # v0.53–v0.58
DEVICES = ("devices.kubevirt.io/kvm", "devices.kubevirt.io/tun", "devices.kubevirt.io/vhost-net")


def grace_checks(pod: PodView, vmi: VmiView) -> list[Check]:
    """T = VMI grace (30 when unset); argv T+15, pod T+30 (``services/template.go:411-413``)."""
    grace = grace_seconds(vmi)
    argv = pod.flag_value("--grace-period-seconds")
    pod_grace = dig(pod.body, "spec", "terminationGracePeriodSeconds")
    note = f"T = {grace} (VMI spec.terminationGracePeriodSeconds, 30 when unset)"
    return [
        _equal(
            "graceArgv",
            "compute --grace-period-seconds",
            str(grace + 15),
            argv,
            note,
            "services/template.go:411-412, 468",
        ),
        _equal(
            "gracePod",
            "pod terminationGracePeriodSeconds",
            str(grace + 30),
            None if pod_grace is None else str(pod_grace),
            note,
            "services/template.go:413, 730",
        ),
    ]


def _equal(key: str, title: str, expected: str, actual: str | None, note: str, src: str) -> Check:
    shown = "absent" if actual is None else actual
    ok = actual == expected
    diff = "" if ok else ("missing" if actual is None else _int_diff(actual, expected))
    return Check(key, title, expected, shown, ok, diff, note, src)


def _int_diff(actual: str, expected: str) -> str:
    if actual.lstrip("-").isdigit() and expected.lstrip("-").isdigit():
        return f"{int(actual) - int(expected):+d}"
    return "differs"


def qemu_timeout_check(pod: PodView) -> Check:
    """``--qemu-timeout``, ``<N>s``; N in 240..359 (``services/template.go:368-372, 460``)."""
    key, title, src = "qemuTimeout", "compute --qemu-timeout", "services/template.go:101, 368-372"
    expected = "--qemu-timeout, 240s…359s (two argv elements)"
    joined = [a for a in pod.argv if a.startswith("--qemu-timeout") and a != "--qemu-timeout"]
    if joined:
        return Check(
            key, title, expected, joined[0], False, "flag and value in one element", "", src
        )
    value = pod.flag_value("--qemu-timeout")
    if value is None:
        return Check(key, title, expected, "absent", False, "missing", "", src)
    found = _TIMEOUT.fullmatch(value)
    if found is None:
        return Check(key, title, expected, value, False, "not <seconds>s", "", src)
    seconds = int(found[1])
    ok = 240 <= seconds <= 359
    diff = "" if ok else ("below 240s" if seconds < 240 else "above 359s")
    return Check(key, title, expected, value, ok, diff, "240 + rand(120)", src)


def readiness_gate_check(pod: PodView) -> Check:
    gates = [
        g.get("conditionType")
        for g in as_list(dig(pod.body, "spec", "readinessGates"))
        if isinstance(g, Mapping)
    ]
    ok = gates == [UNPAUSED_GATE]
    shown = ", ".join(map(str, gates)) or "none"
    return Check(
        "readinessGate",
        "readinessGates",
        UNPAUSED_GATE,
        shown,
        ok,
        "" if ok else "differs",
        "",
        "services/template.go:739, 1742-1748",
    )


def expected_devices(vmi: VmiView, settings: OverheadSettings) -> dict[str, bool]:
    """kvm unless emulated; tun; vhost-net for virtio (``renderresources.go:466-491``)."""
    emulation = bool(settings.use_emulation.value)
    ifaces = vmi.interfaces
    pod_iface = vmi.domain("devices", "autoattachPodInterface") is not False
    virtio = any(str(i.get("model") or "virtio") == "virtio" for i in ifaces)
    return {
        DEVICES[0]: not emulation,
        DEVICES[1]: bool(ifaces) or pod_iface,
        DEVICES[2]: virtio and not emulation,
    }


def device_check(pod: PodView, vmi: VmiView, settings: OverheadSettings) -> Check:
    wanted = expected_devices(vmi, settings)
    limits = as_map(dig(pod.compute, "resources", "limits"))
    have = {name: name in limits and parse_quantity(limits[name]).value == 1 for name in DEVICES}
    short = {name: name.rsplit("/", 1)[-1] for name in DEVICES}
    expected = ", ".join(short[n] for n in DEVICES if wanted[n]) or "none"
    actual = ", ".join(short[n] for n in DEVICES if have[n]) or "none"
    missing = [short[n] for n in DEVICES if wanted[n] and not have[n]]
    extra = [short[n] for n in DEVICES if have[n] and not wanted[n]]
    diff = "; ".join(p for p in (_named("missing", missing), _named("unexpected", extra)) if p)
    return Check(
        "devices",
        "compute limits: kvm, tun, vhost-net = 1",
        expected,
        actual,
        not diff,
        diff,
        "",
        "services/renderresources.go:466-491",
    )


def _named(label: str, names: list[str]) -> str:
    return f"{label} {', '.join(names)}" if names else ""


def webhook_runtime_user(release: Release, settings: OverheadSettings) -> tuple[bool, str]:
    """What the webhook would have written to ``status.runtimeUser`` (non-root or not).

    From v0.59 107 unless the Root gate is on (``v0.59.0:vmi-mutator.go:108-110``); before, 107
    only with the NonRoot gate (``v0.53.0:vmi-mutator.go:141-152``, ``feature-gates.go:129-130``).
    """
    if release.non_root_by_default:
        root = settings.gate_enabled("Root", beta_on_by_default=False)
        return not root, "status.runtimeUser absent: assumed " + (
            "0 (gate Root on)" if root else "107 (the webhook default without Root)"
        )
    gates = [g for g in NON_ROOT_GATES if settings.gate_enabled(g, beta_on_by_default=False)]
    if gates:
        return True, f"status.runtimeUser absent: assumed 107 (gate {gates[0]} on)"
    return False, f"status.runtimeUser absent: assumed 0 ({release.tag}: root without NonRoot)"


def run_as_user_checks(
    pod: PodView, vmi: VmiView, release: Release, settings: OverheadSettings
) -> list[Check]:
    non_root, why = is_non_root(vmi, webhook_runtime_user(release, settings))
    want = "107" if non_root else "0"
    src = "services/template.go:374-393, 700-716; services/rendercontainer.go:207-221"
    pod_user = dig(pod.body, "spec", "securityContext", "runAsUser")
    compute_user = dig(pod.compute, "securityContext", "runAsUser")
    return [
        _equal(
            "runAsUserPod",
            "pod securityContext.runAsUser",
            want,
            None if pod_user is None else str(pod_user),
            why,
            src,
        ),
        _equal(
            "runAsUserCompute",
            "compute securityContext.runAsUser",
            want,
            None if compute_user is None else str(compute_user),
            why,
            src,
        ),
    ]


def console_expected(vmi: VmiView, settings: OverheadSettings) -> tuple[bool, str]:
    """``autoattachSerialConsole`` not false and ``logSerialConsole`` (or the cluster) allows it."""
    if vmi.domain("devices", "autoattachSerialConsole") is False:
        return False, "autoattachSerialConsole: false"
    own = vmi.domain("devices", "logSerialConsole")
    if isinstance(own, bool):
        return own, f"logSerialConsole: {str(own).lower()}"
    disabled = bool(settings.disable_serial_console_log.value)
    return not disabled, f"cluster disableSerialConsoleLog {str(disabled).lower()}"


def console_checks(
    pod: PodView, vmi: VmiView, release: Release, settings: OverheadSettings
) -> list[Check]:
    wanted, why = console_expected(vmi, settings)
    if release.console_log == "none":
        wanted, why = False, f"no guest-console-log container before v1.1 ({release.tag})"
    init = release.console_log == "init"
    container = pod.container(CONSOLE, init=init)
    placement = _console_placement(container, wanted, init, why)
    if container is None or not wanted:
        return [placement]
    return [placement, _console_resources(container, vmi, settings)]


def _console_placement(
    container: Mapping[str, Any] | None, wanted: bool, init: bool, why: str
) -> Check:
    where = "initContainers, restartPolicy Always" if init else "containers, no restartPolicy"
    expected = where if wanted else "absent"
    src = "services/template.go:637-640; services/serialconsolelog.go:45"
    if container is None:
        return Check(
            "consoleLog",
            CONSOLE,
            expected,
            "absent",
            not wanted,
            "missing" if wanted else "",
            why,
            src,
        )
    policy = container.get("restartPolicy")
    actual = f"{'initContainers' if init else 'containers'}, restartPolicy {policy or 'unset'}"
    ok = wanted and (policy == "Always" if init else policy is None)
    return Check("consoleLog", CONSOLE, expected, actual, ok, "" if ok else "differs", why, src)


def _console_resources(
    container: Mapping[str, Any], vmi: VmiView, settings: OverheadSettings
) -> Check:
    wanted = _console_wanted(vmi, settings)
    mismatches, shown = [], []
    for kind in ("requests", "limits"):
        for name in ("cpu", "memory"):
            actual = container_resource(container, kind, name, CONSOLE)
            want = parse_quantity(wanted[kind][name])
            shown.append(f"{kind}.{name} {actual if actual is not None else 'absent'}")
            if actual is None or actual.value != want.value:
                mismatches.append(f"{kind}.{name}")
    expected = ", ".join(
        f"{k}.{n} {wanted[k][n]}" for k in ("requests", "limits") for n in ("cpu", "memory")
    )
    note = "requests = limits (dedicated/QoS)" if wanted["requests"] == wanted["limits"] else ""
    return Check(
        "consoleLogResources",
        f"{CONSOLE} resources",
        expected,
        ", ".join(shown),
        not mismatches,
        ", ".join(mismatches),
        note,
        "services/serialconsolelog.go:66-93",
    )


def _console_wanted(vmi: VmiView, settings: OverheadSettings) -> dict[str, dict[str, str]]:
    wanted = {kind: dict(values) for kind, values in _CONSOLE_DEFAULTS.items()}
    override = as_map(settings.console_log_resources.value)
    for kind in ("requests", "limits"):
        for name, value in as_map(override.get(kind)).items():
            if name in wanted[kind] and parse_quantity(value).value != 0:
                wanted[kind][name] = str(value)
    if vmi.dedicated or wants_qos_guaranteed(vmi):
        wanted["requests"] = dict(wanted["limits"])
    return wanted
