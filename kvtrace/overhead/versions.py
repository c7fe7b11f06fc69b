"""Per-release constants of the memory overhead and the launcher pod, v0.53.0 … v1.9.x.

One :class:`Release` per minor line, keyed by ``(major, minor)`` in :data:`RELEASES`, plus one
per patch release whose values differ from the line's .0 (:data:`PATCHED`: v0.53.2, v0.58.1,
v0.58.2, v0.59.1, v1.1.1, v1.4.1, v1.5.1, v1.5.2, v1.5.3, v1.6.4). Every value was read in the
source at the tag (``GetMemoryOverhead`` in ``services/template.go`` up to v0.55, in
``services/renderresources.go`` from v0.56.0 to v1.7, ``kvm/hypervisorbackend.go`` from v1.8);
the commit behind a change, found with ``git log -S``, is named next to its field. A patch
release not in :data:`PATCHED` has its line's values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")
Version = tuple[int, int, int]


@dataclass(frozen=True)
class Release:
    """What differs between v0.53 and v1.9, as seen by the overhead and the pod renderer."""

    major: int
    minor: int
    patch: int  # the first patch release these values hold for
    last_patch: int | None  # the last one; None: every later patch of the line
    overhead_at: str  # GetMemoryOverhead at the first tag these values hold for
    virt_launcher_mi: int  # 75 → 100 in v0.55 (commit 30fa19e0bd)
    # virtlogd 16; 17 from v0.53.2 (160343ddc3, backport 822fe6c1aa); 18 in v0.57 (07989ed68c);
    # 20 from v0.58.1 (013be290c6, backport d57708a842); 25 in v1.5 (8db98d1a94)
    virtlogd_mi: int
    # libvirtd 33, 35 in v0.57 (e67d6266d8); virtqemud 40 from v1.4.1 (10b0d9b181, d0298b88fe)
    virtqemud_mi: int
    virtqemud: bool  # v0.59+: virtqemud replaced libvirtd (commit 7fd94473b9)
    video_mi: int  # 16 → 32 in v1.6 (commit 314fd5cfe8)
    # guest/limit copied into requests.memory by the webhook until v1.6.3 (cd3ace2991, v1.6.4)
    request_defaulted_by_webhook: bool
    dedicated_limit_is_request: bool  # v0.53–v0.55: memory limit := the final request
    # "none" (<v1.1), "after-ratio" (v1.1–v1.5.2), "before-ratio" (v1.5.3+, fc8038d11d)
    qos_term: str
    sev_counts_snp: bool  # v1.7+ (commit 31bd088d0d)
    tpm_checks_enabled: bool  # v1.4.1, v1.5.1+: `enabled: false` switches the 53Mi off
    reserved_overhead: bool  # v1.8+ (commit 5a1654fa69)
    legacy_passt_800: bool  # v0.59–v1.2: 800Mi per `passt` interface without ports (6fd6e46e9f)
    binding_plugins: bool  # v1.3+: computeResourceOverhead memory after the ratio
    passt_binding_250: bool  # v1.8+: core passtBinding 250Mi after the ratio
    # additionalGuestMemoryOverheadRatio: from v0.59.1 and in v0.58.2, not v0.59.0 (33f5ddfae7,
    # backports 660a496a38 and 708da8f766)
    ratio: bool
    ratio_needs_non_empty: bool  # v1.1+: an empty ratio string is ignored silently
    vmi_architecture: bool  # v1.2+: arm64 term reads vmi.spec.architecture first
    annotation: str  # "none" (<v1.8), "alpha" (v1.8, off by default), "beta" (v1.9, on)
    io_threads_in_cpu: bool  # v1.5.2+: supplementalPoolThreadCount in the CPU (155f7145c6)
    emulator_parity: bool  # v1.1.1+: EmulatorThreadCompleteToEvenParity may add a 2nd CPU
    console_log: str  # "none" (<v1.1), "container" (v1.1–v1.5), "init" (v1.6+)
    non_root_by_default: bool  # v0.59+: runtimeUser 107 unless Root (097521a4b3); before: gate

    @property
    def key(self) -> tuple[int, int]:
        return self.major, self.minor

    @property
    def version(self) -> Version:
        return self.major, self.minor, self.patch

    @property
    def line(self) -> str:
        return f"v{self.major}.{self.minor}"

    @property
    def tag(self) -> str:
        """``v1.5`` for a whole line, else the patch releases: ``v0.53.0–v0.53.1``, ``v0.58.2+``."""
        whole_line = self.patch == 0 and self.last_patch is None
        if whole_line:
            return self.line
        first = f"{self.line}.{self.patch}"
        if self.last_patch is None:
            return f"{first}+"
        return first if self.last_patch == self.patch else f"{first}–{self.line}.{self.last_patch}"

    @property
    def fixed_mi(self) -> int:
        return 25 + self.virt_launcher_mi + self.virtlogd_mi + self.virtqemud_mi + 30


# GetMemoryOverhead at each first tag; v1.8+ terms cite kvm/hypervisorbackend.go line by line
_OVERHEAD_AT: dict[Version, str] = {
    (0, 53, 0): "v0.53.0:services/template.go:1852",
    (0, 53, 2): "v0.53.2:services/template.go:1852",
    (0, 54, 0): "v0.54.0:services/template.go:1804",
    (0, 55, 0): "v0.55.0:services/template.go:1421",
    (0, 56, 0): "v0.56.0:services/renderresources.go:272",
    (0, 57, 0): "v0.57.0:services/renderresources.go:272",
    (0, 58, 0): "v0.58.0:services/renderresources.go:272",
    (0, 58, 1): "v0.58.1:services/renderresources.go:272",
    (0, 58, 2): "v0.58.2:services/renderresources.go:276",
    (0, 59, 0): "v0.59.0:services/renderresources.go:272",
    (0, 59, 1): "v0.59.1:services/renderresources.go:275",
    (1, 0, 0): "v1.0.0:services/renderresources.go:288",
    (1, 1, 0): "v1.1.0:services/renderresources.go:299",
    (1, 1, 1): "v1.1.1:services/renderresources.go:307",
    (1, 2, 0): "v1.2.0:services/renderresources.go:307",
    (1, 3, 0): "v1.3.0:services/renderresources.go:303",
    (1, 4, 0): "v1.4.0:services/renderresources.go:303",
    (1, 4, 1): "v1.4.1:services/renderresources.go:304",
    (1, 5, 0): "v1.5.0:services/renderresources.go:329",
    (1, 5, 1): "v1.5.1:services/renderresources.go:330",
    (1, 5, 2): "v1.5.2:services/renderresources.go:322",
    (1, 5, 3): "v1.5.3:services/renderresources.go:322",
    (1, 6, 0): "v1.6.0:services/renderresources.go:392",
    (1, 6, 4): "v1.6.4:services/renderresources.go:424",
    (1, 7, 0): "v1.7.0:services/renderresources.go:425",
    (1, 8, 0): "v1.8.0:kvm/hypervisorbackend.go:68",
    (1, 9, 0): "kvm/hypervisorbackend.go:69",
}


def _virtlogd(v: Version) -> int:
    if v >= (1, 5, 0):
        return 25
    if v >= (0, 58, 1):
        return 20
    if v >= (0, 57, 0):
        return 18
    return 17 if v >= (0, 53, 2) else 16


def _virtqemud(v: Version) -> int:
    if v >= (1, 4, 1):
        return 40
    return 35 if v >= (0, 57, 0) else 33


def _staged(v: Version, first: Version, middle: Version, names: tuple[str, str, str]) -> str:
    """``names[0]`` before ``first``, ``names[1]`` until ``middle``, then ``names[2]``."""
    if v < first:
        return names[0]
    return names[1] if v < middle else names[2]


def _release(v: Version, last_patch: int | None) -> Release:
    return Release(
        major=v[0],
        minor=v[1],
        patch=v[2],
        last_patch=last_patch,
        overhead_at=_OVERHEAD_AT[v],
        virt_launcher_mi=100 if v >= (0, 55, 0) else 75,
        virtlogd_mi=_virtlogd(v),
        virtqemud_mi=_virtqemud(v),
        virtqemud=v >= (0, 59, 0),
        video_mi=32 if v >= (1, 6, 0) else 16,
        request_defaulted_by_webhook=v < (1, 6, 4),
        dedicated_limit_is_request=v < (0, 56, 0),
        qos_term=_staged(v, (1, 1, 0), (1, 5, 3), ("none", "after-ratio", "before-ratio")),
        sev_counts_snp=v >= (1, 7, 0),
        tpm_checks_enabled=v >= (1, 5, 1) or (1, 4, 1) <= v < (1, 5, 0),
        reserved_overhead=v >= (1, 8, 0),
        legacy_passt_800=(0, 59, 0) <= v < (1, 3, 0),
        binding_plugins=v >= (1, 3, 0),
        passt_binding_250=v >= (1, 8, 0),
        ratio=v >= (0, 59, 1) or (0, 58, 2) <= v < (0, 59, 0),
        ratio_needs_non_empty=v >= (1, 1, 0),
        vmi_architecture=v >= (1, 2, 0),
        annotation=_staged(v, (1, 8, 0), (1, 9, 0), ("none", "alpha", "beta")),
        io_threads_in_cpu=v >= (1, 5, 2),
        emulator_parity=v >= (1, 1, 1),
        console_log=_staged(v, (1, 1, 0), (1, 6, 0), ("none", "container", "init")),
        non_root_by_default=v >= (0, 59, 0),
    )


def _all_releases() -> tuple[Release, ...]:
    firsts = sorted(_OVERHEAD_AT)
    found = []
    for index, first in enumerate(firsts):
        after = firsts[index + 1] if index + 1 < len(firsts) else None
        same_line = after is not None and after[:2] == first[:2]
        found.append(_release(first, after[2] - 1 if same_line and after else None))
    return tuple(found)


ALL_RELEASES = _all_releases()  # every distinct set of values, oldest first
RELEASES = {r.key: r for r in reversed(ALL_RELEASES)}  # each line's .0 (v0.53 → v0.53.0–.1)
PATCHED = tuple(r for r in ALL_RELEASES if r.patch)
LOWEST, HIGHEST = ALL_RELEASES[0], ALL_RELEASES[-1]


def release_at(major: int, minor: int, patch: int) -> Release | None:
    """The values of ``v<major>.<minor>.<patch>``; None outside the lines kvtrace knows."""
    line = [r for r in ALL_RELEASES if r.key == (major, minor) and r.patch <= patch]
    return line[-1] if line else None


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
    key = (int(found[1]), int(found[2]))
    if key < LOWEST.key:
        note = f"{version} is older than v0.53: using {LOWEST.tag} constants, may not apply"
        return VersionChoice(LOWEST, version, source, note)
    if key > HIGHEST.key:
        note = f"{version} is newer than v1.9: using {HIGHEST.tag} constants, may not apply"
        return VersionChoice(HIGHEST, version, source, note)
    return _in_range(key, found[3], version, source)


def _in_range(
    key: tuple[int, int], patch: str | None, version: str | None, source: str
) -> VersionChoice:
    release = release_at(*key, int(patch or 0))
    if release is None:  # v0.60 … v0.99: no such KubeVirt release
        below = [r for r in ALL_RELEASES if r.key < key][-1]
        note = f"{version}: no such KubeVirt release, using {below.tag} constants"
        return VersionChoice(below, version, source, note)
    later = [r.tag for r in PATCHED if r.key == key]
    if patch is None and later:
        note = f"{version} names no patch: using {release.tag} ({', '.join(later)} differ)"
        return VersionChoice(release, version, source, note)
    return VersionChoice(release, version, source)


def image_tag(image: str) -> str | None:
    """The tag of ``registry/name:tag`` (None for digests and untagged images)."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last or ":" not in last:
        return None
    return last.rsplit(":", 1)[-1]
