"""What a controller running in one virt-controller container can reach: the clock, the API
server, its informers, its log and event recorder, and the faults injected into its code."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kvsim.apiserver import ApiServer
from kvsim.events import Recorder
from kvsim.informer import Informers
from kvsim.kernel import Host, Kernel
from kvsim.logs import ContainerLog
from kvsim.releases import SIMULATED

LAUNCHER_IMAGE = "quay.io/kubevirt/virt-launcher:v1.9.0"  # kvsim.launcher.IMAGE


@dataclass
class CodeFaults:
    """Deliberate departures from the v1.9.0 code, each one a bug the model exists to catch."""

    ignore_backoff: bool = False  # start without consulting status.startFailure
    rerun_after_succeeded: bool = False  # RerunOnFailure treats Succeeded like Failed
    create_after_delete: bool = False  # a stop branch does not return before starting
    revision_generation_offset: int = 0  # the VMI names the revision of another generation
    stall_after_start_decision: int = 0  # µs the container stalls right after a start decision
    phase_regression: bool = False  # the VMI controller takes a Running VMI back to Scheduled
    second_launcher_pod: bool = False  # the VMI controller creates a pod though one exists
    second_target_pod: bool = False  # the migration controller creates two target pods at once
    node_change_without_migration: bool = False  # the hand-off also moves status.nodeName
    evacuate_forbidden: bool = False  # evacuation ignores an eviction strategy that forbids it
    target_pod_left: bool = False  # a target pod past its pending timeout is never deleted
    names: list[str] = field(default_factory=list)  # VMs the faults apply to ([] = all)

    def applies(self, name: str) -> bool:
        return not self.names or name in self.names


@dataclass
class Runtime:
    kernel: Kernel
    api: ApiServer
    host: Host
    informers: Informers
    recorder: Recorder
    log: ContainerLog
    rng: random.Random
    faults: CodeFaults = field(default_factory=CodeFaults)
    verbosity: int = 2  # logVerbosity.virtController (2 by default, log.go:85-89)
    release: str = SIMULATED  # whose code the controllers follow where it differs (kvsim.releases)
    launcher_image: str = LAUNCHER_IMAGE  # virt-controller's --launcher-image
    # the VMI controller reports each VMI's launcher image (lifecycle.go:842-858) and the
    # workload updater acts (off: the histories made before kvsim modelled them)
    workload_updates: bool = False
