"""A fleet check: plan the tasks, run them here or on Dask, merge each bundle's partitions."""

from __future__ import annotations

from collections.abc import Sequence

from kvtrace.check.report import Selection
from kvtrace.fleet.plan import PARTITION_BYTES, merge_partitions, plan_tasks
from kvtrace.fleet.results import BundleSource, TaskResult
from kvtrace.fleet.tasks import Task, run_task


def run_fleet(
    sources: Sequence[BundleSource],
    selection: Selection,
    version_flag: str | None = None,
    dask: str | None = None,
    partition_bytes: int = PARTITION_BYTES,
) -> list[TaskResult]:
    """One result per bundle, in the order given, the same here and on Dask."""
    tasks = plan_tasks(sources, selection, version_flag, partition_bytes)
    return merge_partitions(run_tasks(tasks, dask))


def run_tasks(tasks: Sequence[Task], dask: str | None) -> list[TaskResult]:
    if dask is None:
        return [result for task in tasks for result in run_task(task)]
    from kvtrace.fleet.on_dask import run_on_dask

    return run_on_dask(tasks, dask)
