"""Pod checks: memory and CPU expectations, version-dependent annotation, invariants, bad input."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kvtrace.overhead.expected import controller_cpu_string, expected_cpu, expected_memory
from kvtrace.overhead.report import verify_pod
from kvtrace.overhead.settings import SettingFlags, resolve_settings
from kvtrace.overhead.versions import RELEASES
from kvtrace.overhead.vmi_spec import VmiView
from parsers.manifests import load_manifests
from tests.conftest import SAMPLES
from tests.test_overhead_terms import MI, make_vmi

OVERHEAD = SAMPLES / "overhead"


def load(path: Path) -> dict[str, Any]:
    return load_manifests(path.read_bytes()).objects[0]


def case(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return load(OVERHEAD / f"{name}-pod.yaml"), load(OVERHEAD / f"{name}-vmi.yaml")


def settings(**flags: Any):
    return resolve_settings(None, SettingFlags(**flags))


def failing(report) -> list[str]:
    return [c.key for c in report.checks if c.ok is not True]


@pytest.mark.parametrize(
    ("total", "ratio", "text"),
    [
        (1, 10, "100m"),
        (2, 10, "200m"),
        (8, 10, "800m"),
        (16, 10, "1.6"),
        (10, 10, "1"),
        (1, 3, "333.3333333333333m"),
        (5, 3, "1.6666666666666667"),
    ],
)
def test_cpu_request_string_as_the_controller_writes_it(total, ratio, text):
    assert controller_cpu_string(total, ratio) == text


def test_cpu_request_counts_supplemental_pool_threads_from_v1_6():
    vmi = VmiView(make_vmi(2, ioThreads={"supplementalPoolThreadCount": 2}))
    assert str(expected_cpu(vmi, RELEASES[(1, 9)], settings()).request) == "400m"
    assert str(expected_cpu(vmi, RELEASES[(1, 5)], settings()).request) == "200m"
    assert str(expected_cpu(vmi, RELEASES[(1, 9)], settings(cpu_allocation_ratio=1)).request) == "4"


def test_dedicated_with_emulator_thread_and_parity():
    cpu = {
        "sockets": 3,
        "cores": 1,
        "threads": 1,
        "dedicatedCpuPlacement": True,
        "isolateEmulatorThread": True,
    }
    vmi = make_vmi(cpu=cpu)
    plan = expected_cpu(VmiView(vmi), RELEASES[(1, 9)], settings())
    assert (str(plan.request), str(plan.limit)) == ("4", "4")
    vmi["metadata"]["annotations"] = {"alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity": ""}
    vmi["spec"]["domain"]["cpu"]["sockets"] = 4
    plan = expected_cpu(VmiView(vmi), RELEASES[(1, 9)], settings())
    assert (str(plan.request), str(plan.limit)) == ("6", "6")


def test_memory_limit_and_overcommit_guest_overhead():
    vmi = make_vmi()
    vmi["spec"]["domain"]["resources"]["limits"] = {"memory": "3Gi"}
    vmi["spec"]["domain"]["resources"]["overcommitGuestOverhead"] = True
    plan = expected_memory(VmiView(vmi), settings(), 280 * MI)
    assert plan.request == 2048 * MI and plan.limit == (3072 + 280) * MI


def test_memory_overcommit_shrinks_a_guest_only_base():
    vmi = make_vmi(2, None, guest="2Gi")
    plan = expected_memory(VmiView(vmi), settings(memory_overcommit=150), 276 * MI)
    assert plan.request == 2 * 1024 * MI * 100 // 150 + 276 * MI


def test_hugepages_guest_smaller_than_request():
    vmi = make_vmi(requests="3Gi", memory={"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}})
    plan = expected_memory(VmiView(vmi), settings(), 280 * MI)
    assert plan.hugepages == ("hugepages-1Gi", 2048 * MI)
    assert plan.request == 280 * MI + 1024 * MI and plan.limit is None


@pytest.mark.parametrize(
    ("minor", "gates", "disabled", "expected"),
    [
        (9, (), (), True),
        (9, (), ("VmiMemoryOverheadReport",), False),
        (8, (), (), False),
        (8, ("VmiMemoryOverheadReport",), (), True),
        (7, ("VmiMemoryOverheadReport",), (), False),
    ],
)
def test_annotation_depends_on_release_and_gate(minor, gates, disabled, expected):
    pod, vmi = case("vm-2cpu-2gi")
    if not expected:
        del pod["metadata"]["annotations"]["kubevirt.io/memory-overhead-bytes"]
    flags = SettingFlags(feature_gates=gates, disabled_feature_gates=disabled)
    report = verify_pod(pod, vmi, None, flags, f"v1.{minor}.0")
    annotation = next(c for c in report.checks if c.key == "annotation")
    assert annotation.ok is True, annotation


def test_the_same_pod_under_v1_5_constants_fails_the_memory_checks():
    pod, vmi = case("vm-2cpu-2gi")
    report = verify_pod(pod, vmi, None, SettingFlags(), "v1.5.3")
    assert report.overhead is not None and report.overhead.total == 264 * MI
    assert {"annotation", "memoryRequest", "vmiStatus", "consoleLog"} <= set(failing(report))


def test_missing_vmi_runs_pod_only_checks_and_says_what_was_not_checked():
    pod, _ = case("vm-2cpu-2gi")
    report = verify_pod(pod, None, None, SettingFlags())
    assert [c.key for c in report.checks] == ["qemuTimeout", "readinessGate"]
    assert report.problems and "not checked: overhead terms" in report.problems[0]


def test_unparseable_vmi_quantity_is_a_problem_not_a_crash():
    pod, vmi = case("vm-2cpu-2gi")
    vmi = copy.deepcopy(vmi)
    vmi["spec"]["domain"]["resources"]["requests"]["memory"] = "2 Gi"
    report = verify_pod(pod, vmi, None, SettingFlags())
    assert report.overhead is None
    assert "spec.domain.resources.requests.memory" in report.problems[0]
    assert "'2 Gi'" in report.problems[0]


def test_unparseable_pod_quantity_leaves_that_check_unchecked():
    pod, vmi = case("vm-2cpu-2gi")
    pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = "2328MB"
    report = verify_pod(pod, vmi, None, SettingFlags())
    memory = [c for c in report.checks if c.key == "memory"]
    assert memory and memory[0].ok is None and "2328MB" in memory[0].note
    assert any("2328MB" in p for p in report.problems)


def test_version_comes_from_the_launcher_image_then_the_cr():
    pod, vmi = case("vm-2cpu-2gi")
    assert verify_pod(pod, vmi, None, SettingFlags()).version.source.startswith("launcher image")
    pod["spec"]["containers"][0]["image"] = "registry/virt-launcher@sha256:0"
    kubevirt = {"status": {"observedKubeVirtVersion": "v1.8.2"}}
    found = verify_pod(pod, vmi, kubevirt, SettingFlags()).version
    assert found.release.minor == 8 and "KubeVirt CR" in found.source


def test_unknown_version_uses_v1_9_and_says_so():
    pod, vmi = case("vm-2cpu-2gi")
    pod["spec"]["containers"][0]["image"] = "registry/virt-launcher:latest"
    version = verify_pod(pod, vmi, None, SettingFlags()).version
    assert version.release.minor == 9 and version.note and "unknown" in version.note


def test_cr_settings_win_over_flags_and_say_so():
    kubevirt = {
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"developerConfiguration": {"cpuAllocationRatio": 5}}},
    }
    resolved = resolve_settings(
        kubevirt, SettingFlags(cpu_allocation_ratio=20, memory_overcommit=120)
    )
    assert resolved.cpu_allocation_ratio.value == 5
    assert resolved.cpu_allocation_ratio.source == "KubeVirt CR kubevirt/kubevirt"
    assert resolved.memory_overcommit.value == 120 and resolved.memory_overcommit.source == "flag"
    assert any("cpuAllocationRatio ignored" in note for note in resolved.notes)
    assert resolve_settings(None, SettingFlags()).cpu_allocation_ratio.source == "default"


def _leaf_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for key, child in children:
        found += _leaf_paths(child, (*prefix, key))
    return found


def _replace(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    copied = copy.deepcopy(body)
    node: Any = copied
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copied


@pytest.mark.parametrize("sample", ["vm-dedicated", "vm-hugepages", "vm-passt"])
def test_odd_values_anywhere_never_raise(sample):
    """Every field of pod and VMI replaced by a wrongly typed value: a report, never an exception."""
    pod, vmi = case(sample)
    for value in (7, "x", None, [], {}, "1.5 Gi", [1]):
        for path in _leaf_paths(pod):
            verify_pod(_replace(pod, path, value), vmi, None, SettingFlags())
        for path in _leaf_paths(vmi):
            verify_pod(pod, _replace(vmi, path, value), None, SettingFlags())
