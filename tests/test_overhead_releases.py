"""v0.53 … v1.0 as first-class releases: each old release's overhead summed by hand from its own
tag, term by term, and asserted to the byte; a v0.53 pod verifies clean; a pod without a version
names the old releases whose formula gives its request.

Positions are at the tag named in each test (``services/`` = ``pkg/virt-controller/services/``).
Common to every release here (read at v0.53.0 … v1.0.0, ``GetMemoryOverhead``): page tables
⌊⌈R/1000⌉×1000/512⌋ bytes of the VMI's (webhook-defaulted) ``requests.memory``; 8Mi per vCPU;
8Mi IO thread; 16Mi video unless ``autoattachGraphicsDevice: false``; 10Mi per exec probe + 100Mi;
256Mi SEV; 53Mi for any ``devices.tpm``; no QoS/dedicated term. A 2Gi request gives page tables of
⌊2147484 kB×1000/512⌋ = 4194304 bytes (4Mi).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kvtrace.overhead.expected import expected_cpu, expected_memory
from kvtrace.overhead.pod import OVERHEAD_ANNOTATION, PodView
from kvtrace.overhead.report import release_from_request, verify_pod
from kvtrace.overhead.settings import SettingFlags, resolve_settings
from kvtrace.overhead.total import overhead_terms
from kvtrace.overhead.versions import (
    ALL_RELEASES,
    PATCHED,
    RELEASES,
    Release,
    choose_release,
    release_at,
)
from kvtrace.overhead.vmi_spec import VmiView
from parsers.manifests import load_manifests
from tests.conftest import SAMPLES
from tests.test_overhead_terms import MI, make_vmi

GI = 1024 * MI
OVERHEAD = SAMPLES / "overhead"


def at(tag: str) -> Release:
    choice = choose_release(tag, "test")
    assert choice.exact, choice.note
    return choice.release


def total(vmi: dict[str, Any], tag: str, **flags: Any) -> int:
    settings = resolve_settings(None, SettingFlags(**flags))
    return overhead_terms(VmiView(vmi), at(tag), settings).total


def request(vmi: dict[str, Any], tag: str, **flags: Any) -> int | None:
    settings = resolve_settings(None, SettingFlags(**flags))
    return expected_memory(VmiView(vmi), settings, total(vmi, tag, **flags), at(tag)).request


def test_v0_53_0_probe_and_tpm():
    # v0.53.0:services/template.go:1852-1941 (GetMemoryOverhead), constants :126-130
    vmi = make_vmi(2, "2Gi", devices={"tpm": {"enabled": False}})
    vmi["spec"]["livenessProbe"] = {"exec": {"command": ["true"]}}
    # page tables 4194304 (:1859-1861)
    # + monitor 25Mi + virt-launcher 75Mi + virtlogd 16Mi + libvirtd 33Mi + qemu 30Mi (:1866-1870)
    # + 2 vCPU × 8Mi (:1874-1896) + IO thread 8Mi (:1899) + video 16Mi (:1902-1904)
    # + exec probe 10Mi + 100Mi (:1926, 1950-1967)
    # + TPM 53Mi: `TPM != nil`, `enabled: false` is not read (:1936-1938)
    expected = 4194304 + (25 + 75 + 16 + 33 + 30 + 16 + 8 + 16 + 110 + 53) * MI
    assert expected == 404750336 == 386 * MI
    assert total(vmi, "v0.53.0") == total(vmi, "v0.53.1") == expected
    assert request(vmi, "v0.53.0") == 2 * GI + expected  # :985-989


def test_v0_53_2_virtlogd_17mi():
    # v0.53.2:services/template.go:128 VirtlogdOverhead 17Mi (backport 822fe6c1aa)
    # 4194304 + (25 + 75 + 17 + 33 + 30 + 16 + 8 + 16)Mi = 4Mi + 220Mi
    assert total(make_vmi(2, "2Gi"), "v0.53.2") == 4194304 + 220 * MI == 234881024


def test_v0_54_0_decimal_request_four_vcpus_no_graphics():
    # v0.54.0:services/template.go:1804 (GetMemoryOverhead), constants :126-130 as v0.53.2
    vmi = make_vmi(4, "3G", devices={"autoattachGraphicsDevice": False})
    # page tables: 3G = 3000000000 bytes = 3000000 kB; ×1000/512 = 5859375 (:1811-1813)
    # + 25 + 75 + 17 + 33 + 30 = 180Mi; + 4 × 8Mi = 32Mi; + 8Mi IO thread; video off: 0
    assert total(vmi, "v0.54.0") == 5859375 + (180 + 32 + 8) * MI == 236546095


def test_v0_55_0_virt_launcher_100mi_and_sev():
    # v0.55.0:services/template.go:125 VirtLauncherOverhead 100Mi (commit 30fa19e0bd);
    # GetMemoryOverhead :1421; SEV 256Mi when launchSecurity.sev (util.IsSEVVMI)
    vmi = make_vmi(2, "2Gi", launchSecurity={"sev": {}})
    # 4Mi + (25 + 100 + 17 + 33 + 30 = 205Mi) + 16Mi + 8Mi + 16Mi + 256Mi = 505Mi
    assert total(vmi, "v0.55.0") == 505 * MI == 529530880
    snp = make_vmi(2, "2Gi", launchSecurity={"snp": {}})
    assert total(snp, "v0.55.0") == 249 * MI  # no SNP before v1.7


def test_v0_56_0_guest_only_with_memory_overcommit():
    # v0.56.0:services/renderresources.go:272 (GetMemoryOverhead); the webhook copies
    # memory.guest ×100/memoryOvercommit into requests.memory (v0.56.0 vmi-mutator.go
    # setDefaultResourceRequests, same as v0.53.0:vmi-mutator.go:319-343)
    vmi = make_vmi(2, None, guest="2Gi")
    # R = 2147483648 × 100 // 150 = 1431655765 bytes → ⌈1431655.765⌉ = 1431656 kB
    # page tables 1431656000 // 512 = 2796203
    # + 205Mi fixed + 16Mi vCPU + 8Mi IO thread + 16Mi video = 245Mi = 256901120
    expected = 2796203 + 245 * MI
    assert total(vmi, "v0.56.0", memory_overcommit=150) == expected == 259697323
    # the pod request is the defaulted request + overhead (v0.56.0:renderresources.go
    # WithMemoryOverhead): 1431655765 + 259697323
    assert request(vmi, "v0.56.0", memory_overcommit=150) == 1691353088


def test_v0_56_0_hugepages_only_request_comes_from_the_page_size():
    # the webhook falls back to the hugepage size when memory.guest is unset
    # (v0.53.0:vmi-mutator.go:324-328): R = 1Gi → page tables 2097152 (1073742 kB ×1000/512)
    vmi = make_vmi(1, None, memory={"hugepages": {"pageSize": "1Gi"}})
    # 2097152 + 205Mi + 8Mi + 8Mi + 16Mi = 2Mi + 237Mi
    assert total(vmi, "v0.56.0") == 239 * MI


def test_v0_57_0_dedicated_has_no_100mi_term():
    # v0.57.0:services/template.go:123-124 virtlogd 18Mi (07989ed68c), libvirtd 35Mi
    # (e67d6266d8); GetMemoryOverhead :272 has no dedicated/QoS term
    cpu = {"sockets": 2, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True}
    resources = {"requests": {"memory": "2Gi"}, "limits": {"memory": "2Gi"}}
    vmi = make_vmi(cpu=cpu, resources=resources)
    # 4Mi + (25 + 100 + 18 + 35 + 30 = 208Mi) + 16Mi + 8Mi + 16Mi = 252Mi
    assert total(vmi, "v0.57.0") == 252 * MI == 264241152


def test_v0_58_0_is_2mi_below_v1_0():
    # v0.58.0:services/template.go:122-123 virtlogd 18Mi, libvirtd 35Mi; v1.0.0:template.go:126-127
    # virtlogd 20Mi, virtqemud 35Mi: the same VMI is 2Mi less in v0.58.0
    vmi = make_vmi(2, "2Gi")
    assert total(vmi, "v0.58.0") == 252 * MI
    assert total(vmi, "v1.0.0") == 254 * MI


def test_v0_58_1_virtlogd_20mi_and_no_ratio():
    # v0.58.1:services/template.go:125 virtlogd 20Mi (backport d57708a842); its GetMemoryOverhead
    # (renderresources.go:272) takes no ratio, so additionalGuestMemoryOverheadRatio is ignored
    # 4Mi + 210Mi + 16Mi + 8Mi + 16Mi = 254Mi
    assert total(make_vmi(2, "2Gi"), "v0.58.1", overhead_ratio="1.5") == 254 * MI


def test_v0_58_2_ratio_backported():
    # v0.58.2:services/renderresources.go:276, 364-374 (ratio, backport 660a496a38), :558-564
    # multiplyMemory: 254Mi = 266338304 bytes → ⌈266338.304⌉ = 266339 kB × 0.5 = 133169.5
    # → trunc 133169 kB → + 133169000 bytes
    assert total(make_vmi(2, "2Gi"), "v0.58.2", overhead_ratio="1.5") == 266338304 + 133169000


def test_v0_59_0_passt_800mi_and_no_ratio():
    # v0.59.0:services/renderresources.go:272 (GetMemoryOverhead): virtqemud replaces libvirtd
    # (7fd94473b9, still 35Mi); +800Mi per passt interface without ports (6fd6e46e9f); no ratio
    vmi = make_vmi(2, "2Gi", devices={"interfaces": [{"name": "default", "passt": {}}]})
    # 254Mi + 800Mi = 1054Mi; the ratio is not read at v0.59.0
    assert total(vmi, "v0.59.0", overhead_ratio="1.5") == 1054 * MI == 1105199104
    ported = make_vmi(2, "2Gi", devices={"interfaces": [{"name": "p", "passt": {}, "ports": [{}]}]})
    assert total(ported, "v0.59.0") == 254 * MI


def test_v0_59_1_passt_before_the_ratio():
    # v0.59.1:services/renderresources.go:275 (backport 708da8f766): passt, then the ratio
    vmi = make_vmi(2, "2Gi", devices={"interfaces": [{"name": "default", "passt": {}}]})
    # 1054Mi = 1105199104 → ⌈1105199.104⌉ = 1105200 kB × 0.5 = 552600 kB → + 552600000
    assert total(vmi, "v0.59.1", overhead_ratio="1.5") == 1105199104 + 552600000


def test_v1_0_0_against_its_tag():
    # v1.0.0:services/renderresources.go:288-397, constants v1.0.0:services/template.go:124-128
    # (25 + 100 + 20 + 35 + 30 = 210Mi); ratio when non-nil (:385-394), an empty string fails
    # ParseFloat and leaves the overhead as is; dedicated adds nothing (no QoS term yet)
    cpu = {"sockets": 2, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True}
    vmi = make_vmi(cpu=cpu)
    assert total(vmi, "v1.0.0", overhead_ratio="") == 254 * MI == 266338304
    assert total(vmi, "v1.0.1") == 254 * MI


@pytest.mark.parametrize(
    ("tag", "fixed"),
    [
        ("v0.53.0", 179),
        ("v0.53.1", 179),
        ("v0.53.2", 180),
        ("v0.54.0", 180),
        ("v0.55.0", 205),
        ("v0.55.2", 205),
        ("v0.56.1", 205),
        ("v0.57.1", 208),
        ("v0.58.0", 208),
        ("v0.58.1", 210),
        ("v0.58.2", 210),
        ("v0.59.2", 210),
        ("v1.0.1", 210),
    ],
)
def test_fixed_sum_at_every_patch_tag(tag, fixed):
    assert at(tag).fixed_mi == fixed


def test_libvirtd_before_v0_59():
    terms = overhead_terms(
        VmiView(make_vmi()), at("v0.58.2"), resolve_settings(None, SettingFlags())
    ).terms
    daemon = next(t for t in terms if t.key == "virtqemud")
    assert daemon.title == "libvirtd" and daemon.source.startswith("v0.58.2:services/")


def test_dedicated_memory_limit_was_the_finished_request_until_v0_55():
    # v0.55.0:services/template.go:603: after the overhead, limits.memory = requests.memory;
    # from v0.56.0 the CPU-pinning option runs first (e821399867) and the overhead is added to
    # both: with overcommitGuestOverhead the two differ
    cpu = {"sockets": 2, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True}
    resources = {
        "requests": {"memory": "2Gi"},
        "limits": {"memory": "2Gi"},
        "overcommitGuestOverhead": True,
    }
    vmi = VmiView(make_vmi(cpu=cpu, resources=resources))
    settings = resolve_settings(None, SettingFlags())
    old = expected_memory(vmi, settings, 249 * MI, at("v0.55.0"))
    new = expected_memory(vmi, settings, 249 * MI, at("v0.56.0"))
    assert old.request == old.limit == 2 * GI
    assert new.request == 2 * GI and new.limit == 2 * GI + 249 * MI


def test_patched_releases_and_keys():
    old = ["v0.53.2+", "v0.58.1", "v0.58.2+", "v0.59.1+"]
    new = ["v1.1.1+", "v1.4.1+", "v1.5.1", "v1.5.2", "v1.5.3+", "v1.6.4+"]
    assert [r.tag for r in PATCHED] == old + new
    assert RELEASES[(0, 53)].tag == "v0.53.0–v0.53.1" and RELEASES[(1, 9)].tag == "v1.9"
    assert release_at(0, 58, 7) is PATCHED[2] and release_at(0, 60, 0) is None
    assert len({r.version for r in ALL_RELEASES}) == len(ALL_RELEASES) == 27


@pytest.mark.parametrize("version", ["v0.53.2", "v0.57.1", "0.59.0", "v1.0.1"])
def test_versions_in_v0_53_to_v1_0_are_exact(version):
    assert choose_release(version, "test").exact


def test_a_minor_line_with_patch_differences_says_so():
    choice = choose_release("v0.58", "test")
    assert choice.release.tag == "v0.58.0" and choice.note and "v0.58.2+" in choice.note


# --- a launcher pod as v0.53.2 renders it, verified end to end --------------------------------


def _load(path: Path) -> dict[str, Any]:
    return load_manifests(path.read_bytes()).objects[0]


def v0_53_pod(image: str = "quay.io/kubevirt/virt-launcher:v0.53.2") -> tuple[dict, dict]:
    """The 2 vCPU / 2Gi sample re-rendered as v0.53.2 does: no guest-console-log (none before
    v1.1), no overhead annotation (none before v1.8), root (v0.53 runs VMIs as root unless the
    NonRoot gate is on: ``v0.53.0:vmi-mutator.go:141-152``), request 2Gi + 224Mi."""
    pod = copy.deepcopy(_load(OVERHEAD / "vm-2cpu-2gi-pod.yaml"))
    vmi = copy.deepcopy(_load(OVERHEAD / "vm-2cpu-2gi-vmi.yaml"))
    del pod["spec"]["initContainers"]
    del pod["metadata"]["annotations"][OVERHEAD_ANNOTATION]
    compute = pod["spec"]["containers"][0]
    compute["image"] = image
    compute["resources"]["requests"]["memory"] = f"{2048 + 224}Mi"
    compute["securityContext"] = {"runAsUser": 0, "privileged": False}
    pod["spec"]["securityContext"] = {"runAsUser": 0}
    vmi["status"] = {"phase": "Running", "runtimeUser": 0}
    return pod, vmi


def test_a_v0_53_pod_is_not_reported_off():
    # 4Mi + (25 + 75 + 17 + 33 + 30)Mi + 16Mi + 8Mi + 16Mi = 224Mi: request 2272Mi
    pod, vmi = v0_53_pod()
    report = verify_pod(pod, vmi, None, SettingFlags())
    assert report.version.exact and report.version.release.tag == "v0.53.2+"
    assert report.overhead is not None and report.overhead.total == 224 * MI
    assert [c.key for c in report.checks if c.ok is False] == []
    assert not report.problems


def test_a_v0_53_pod_against_v1_9_constants_is_56mi_off():
    pod, vmi = v0_53_pod()
    report = verify_pod(pod, vmi, None, SettingFlags(), version_flag="v1.9.0")
    failed = {c.key: c.diff for c in report.checks if c.ok is False}
    assert failed["memoryRequest"] == f"-{56 * MI} bytes (-56Mi)"


def test_root_is_assumed_before_v0_59_without_a_runtime_user():
    pod, vmi = v0_53_pod()
    del vmi["status"]["runtimeUser"]
    report = verify_pod(pod, vmi, None, SettingFlags())
    users = [c for c in report.checks if c.key.startswith("runAsUser")]
    assert all(c.ok for c in users) and "assumed 0" in users[0].note
    gated = verify_pod(pod, vmi, None, SettingFlags(feature_gates=("NonRoot",)))
    assert all(c.ok is False for c in gated.checks if c.key.startswith("runAsUser"))


def test_release_from_request_names_old_releases():
    pod, vmi = v0_53_pod(image="registry/virt-launcher@sha256:" + "ab" * 32)
    settings = resolve_settings(None, SettingFlags())
    unknown = choose_release(None, "no version found")
    found = release_from_request(PodView(pod), VmiView(vmi), settings, unknown)
    assert found.release.tag == "v0.54"
    assert found.note and "the request 2272Mi is what v0.53.2+, v0.54 compute" in found.note
    report = verify_pod(pod, vmi, None, SettingFlags())
    assert report.version.source == "memory request (v0.53.2+, v0.54)"
    assert [c.key for c in report.checks if c.ok is False] == []


def test_release_from_request_spans_v0_58_1_to_v1_4_for_254mi():
    pod, vmi = v0_53_pod(image="registry/virt-launcher@sha256:" + "cd" * 32)
    pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = f"{2048 + 254}Mi"
    report = verify_pod(pod, vmi, None, SettingFlags())
    named = report.version.source.removeprefix("memory request (").removesuffix(")")
    old = ["v0.58.1", "v0.58.2+", "v0.59.0", "v0.59.1+"]
    assert named.split(", ") == [*old, "v1.0", "v1.1.0", "v1.1.1+", "v1.2", "v1.3", "v1.4.0"]


# --- patch releases of v1.x whose overhead differs from their line's .0 ---------------------


def test_v1_4_1_virtqemud_40mi_and_tpm_enabled():
    # v1.4.1:services/template.go:116 VirtqemudOverhead 40Mi (backport d0298b88fe of 10b0d9b181);
    # v1.4.1:services/renderresources.go:388 (GetMemoryOverhead :304) reads tpm.HasDevice, which
    # honours `enabled: false` (v1.4.1:pkg/tpm/tpm.go:5-8, backport c1f5ce7553)
    # 4Mi + (25 + 100 + 20 + 40 + 30 = 215Mi) + 16Mi + 8Mi + 16Mi = 259Mi
    vmi = make_vmi(2, "2Gi", devices={"tpm": {"enabled": False}})
    assert total(vmi, "v1.4.1") == 259 * MI
    assert total(vmi, "v1.4.0") == (254 + 53) * MI  # v1.4.0: 35Mi and `TPM != nil`


def test_v1_5_1_tpm_enabled():
    # v1.5.1:services/renderresources.go:414 tpm.HasDevice (backport c53b1640be)
    vmi = make_vmi(2, "2Gi", devices={"tpm": {"enabled": False}})
    assert total(vmi, "v1.5.0") == (264 + 53) * MI
    assert total(vmi, "v1.5.1") == total(vmi, "v1.5.2") == 264 * MI


def test_v1_5_3_qos_term_before_the_ratio():
    # v1.5.3:services/renderresources.go:410: the 100Mi dedicated/QoS term moved before the
    # ratio (backport fc8038d11d of 22a94a3a4c). Ratio 2:
    # v1.5.3: 264Mi + 100Mi = 381681664 → ⌈381681.664⌉ = 381682 kB × 1 → + 381682000
    # v1.5.2: 264Mi = 276824064 → 276825 kB × 1 → + 276825000, then + 100Mi (104857600)
    cpu = {"sockets": 2, "cores": 1, "threads": 1, "dedicatedCpuPlacement": True}
    vmi = make_vmi(cpu=cpu)
    assert total(vmi, "v1.5.3", overhead_ratio="2") == 381681664 + 381682000
    assert total(vmi, "v1.5.2", overhead_ratio="2") == 276824064 + 276825000 + 104857600


def test_v1_6_4_no_webhook_memory_defaulting():
    # v1.6.4:defaults/defaults.go setDefaultResourceRequests no longer copies memory.guest into
    # requests.memory (cd3ace2991, b0330235ee): page tables 0 for a guest-only VMI, and the
    # renderer takes memory.guest as the base, as v1.7.0 does
    vmi = make_vmi(2, None, guest="2Gi")
    # v1.6.3: R = 2Gi → 4Mi + 220Mi + 16Mi + 8Mi + 32Mi = 280Mi; v1.6.4: 0 + 276Mi
    assert total(vmi, "v1.6.3") == 280 * MI
    assert total(vmi, "v1.6.4") == 276 * MI
    assert request(vmi, "v1.6.4") == 2 * GI + 276 * MI


def test_v1_1_1_emulator_thread_parity():
    # v1.1.1:services/renderresources.go:220-224 (backport 71869375cf): with the annotation and an
    # even CPU limit the isolated emulator thread takes 2 CPUs; v1.1.0 always 1
    cpu = {
        "sockets": 2,
        "cores": 1,
        "threads": 1,
        "dedicatedCpuPlacement": True,
        "isolateEmulatorThread": True,
    }
    vmi = make_vmi(cpu=cpu)
    vmi["metadata"]["annotations"] = {"alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity": ""}
    settings = resolve_settings(None, SettingFlags())
    assert str(expected_cpu(VmiView(vmi), at("v1.1.0"), settings).limit) == "3"
    assert str(expected_cpu(VmiView(vmi), at("v1.1.1"), settings).limit) == "4"


def test_v1_5_2_supplemental_pool_threads_in_the_cpu_request():
    # v1.5.2:services/renderresources.go:114-126 getIOThreadsCount, added to the vCPUs in
    # WithoutDedicatedCPU (backport 155f7145c6; the same functions as v1.6.0): (2 + 2)/10
    vmi = VmiView(make_vmi(2, ioThreads={"supplementalPoolThreadCount": 2}))
    settings = resolve_settings(None, SettingFlags())
    assert str(expected_cpu(vmi, at("v1.5.2"), settings).request) == "400m"
    assert str(expected_cpu(vmi, at("v1.5.1"), settings).request) == "200m"
