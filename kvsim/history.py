"""A history: a cluster with everything scheduled on it, and when to capture it."""

from __future__ import annotations

from dataclasses import dataclass

from kvsim import timefmt
from kvsim.cluster import Capture, Cluster

T0 = timefmt.from_iso("2026-12-08T14:00:00Z")


@dataclass(frozen=True)
class History:
    seed: int
    cluster: Cluster
    capture_at: int
    vms: tuple[str, ...]

    def capture(self) -> Capture:
        return self.cluster.capture(self.capture_at)
