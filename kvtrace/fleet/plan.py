"""The tasks of a fleet check: one per bundle, and one per partition of its VMs for a bundle
larger than ``partition_bytes``; and the merge of a bundle's partitions back into one result."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from kvtrace.check.report import Selection
from kvtrace.fleet.remote import size
from kvtrace.fleet.results import BundleSource, TaskResult
from kvtrace.fleet.tasks import Task

PARTITION_BYTES = 64 << 20  # as kvtrace check splits a large log set (kvtrace.check.run)
MAX_PARTITIONS = 64


def plan_tasks(
    sources: Sequence[BundleSource],
    selection: Selection,
    version_flag: str | None = None,
    partition_bytes: int = PARTITION_BYTES,
) -> list[Task]:
    """Every task, bundle by bundle in the order given. One VM asked for is one task."""
    tasks: list[Task] = []
    for source in sources:
        count = 1 if selection.name else partitions_for(_size(source), partition_bytes)
        tasks.extend(Task(source, selection, version_flag, i, count) for i in range(count))
    return tasks


def _size(source: BundleSource) -> int | None:
    """A directory's member is its own size; an archive counts whole (its bundles share it)."""
    if source.member and Path(source.location).is_dir():
        return size(str(Path(source.location) / source.member))
    return size(source.location)


def partitions_for(bytes_: int | None, partition_bytes: int) -> int:
    if not bytes_ or bytes_ <= partition_bytes:
        return 1
    return min(MAX_PARTITIONS, math.ceil(bytes_ / partition_bytes))


def merge_partitions(results: Sequence[TaskResult]) -> list[TaskResult]:
    """One result per bundle, in task order: a bundle's partitions joined, VMs in key order."""
    merged: dict[str, TaskResult] = {}
    for result in results:
        name = result.identity.bundle
        if name not in merged:
            merged[name] = TaskResult(result.identity, 0, 1, lines=result.lines)
        _join(merged[name], result)
    for result in merged.values():
        _sort(result)
    return list(merged.values())


def _join(into: TaskResult, part: TaskResult) -> None:
    if part.error and not into.error:
        into.error, into.identity = part.error, part.identity
    elif into.error and not part.error:
        into.identity = part.identity  # a partition that read the bundle knows who it is
    into.partitions = max(into.partitions, part.partitions)
    into.findings.extend(part.findings)
    into.vms.extend(part.vms)
    into.phases.extend(part.phases)
    into.migrations.extend(part.migrations)
    into.notes.extend(n for n in part.notes if n not in into.notes)
    into.dropped_samples += part.dropped_samples
    into.lines = max(into.lines, part.lines)  # every partition reads every line


def _sort(result: TaskResult) -> None:
    result.vms.sort(key=lambda v: (v.namespace, v.vm))
    result.findings.sort(key=lambda f: (f.namespace, f.vm))  # stable: a VM's own order kept
    result.phases.sort(key=lambda p: (p.namespace, p.vm))
    result.migrations.sort(key=lambda m: (m.namespace, m.vm))
