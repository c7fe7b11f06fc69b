"""Cluster settings that feed the overhead and the pod: from the KubeVirt CR, flags or defaults.

Each setting says where it came from. Per setting: the KubeVirt CR wins when it sets the field
(it is what virt-controller read); else the flag; else the KubeVirt default. A flag that the CR
overrides is reported in ``notes``. Paths and defaults at v1.9.0: ``virt-config.go:66, 88,
155-157, 226, 306-308, 318-340, 480-482``; ``configuration.go:173, 220``; the overhead ratio
``api/core/v1/types.go:3105-3111``; feature gates ``featuregate/feature-gates.go:89-112``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvtrace.overhead.vmi_spec import as_list, dig
from parsers.quantity import QuantityError, parse_quantity

DEFAULT = "default"
FLAG = "flag"
OVERHEAD_GATE = "VmiMemoryOverheadReport"


@dataclass(frozen=True)
class Setting:
    name: str
    value: Any
    source: str  # "KubeVirt CR <ns>/<name>", "flag", "default"


@dataclass(frozen=True)
class SettingFlags:
    """What the user passed on the command line (None = not given)."""

    cpu_allocation_ratio: int | None = None
    overhead_ratio: str | None = None
    memory_overcommit: int | None = None
    feature_gates: tuple[str, ...] = ()
    disabled_feature_gates: tuple[str, ...] = ()
    binding_plugins: tuple[str, ...] = ()  # NAME=MEMORY


@dataclass
class OverheadSettings:
    """Resolved settings; ``binding_memory`` maps plugin name → bytes of its memory overhead."""

    cpu_allocation_ratio: Setting
    overhead_ratio: Setting
    memory_overcommit: Setting
    feature_gates: Setting
    disabled_feature_gates: Setting
    binding_memory: Setting
    use_emulation: Setting
    disable_serial_console_log: Setting
    console_log_resources: Setting
    architecture: Setting
    notes: list[str] = field(default_factory=list)

    def all(self) -> list[Setting]:
        return [
            self.cpu_allocation_ratio,
            self.overhead_ratio,
            self.memory_overcommit,
            self.feature_gates,
            self.disabled_feature_gates,
            self.binding_memory,
            self.use_emulation,
            self.disable_serial_console_log,
            self.console_log_resources,
            self.architecture,
        ]

    def gate_enabled(self, gate: str, beta_on_by_default: bool) -> bool:
        """A gate is on when listed, or (a v1.9 Beta gate) when not disabled."""
        if gate in self.feature_gates.value:
            return True
        return beta_on_by_default and gate not in self.disabled_feature_gates.value


def resolve_settings(kubevirt: Mapping[str, Any] | None, flags: SettingFlags) -> OverheadSettings:
    """Every setting with its source; ``kubevirt`` is the KubeVirt CR body or None."""
    cr = _CR(kubevirt)
    notes: list[str] = []
    config = cr.path("spec", "configuration")
    dev = cr.path("spec", "configuration", "developerConfiguration")

    def pick(name: str, found: Any, flag: Any, default: Any) -> Setting:
        if found is not None:
            if flag not in (None, ()):
                notes.append(f"flag for {name} ignored: the {cr.label} sets {found!r}")
            return Setting(name, found, cr.label)
        if flag not in (None, ()):
            return Setting(name, flag, FLAG)
        return Setting(
            name, default, DEFAULT if kubevirt is None else f"default, unset in {cr.label}"
        )

    return OverheadSettings(
        cpu_allocation_ratio=pick(
            "cpuAllocationRatio",
            _int(dev.get("cpuAllocationRatio")),
            flags.cpu_allocation_ratio,
            10,
        ),
        overhead_ratio=pick(
            "additionalGuestMemoryOverheadRatio",
            _text(config.get("additionalGuestMemoryOverheadRatio")),
            flags.overhead_ratio,
            None,
        ),
        memory_overcommit=pick(
            "memoryOvercommit", _int(dev.get("memoryOvercommit")), flags.memory_overcommit, 100
        ),
        feature_gates=pick(
            "featureGates", _names(dev.get("featureGates")), flags.feature_gates, ()
        ),
        disabled_feature_gates=pick(
            "disabledFeatureGates",
            _names(dev.get("disabledFeatureGates")),
            flags.disabled_feature_gates,
            (),
        ),
        binding_memory=pick(
            "network.binding",
            _cr_bindings(cr.path("spec", "configuration", "network", "binding")),
            _flag_bindings(flags.binding_plugins),
            {},
        ),
        use_emulation=pick("useEmulation", _bool(dev.get("useEmulation")), None, False),
        disable_serial_console_log=pick(
            "virtualMachineOptions.disableSerialConsoleLog",
            _bool(
                cr.path("spec", "configuration", "virtualMachineOptions").get(
                    "disableSerialConsoleLog"
                )
            ),
            None,
            False,
        ),
        console_log_resources=pick(
            "supportContainerResources[guest-console-log]", _console_override(config), None, None
        ),
        architecture=pick(
            "controller architecture",
            _text(cr.path("status").get("defaultArchitecture")),
            None,
            "amd64",
        ),
        notes=notes,
    )


class _CR:
    def __init__(self, body: Mapping[str, Any] | None) -> None:
        self.body = body or {}
        meta = self.body.get("metadata") or {}
        self.label = f"KubeVirt CR {meta.get('namespace', '?')}/{meta.get('name', '?')}"

    def path(self, *keys: str) -> Mapping[str, Any]:
        node: Any = self.body
        for key in keys:
            node = node.get(key) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    return str(value)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(str(v) for v in value)


def _cr_bindings(binding: Mapping[str, Any]) -> dict[str, int] | None:
    """``spec.configuration.network.binding.<name>.computeResourceOverhead.requests.memory``."""
    if not binding:
        return None
    memory: dict[str, int] = {}
    for name, plugin in binding.items():
        raw = dig(plugin, "computeResourceOverhead", "requests", "memory")
        memory[str(name)] = parse_quantity(raw).bytes() if raw is not None else 0
    return memory


def _flag_bindings(pairs: tuple[str, ...]) -> dict[str, int] | None:
    if not pairs:
        return None
    memory: dict[str, int] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise QuantityError(f"--binding-plugin {pair!r}: expected NAME=MEMORY (e.g. x=100Mi)")
        memory[name] = parse_quantity(raw).bytes()
    return memory


def _console_override(config: Mapping[str, Any]) -> dict[str, Any] | None:
    for entry in as_list(config.get("supportContainerResources")):
        if isinstance(entry, Mapping) and entry.get("type") == "guest-console-log":
            resources = entry.get("resources")
            return dict(resources) if isinstance(resources, Mapping) else None
    return None
