"""The memory overhead term by term: the seed's figures, the v1.9.0 worked examples and the
per-release totals (docs/verify-overhead.md) exactly."""

from __future__ import annotations

from typing import Any

import pytest

from kvtrace.overhead.settings import SettingFlags, resolve_settings
from kvtrace.overhead.total import overhead_terms, parse_ratio
from kvtrace.overhead.versions import RELEASES, choose_release, image_tag
from kvtrace.overhead.vmi_spec import VmiView

MI = 1024 * 1024


def make_vmi(
    vcpus: int = 2, requests: str | None = "2Gi", guest: str | None = None, **domain: Any
) -> dict[str, Any]:
    """A VMI as the v1.9.0 webhook leaves it: topology set, memory as given."""
    spec_domain: dict[str, Any] = {
        "cpu": {"cores": 1, "sockets": vcpus, "threads": 1},
        "devices": {},
    }
    if requests:
        spec_domain["resources"] = {"requests": {"memory": requests}}
    if guest:
        spec_domain["memory"] = {"guest": guest}
    for key, value in domain.items():
        spec_domain[key] = value
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {"name": "testvm", "namespace": "default", "uid": "u-1"},
        "spec": {"architecture": "amd64", "domain": spec_domain},
    }


def total(
    vmi: dict[str, Any], minor: int = 9, kubevirt: dict[str, Any] | None = None, **flags: Any
) -> int:
    settings = resolve_settings(kubevirt, SettingFlags(**flags))
    return overhead_terms(VmiView(vmi), RELEASES[(1, minor)], settings).total


def terms(vmi: dict[str, Any], minor: int = 9, **flags: Any) -> dict[str, Any]:
    settings = resolve_settings(None, SettingFlags(**flags))
    return {t.key: t for t in overhead_terms(VmiView(vmi), RELEASES[(1, minor)], settings).terms}


def test_seed_2_vcpu_2gi_is_280mi():
    assert total(make_vmi(2, "2Gi")) == 280 * MI == 293601280


def test_seed_8_vcpu_8gi_is_340mi():
    assert total(make_vmi(8, "8Gi")) == 340 * MI == 356515840


@pytest.mark.parametrize(
    ("vmi", "expected"),
    [
        (make_vmi(1, "1Gi"), 283115520),  # 270Mi, the unit-test base case
        (make_vmi(2, None, guest="2Gi"), 289406976),  # 276Mi: page tables from requests only
        (make_vmi(8, None, guest="8Gi"), 339738624),  # 324Mi
    ],
)
def test_worked_examples(vmi, expected):
    assert total(vmi) == expected


def test_graphics_off_is_248mi():
    vmi = make_vmi(devices={"autoattachGraphicsDevice": False})
    assert total(vmi) == 248 * MI


def test_qos_guaranteed_adds_100mi():
    resources = {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    assert total(make_vmi(resources=resources)) == 380 * MI == 398458880


def test_ratio_1_5_rounds_through_kilobytes():
    assert total(make_vmi(), overhead_ratio="1.5") == 440402280
    assert 440402280 - 420 * MI == 360


def test_ratio_from_the_kubevirt_cr():
    kubevirt = {
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"additionalGuestMemoryOverheadRatio": "1.5"}},
    }
    assert total(make_vmi(), kubevirt=kubevirt) == 440402280


def test_passt_binding_adds_250mi_after_the_ratio():
    vmi = make_vmi(devices={"interfaces": [{"name": "default", "passtBinding": {}}]})
    assert total(vmi) == 530 * MI == 555745280
    assert total(vmi, overhead_ratio="1.5") == 440402280 + 250 * MI


@pytest.mark.parametrize(
    ("minors", "two_by_two", "eight_by_eight", "guest_only"),
    [
        (range(0, 5), 254, 314, 254),
        ([5], 264, 324, 264),
        ([6], 280, 340, 280),
        ([7, 8, 9], 280, 340, 276),
    ],
)
def test_section_5_2_baselines_by_release(minors, two_by_two, eight_by_eight, guest_only):
    for minor in minors:
        assert total(make_vmi(2, "2Gi"), minor) == two_by_two * MI
        assert total(make_vmi(8, "8Gi"), minor) == eight_by_eight * MI
        assert total(make_vmi(2, None, guest="2Gi"), minor) == guest_only * MI


@pytest.mark.parametrize(
    ("minor", "virtlogd", "virtqemud", "video"),
    [(0, 20, 35, 16), (4, 20, 35, 16), (5, 25, 40, 16), (6, 25, 40, 32), (9, 25, 40, 32)],
)
def test_constants_per_release(minor, virtlogd, virtqemud, video):
    found = terms(make_vmi(), minor)
    assert found["virtlogd"].bytes == virtlogd * MI
    assert found["virtqemud"].bytes == virtqemud * MI
    assert found["video"].bytes == video * MI


def test_page_tables_round_up_to_kilobytes():
    assert terms(make_vmi(requests="3G"))["pageTables"].bytes == 5859375
    assert terms(make_vmi(requests="4Gi"))["pageTables"].bytes == 8388609


def test_io_thread_term_is_fixed():
    vmi = make_vmi(ioThreadsPolicy="supplementalPool", ioThreads={"supplementalPoolThreadCount": 4})
    assert terms(vmi)["ioThread"].bytes == 8 * MI
    assert total(vmi) == 280 * MI


def test_vcpus_from_resources_when_cpu_is_nil():
    vmi = make_vmi()
    del vmi["spec"]["domain"]["cpu"]
    vmi["spec"]["domain"]["resources"]["limits"] = {"cpu": "1500m"}
    assert terms(vmi)["vcpus"].bytes == 2 * 8 * MI  # 1500m rounds up to 2


def test_all_zero_topology_is_clamped_to_one_vcpu():
    vmi = make_vmi()
    vmi["spec"]["domain"]["cpu"] = {}
    assert terms(vmi)["vcpus"].bytes == 8 * MI


def test_exec_probes_count_10mi_each_plus_100mi():
    vmi = make_vmi()
    vmi["spec"]["livenessProbe"] = {"exec": {"command": ["true"]}}
    vmi["spec"]["readinessProbe"] = {"exec": {"command": ["true"]}}
    assert terms(vmi)["execProbes"].bytes == 120 * MI
    vmi["spec"]["readinessProbe"] = {"guestAgentPing": {}}
    assert terms(vmi)["execProbes"].bytes == 110 * MI


@pytest.mark.parametrize(
    ("devices", "hit"),
    [
        ({"hostDevices": [{"name": "x", "deviceName": "a/b"}]}, True),
        ({"gpus": [{"name": "g", "deviceName": "nvidia/x"}]}, True),
        ({"interfaces": [{"name": "s", "sriov": {}}]}, True),
        ({"interfaces": [{"name": "m", "masquerade": {}}]}, False),
    ],
)
def test_vfio_once(devices, hit):
    assert terms(make_vmi(devices=devices))["vfio"].applied is hit


def test_downward_metrics_volume_counts_but_not_the_device():
    vmi = make_vmi(devices={"downwardMetrics": {}})
    assert not terms(vmi)["downwardMetrics"].applied
    vmi["spec"]["volumes"] = [{"name": "m", "downwardMetrics": {}}]
    assert terms(vmi)["downwardMetrics"].counted == MI


def test_sev_and_snp():
    assert terms(make_vmi(launchSecurity={"sev": {}}))["sev"].counted == 256 * MI
    assert terms(make_vmi(launchSecurity={"snp": {}}))["sev"].counted == 256 * MI
    assert terms(make_vmi(launchSecurity={"snp": {}}), 6)["sev"].counted == 0


def test_tpm_enabled_false_switches_it_off_from_v1_6():
    vmi = make_vmi(devices={"tpm": {"enabled": False}})
    assert terms(vmi)["tpm"].counted == 0
    assert terms(vmi, 5)["tpm"].counted == 53 * MI
    assert terms(make_vmi(devices={"tpm": {"persistent": True}}))["tpm"].counted == 53 * MI


def test_arm64_from_vmi_architecture():
    vmi = make_vmi()
    vmi["spec"]["architecture"] = "arm64"
    assert terms(vmi)["arm64"].counted == 128 * MI
    assert terms(vmi, 1)["arm64"].counted == 0  # v1.0/v1.1 read the controller's arch


def test_dedicated_term_moves_after_the_ratio_before_v1_6():
    vmi = make_vmi(cpu={"sockets": 2, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True})
    assert total(vmi, 0) == 254 * MI  # no such term in v1.0
    assert total(vmi, 5) == 364 * MI
    # v1.9: (380Mi = 398458880) + 398459 kB × 1
    assert total(vmi, 9, overhead_ratio="2") == 398458880 + 398459000
    # v1.5: (264Mi = 276824064) + 276825 kB × 1, then + 100Mi
    assert total(vmi, 5, overhead_ratio="2") == 276824064 + 276825000 + 100 * MI


def test_reserved_overhead_from_v1_8():
    vmi = make_vmi(memory={"reservedOverhead": {"addedOverhead": "1Gi"}})
    assert terms(vmi)["reservedOverhead"].counted == 1024 * MI
    assert terms(vmi, 7)["reservedOverhead"].counted == 0


def test_legacy_passt_800mi_until_v1_2():
    vmi = make_vmi(devices={"interfaces": [{"name": "p", "passt": {}}]})
    assert terms(vmi, 2)["legacyPasst"].counted == 800 * MI
    assert terms(vmi, 3)["legacyPasst"].counted == 0


def test_binding_plugins_counted_once_per_registered_plugin():
    ifaces = [
        {"name": "a", "binding": {"name": "slirp"}},
        {"name": "b", "binding": {"name": "slirp"}},
        {"name": "c", "binding": {"name": "unknown"}},
    ]
    found = terms(make_vmi(devices={"interfaces": ifaces}), binding_plugins=("slirp=100Mi",))
    plugin = found["bindingPlugins"]
    assert plugin.counted == 100 * MI and "not registered: unknown" in plugin.why
    assert (
        terms(make_vmi(devices={"interfaces": ifaces}), 2, binding_plugins=("slirp=1Mi",))[
            "bindingPlugins"
        ].counted
        == 0
    )


@pytest.mark.parametrize(
    ("text", "applies"),
    [("1.5", True), ("2", True), ("", False), (None, False), ("abc", False), ("1,5", False)],
)
def test_ratio_parsing(text, applies):
    ratio, _ = parse_ratio(text, RELEASES[(1, 9)])
    assert (ratio is not None) is applies


def test_every_term_names_its_source_and_condition():
    for term in terms(make_vmi()).values():
        assert term.source and term.condition and term.why


@pytest.mark.parametrize(
    ("version", "key", "flagged"),
    [
        ("v1.9.0", (1, 9), False),
        ("v1.5.3", (1, 5), False),
        ("1.0.1", (1, 0), False),
        ("v0.59.0", (0, 59), False),
        ("v0.52.3", (0, 53), True),
        ("v1.10.0", (1, 9), True),
        (None, (1, 9), True),
        ("latest", (1, 9), True),
    ],
)
def test_version_choice(version, key, flagged):
    choice = choose_release(version, "test")
    assert choice.release.key == key and (choice.note is not None) is flagged


def test_image_tag():
    assert image_tag("quay.io/kubevirt/virt-launcher:v1.9.0") == "v1.9.0"
    assert image_tag("localhost:5000/virt-launcher") is None
    assert image_tag("quay.io/kubevirt/virt-launcher@sha256:abc") is None
