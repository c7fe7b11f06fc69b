"""Run fleet tasks on Dask — the one module that imports dask and distributed.

``local`` starts a LocalCluster of worker processes on this machine (one thread each: the
check is CPU-bound Python), ``local:N`` with N workers; any other address is an existing
scheduler (``tcp://HOST:PORT``, ``tls://…``). Each task is submitted as its own future, so the
scheduler spreads bundles and partitions over the workers; results come back in task order.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kvtrace.errors import ClusterError, UsageError
from kvtrace.fleet.results import TaskResult
from kvtrace.fleet.tasks import Task, run_task

CONNECT_TIMEOUT = "20s"


def run_on_dask(tasks: Sequence[Task], address: str) -> list[TaskResult]:
    with dask_client(address) as client:
        futures = [client.submit(run_task, task, pure=False) for task in tasks]
        per_task: list[list[TaskResult]] = client.gather(futures)
    return [result for results in per_task for result in results]


def local_workers(address: str) -> int | None:
    """N of ``local:N`` (None for ``local``: one per core); raises on a bad N."""
    if address == "local":
        return None
    count = address.removeprefix("local:")
    if not count.isdigit() or int(count) < 1:
        raise UsageError(f"--dask {address}: write local, local:N (N workers) or tcp://HOST:PORT")
    return int(count)


@contextmanager
def dask_client(address: str) -> Iterator[Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(
            "--dask needs dask and distributed: pip install 'kvtrace[fleet]'"
        ) from None
    if address == "local" or address.startswith("local:"):
        count = local_workers(address) or max(1, os.cpu_count() or 1)
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=count,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            yield client
        return
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {address}: {exc}; check the address "
            "(tcp://HOST:PORT) and that this machine can connect to it"
        ) from None
    with client:
        yield client
