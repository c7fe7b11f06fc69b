"""What one fleet task sends back: who the bundle is, its findings and its statistics — small,
plain, picklable values, never a timeline or an open evidence."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BundleSource:
    """A bundle as a task reaches it: a local path or an fsspec URL, and, for a directory or
    archive of several bundles, which one (its root inside)."""

    location: str
    member: str = ""

    @property
    def name(self) -> str:
        """How reports name it: the location, with the member when there is one."""
        return f"{self.location}#{self.member}" if self.member else self.location


@dataclass(frozen=True)
class BundleIdentity:
    """Which bundle a finding comes from: where it is, the cluster, when, and which release."""

    bundle: str  # the path or URL as read
    cluster: str
    captured_at: str  # RFC 3339 UTC, "" when the evidence does not say
    release: str  # VersionInfo.shown: the version, else the band of the log lines, else unknown
    release_source: str
    layout: str
    coverage: str


@dataclass(frozen=True)
class Finding:
    """One ✗ violation or ? unverifiable verdict of one VM."""

    namespace: str
    vm: str
    rule: str
    severity: str
    status: str
    why: str
    evidence: tuple[str, ...]
    judged_against: str


@dataclass(frozen=True)
class VMStats:
    namespace: str
    vm: str
    strategy: str
    incarnations: int
    migrations: int
    failed_migrations: int
    violations: int
    unverifiable: int


@dataclass(frozen=True)
class PhaseSample:
    """How long one VMI took from its creation (the API server's clock) to reach ``phase``
    (``status.phaseTransitionTimestamps``, written by the node for Scheduled and Running)."""

    namespace: str
    vm: str
    vmi_uid: str
    node: str
    phase: str
    seconds: float


@dataclass(frozen=True)
class MigrationSample:
    namespace: str
    vm: str
    migration: str
    outcome: str
    seconds: float | None


@dataclass
class TaskResult:
    """The result of one task: a whole bundle, or one partition of its VMs."""

    identity: BundleIdentity
    partition: int = 0
    partitions: int = 1
    findings: list[Finding] = field(default_factory=list)
    vms: list[VMStats] = field(default_factory=list)
    phases: list[PhaseSample] = field(default_factory=list)
    migrations: list[MigrationSample] = field(default_factory=list)
    lines: int = 0  # log lines read (every partition reads them all: counted once per bundle)
    notes: list[str] = field(default_factory=list)
    dropped_samples: int = 0  # phase stamps earlier than the VMI's creation (a node clock behind)
    error: str = ""  # the bundle could not be read: the typed error's message
