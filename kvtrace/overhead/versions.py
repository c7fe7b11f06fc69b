"""Per-release constants of the memory overhead and the launcher pod.

One :class:`Release` per minor v1.0 … v1.9; the values were read in the source at each release's
tag (the commit behind a change is named next to its field). Patch releases inside a minor share
the minor's constants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Release:
    """What changed between v1.0 and v1.9, as seen by the overhead and the pod renderer."""

    minor: int
    virtlogd_mi: int  # 20 → 25 in v1.5 (commit 8db98d1a94)
    virtqemud_mi: int  # 35 → 40 in v1.5 (commit 10b0d9b181)
    video_mi: int  # 16 → 32 in v1.6 (commit 314fd5cfe8)
    request_defaulted_by_webhook: bool  # guest/limit copied into requests.memory before v1.7
    qos_term: str  # "none" (v1.0), "after-ratio" (v1.1–v1.5), "before-ratio" (v1.6+)
    sev_counts_snp: bool  # v1.7+ (commit 31bd088d0d)
    tpm_checks_enabled: bool  # v1.6+: `enabled: false` switches the 53Mi off
    reserved_overhead: bool  # v1.8+ (commit 5a1654fa69)
    legacy_passt_800: bool  # v1.0–v1.2: 800Mi per `passt` interface without ports
    binding_plugins: bool  # v1.3+: computeResourceOverhead memory after the ratio
    passt_binding_250: bool  # v1.8+: core passtBinding 250Mi after the ratio
    ratio_needs_non_empty: bool  # v1.1+: an empty ratio string is ignored silently
    vmi_architecture: bool  # v1.2+: arm64 term reads vmi.spec.architecture first
    annotation: str  # "none" (<v1.8), "alpha" (v1.8, off by default), "beta" (v1.9, on)
    io_threads_in_cpu: bool  # v1.6+: supplementalPoolThreadCount added to CPU
    console_log: str  # "none" (v1.0), "container" (v1.1–v1.5), "init" (v1.6+)

    @property
    def tag(self) -> str:
        return f"v1.{self.minor}"

    @property
    def fixed_mi(self) -> int:
        return 25 + 100 + self.virtlogd_mi + self.virtqemud_mi + 30


def _release(minor: int) -> Release:
    return Release(
        minor=minor,
        virtlogd_mi=25 if minor >= 5 else 20,
        virtqemud_mi=40 if minor >= 5 else 35,
        video_mi=32 if minor >= 6 else 16,
        request_defaulted_by_webhook=minor <= 6,
        qos_term="none" if minor == 0 else ("after-ratio" if minor <= 5 else "before-ratio"),
        sev_counts_snp=minor >= 7,
        tpm_checks_enabled=minor >= 6,
        reserved_overhead=minor >= 8,
        legacy_passt_800=minor <= 2,
        binding_plugins=minor >= 3,
        passt_binding_250=minor >= 8,
        ratio_needs_non_empty=minor >= 1,
        vmi_architecture=minor >= 2,
        annotation="none" if minor < 8 else ("alpha" if minor == 8 else "beta"),
        io_threads_in_cpu=minor >= 6,
        console_log="none" if minor == 0 else ("container" if minor <= 5 else "init"),
    )


RELEASES = {minor: _release(minor) for minor in range(10)}
LOWEST, HIGHEST = RELEASES[0], RELEASES[9]


@dataclass(frozen=True)
class VersionChoice:
    """The release whose constants are used, where the version came from, and any caveat."""

    release: Release
    found: str | None
    source: str
    note: str | None = None

    @property
    def exact(self) -> bool:
        return self.note is None


def choose_release(version: str | None, source: str) -> VersionChoice:
    """Map a version string to a release; unknown or out-of-range versions use the nearest."""
    found = _SEMVER.search(version or "")
    if found is None:
        note = f"KubeVirt version unknown ({source}): using {HIGHEST.tag} constants"
        return VersionChoice(HIGHEST, version, source, note)
    major, minor = int(found[1]), int(found[2])
    if (major, minor) < (1, 0):
        note = f"{version} is older than v1.0: using {LOWEST.tag} constants, may not apply"
        return VersionChoice(LOWEST, version, source, note)
    if (major, minor) > (1, 9):
        note = f"{version} is newer than v1.9: using {HIGHEST.tag} constants, may not apply"
        return VersionChoice(HIGHEST, version, source, note)
    return VersionChoice(RELEASES[minor], version, source)


def image_tag(image: str) -> str | None:
    """The tag of ``registry/name:tag`` (None for digests and untagged images)."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last or ":" not in last:
        return None
    return last.rsplit(":", 1)[-1]
