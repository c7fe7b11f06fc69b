"""Which KubeVirt release wrote the evidence, and whether the model covers it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvtrace.evidence import KUBEVIRT, POD, Evidence
from kvtrace.model.rules import ENCODED_VERSION
from kvtrace.timeline.callsites import Band, catalog, stream_bands

_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_MINOR = re.compile(r"v?(\d+)\.(\d+)")
LOWEST = (0, 53, 0)  # the oldest release of the call-site catalog (kvtrace.model.releases)
HIGHEST_MINOR = (1, 9)


@dataclass(frozen=True)
class VersionInfo:
    version: str | None
    source: str  # where it came from: flag, manifest, KubeVirt CR, image tag, log lines, unknown
    band: str | None = None  # the releases the log lines' call sites fit, e.g. "v1.7.3–v1.8.4"
    band_releases: tuple[str, ...] = ()
    disagreements: tuple[str, ...] = ()
    pre_v1_lines: int = 0  # 2018-era logfmt lines: KubeVirt before v0.6

    @property
    def covered(self) -> bool | None:
        """Does the model cover the release? False when the release is known to be outside
        v0.53.0–v1.9.x: stated so, or every release the log lines fit is outside; None when
        unknown or the band straddles the edge."""
        band = [p for p in map(parse, self.band_releases) if p]
        if self.pre_v1_lines or (band and not any(_modelled(p) for p in band)):
            return False
        stated = parse(self.version)
        if stated is not None:
            return _modelled(stated)
        if band:
            return True if all(_modelled(p) for p in band) else None
        return None

    @property
    def outside(self) -> str | None:
        """Why verdicts cannot be held to the model, or None when they can."""
        if self.covered is not False:
            return None
        return (
            f"the evidence is KubeVirt {self.shown} ({self.source}), a release the model "
            f"({ENCODED_VERSION}'s code, compared with every release v0.53.0–v1.9.x) does not "
            "cover: this may be that release's own behaviour"
        )

    @property
    def shown(self) -> str:
        """The release as outputs name it: the version, else the band, else unknown."""
        return self.version or self.band or "unknown"

    def notes(self) -> list[str]:
        """What the outputs say of the release: disagreements first, then the model's range."""
        notes = list(self.disagreements)
        if self.covered is None:
            notes.append(
                f"KubeVirt version unknown: verdicts judge against {ENCODED_VERSION}; rules "
                "that changed between releases raise no violation (--kubevirt-version decides)"
            )
        elif not self.covered:
            notes.append(
                f"KubeVirt {self.shown} ({self.source}) is outside the model's range "
                "v0.53.0–v1.9.x: no finding is a violation, each says what it would be"
            )
        return notes


def parse(version: str | None) -> tuple[int, int, int] | None:
    """``v1.9.0`` → (1, 9, 0); a minor line ``v1.7`` → (1, 7, 0)."""
    found = _SEMVER.search(version or "")
    if found:
        return int(found[1]), int(found[2]), int(found[3])
    minor = _MINOR.fullmatch((version or "").strip())
    return (int(minor[1]), int(minor[2]), 0) if minor else None


def _modelled(release: tuple[int, int, int]) -> bool:
    return release >= LOWEST and release[:2] <= HIGHEST_MINOR


def detect(evidence: Evidence, flag: str | None = None) -> VersionInfo:
    """The release from ``--kubevirt-version``, else the KubeVirt CR, the bundle manifest or an
    image tag; each checked against the releases the log lines' call sites fit."""
    band, per_log = _log_band(evidence)
    stated = _stated(evidence, flag)
    if band.pre_v1 and stated.version is None:
        source = f"{band.pre_v1} log line(s) in the 2018 logfmt"
        return VersionInfo("before v0.6", source, pre_v1_lines=band.pre_v1)
    if stated.version is None and band.releases:
        lines = f"call sites of {band.lines} log line(s)"
        return VersionInfo(None, lines, *_band_fields(band), disagreements=per_log)
    fields = _band_fields(band) if band.releases is not None else (None, ())
    conflicts = list(per_log)
    fits = _fits(stated.version, fields[1]) if stated.version and fields[1] else True
    if fits is None:
        conflicts.append(
            f"{stated.source} says {stated.version}, a release the call-site catalog does not "
            f"have; the log lines fit {fields[0]}"
        )
    elif not fits:
        conflicts.append(
            f"{stated.source} says {stated.version}, but the log lines' call sites fit "
            f"{fields[0]} only"
        )
    return VersionInfo(stated.version, stated.source, *fields, disagreements=tuple(conflicts))


def _stated(evidence: Evidence, flag: str | None) -> VersionInfo:
    if flag:
        return VersionInfo(flag, "--kubevirt-version")
    for kv in evidence.of_kind(KUBEVIRT):
        observed = (kv.body.get("status") or {}).get("observedKubeVirtVersion")
        if observed:
            return VersionInfo(str(observed), f"KubeVirt {kv.namespace}/{kv.name}")
    if evidence.kubevirt_version:
        return VersionInfo(evidence.kubevirt_version, "bundle manifest")
    return _from_images(evidence)


def _log_band(evidence: Evidence) -> tuple[Band, tuple[str, ...]]:
    """The band of all logs together; when they fit no common release (an upgrade between
    containers), each log's band, said as a disagreement."""
    bands = stream_bands(evidence.logs)
    total = Band()
    for _, band in bands:
        total.lines += band.lines
        total.unknown += band.unknown
        total.pre_v1 += band.pre_v1
        if band.releases is not None:
            both = band.releases if total.releases is None else total.releases & band.releases
            total.releases = both
    if total.releases is not None and not total.releases:
        spans = [f"{source}: {catalog().span(b.releases or ())}" for source, b in bands]
        return Band(), ("the logs come from different releases (" + "; ".join(spans) + ")",)
    return total, ()


def _band_fields(band: Band) -> tuple[str | None, tuple[str, ...]]:
    known = catalog()
    releases = tuple(r for r in known.releases if r in (band.releases or ()))
    return (known.span(releases) if releases else None), releases


def _fits(version: str, releases: tuple[str, ...]) -> bool | None:
    """Does ``v1.9.0`` (or the minor line ``v1.9``) name a release of the band? None: it names
    no catalogued release at all (a newer one, a downstream version)."""
    named = catalog().named(version)
    return bool(set(named) & set(releases)) if named else None


def _from_images(evidence: Evidence) -> VersionInfo:
    for pod in evidence.of_kind(POD):
        for container in (pod.body.get("spec") or {}).get("containers") or []:
            image = str(container.get("image", "")) if isinstance(container, dict) else ""
            if "virt-controller" in image or "virt-launcher" in image:
                tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
                if parse(tag):
                    return VersionInfo(tag, f"image {image}")
    return VersionInfo(None, "unknown")
