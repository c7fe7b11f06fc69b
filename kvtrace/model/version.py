"""Which KubeVirt release wrote the evidence, and whether the model covers it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvtrace.evidence import KUBEVIRT, POD, Evidence
from kvtrace.model.rules import ENCODED_VERSION

_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
LOWEST = (1, 7, 0)  # message texts identical from v1.7.0 (vm.go:85-121, same reconcile code)
HIGHEST_MINOR = (1, 9)


@dataclass(frozen=True)
class VersionInfo:
    version: str | None
    source: str  # where it came from: flag, manifest, KubeVirt CR, image tag, unknown

    @property
    def covered(self) -> bool | None:
        parsed = parse(self.version)
        if parsed is None:
            return None
        return parsed >= LOWEST and parsed[:2] <= HIGHEST_MINOR

    def note(self) -> str | None:
        if self.covered is None:
            return (
                f"KubeVirt version unknown: the model encodes {ENCODED_VERSION} "
                "(messages as of v1.7.0)"
            )
        if not self.covered:
            return (
                f"KubeVirt {self.version} ({self.source}) is outside the model's range "
                "v1.7.0–v1.9.x: verdicts may not apply"
            )
        return None


def parse(version: str | None) -> tuple[int, int, int] | None:
    found = _SEMVER.search(version or "")
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def detect(evidence: Evidence, flag: str | None = None) -> VersionInfo:
    if flag:
        return VersionInfo(flag, "--kubevirt-version")
    for kv in evidence.of_kind(KUBEVIRT):
        observed = (kv.body.get("status") or {}).get("observedKubeVirtVersion")
        if observed:
            return VersionInfo(str(observed), f"KubeVirt {kv.namespace}/{kv.name}")
    if evidence.kubevirt_version:
        return VersionInfo(evidence.kubevirt_version, "bundle manifest")
    return _from_images(evidence)


def _from_images(evidence: Evidence) -> VersionInfo:
    for pod in evidence.of_kind(POD):
        for container in (pod.body.get("spec") or {}).get("containers") or []:
            image = str(container.get("image", "")) if isinstance(container, dict) else ""
            if "virt-controller" in image or "virt-launcher" in image:
                tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
                if parse(tag):
                    return VersionInfo(tag, f"image {image}")
    return VersionInfo(None, "unknown")
