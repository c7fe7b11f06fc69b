"""The latency samples of one VM: how long each of its VMIs took to reach each start-up phase,
and how long each of its migrations ran."""

from __future__ import annotations

from typing import Any

from kvtrace.fleet.results import MigrationSample, PhaseSample
from kvtrace.timeline.migration_rows import MigrationOutcome
from kvtrace.timeline.vmscope import VMScope
from parsers.timestamps import parse_time

# The phases a VMI passes on its way up (phaseTransitionTimestamps; Pending is its creation).
START_PHASES = ("Scheduling", "Scheduled", "Running")


def phase_samples(scope: VMScope) -> tuple[list[PhaseSample], int]:
    """One sample per VMI and phase it reached: seconds from ``metadata.creationTimestamp`` to
    the phase's first transition. Returns the samples and how many stamps were dropped for being
    earlier than the creation (the node's clock behind the API server's)."""
    samples: list[PhaseSample] = []
    dropped = 0
    for vmi in scope.vmis:
        created = parse_time(str(_dict(vmi.body.get("metadata")).get("creationTimestamp") or ""))
        if created is None:
            continue
        status = _dict(vmi.body.get("status"))
        node = str(status.get("nodeName") or "")
        for phase, at in _first_transitions(status).items():
            seconds = (at - created.at).total_seconds()
            if seconds < 0:
                dropped += 1
                continue
            uid = vmi.uid or vmi.name
            samples.append(PhaseSample(scope.namespace, scope.name, uid, node, phase, seconds))
    return samples, dropped


def _first_transitions(status: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for entry in status.get("phaseTransitionTimestamps") or []:
        if not isinstance(entry, dict):
            continue
        phase = entry.get("phase")
        stamp = parse_time(str(entry.get("phaseTransitionTimestamp") or ""))
        if phase in START_PHASES and phase not in found and stamp is not None:
            found[phase] = stamp.at
    return found


def migration_samples(
    namespace: str, name: str, outcomes: list[MigrationOutcome]
) -> list[MigrationSample]:
    return [MigrationSample(namespace, name, m.name, m.outcome, m.seconds) for m in outcomes]


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
