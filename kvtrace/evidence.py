"""The evidence types every stage shares: what a source hands on (objects and log streams), and
the closed summary of it that timelines and reports keep once the source is gone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from parsers.records import SourceInfo

# Kinds kvtrace reads (singular Kind names as in the API).
VM = "VirtualMachine"
VMI = "VirtualMachineInstance"
VMIM = "VirtualMachineInstanceMigration"
POD = "Pod"
REVISION = "ControllerRevision"
EVENT = "Event"
LEASE = "Lease"
ENDPOINTS = "Endpoints"
KUBEVIRT = "KubeVirt"
NODE = "Node"
SNAPSHOT = "VirtualMachineSnapshot"
SNAPSHOT_CONTENT = "VirtualMachineSnapshotContent"
RESTORE = "VirtualMachineRestore"
POOL = "VirtualMachinePool"
VMIRS = "VirtualMachineInstanceReplicaSet"


@dataclass
class KubeObject:
    """One Kubernetes object as read (a plain dict), with where it was seen."""

    kind: str
    namespace: str | None
    name: str
    uid: str | None
    resource_version: str | None
    body: dict[str, Any]
    seen_in: list[str] = field(default_factory=list)
    # How certain the identity is: ``no_uid`` (keyed by kind/ns/name/creationTimestamp),
    # ``events_table`` (an Event rebuilt from a text table, times are intervals).
    flags: list[str] = field(default_factory=list)


@dataclass
class LogStream:
    """A log file, archive member or stdin: opened lazily, decompressed transparently."""

    info: SourceInfo
    opener: Callable[[], IO[bytes]]
    prefixed: bool | None = None  # True when lines carry a kubelet --timestamps / CRI prefix
    path: Path | None = None  # a plain, uncompressed file on disk: may be scanned in parallel

    def open(self) -> IO[bytes]:
        return self.opener()


@dataclass
class Evidence:
    """Everything one source yields, before parsing logs.

    ``layout`` is ``kvtrace``, ``must-gather``, ``vm-incident``, ``cluster-info-dump``, ``inspect``,
    ``plain`` or ``logs``; ``coverage`` is ``full`` or ``low``. ``missing`` lists what the layout
    cannot hold or what was not collected, in words a user can act on. ``skipped`` lists files
    that could not be read, each with its reason: nothing is dropped silently.
    """

    layout: str
    coverage: str
    objects: dict[str, list[KubeObject]]
    logs: list[LogStream]
    captured_at: datetime | None = None
    # when the collection began, if it took a while: each object was read somewhere between
    # ``capture_started`` and ``captured_at`` (a must-gather runs for minutes)
    capture_started: datetime | None = None
    kubevirt_version: str | None = None
    manifest: dict[str, Any] | None = None
    missing: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    origin: str = ""
    # Derived lookups (e.g. the VM-scope index), built on first use; not part of the evidence.
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def read_from(self) -> datetime | None:
        """The earliest moment an object of the evidence may have been read."""
        return self.capture_started or self.captured_at

    def of_kind(self, kind: str) -> list[KubeObject]:
        return self.objects.get(kind, [])

    def summary(self) -> EvidenceSummary:
        return EvidenceSummary(
            layout=self.layout,
            coverage=self.coverage,
            origin=self.origin,
            captured_at=self.captured_at,
            capture_started=self.capture_started,
            has_logs=bool(self.logs),
            missing=tuple(self.missing),
            skipped=tuple(self.skipped),
        )


@dataclass(frozen=True)
class EvidenceSummary:
    """What a timeline or report says about its evidence: no streams, no temp space, so it stays
    valid (and picklable) after the evidence is closed."""

    layout: str
    coverage: str
    origin: str
    captured_at: datetime | None
    has_logs: bool
    missing: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    capture_started: datetime | None = None  # see Evidence.capture_started

    @property
    def read_from(self) -> datetime | None:
        """The earliest moment an object of the evidence may have been read."""
        return self.capture_started or self.captured_at
