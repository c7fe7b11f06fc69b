#!/usr/bin/env python3
"""The fleet check (issue 18): speed-up from one to two Dask workers, and the overhead per bundle.

    python3 bench/fleet_bench.py                       # 4 clusters x 2 releases, 12 VMs each
    python3 bench/fleet_bench.py --clusters 8 --vms 20 --repeat 3

The fleet is ``tests/test_fleet_sim.write_fleet`` (kvsim: every cluster on v1.8.0 and v1.9.0,
the later with a slower launcher-pod create), written once into ``bench/out/fleet-CxV``. Four
runs of the same tasks (one per bundle), each timed ``--repeat`` times, best and median shown:

1. ``here``: every task in this process, one after the other (``kvtrace check`` without --dask);
2. ``dask 1 worker`` and 3. ``dask 2 workers``: a LocalCluster of worker processes, started
   before the clock (its start-up is timed apart), the tasks submitted and gathered;
4. ``tiny``: the same with one-VM bundles, so the per-bundle cost is mostly the fixed part
   (open, sniff, detect the release, build the result).

Overhead per bundle = (dask 1 worker − here) / bundles: what a task pays for the scheduler,
pickling the task and its result, and a worker process with its own imports. The machine's
``uptime`` is printed before and after, and for each Dask run the CPU seconds the workers used
and the share of their cores they got (CPU / (wall x workers)): on a shared machine a speed-up
below 2 with a share well below 100 % is the load of others, not the check. The
results of the four runs are checked equal, as tests/test_fleet.py checks them.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kvtrace.check.report import Selection  # noqa: E402
from kvtrace.fleet.discover import discover  # noqa: E402
from kvtrace.fleet.on_dask import dask_client  # noqa: E402
from kvtrace.fleet.plan import plan_tasks  # noqa: E402
from kvtrace.fleet.results import TaskResult  # noqa: E402
from kvtrace.fleet.tasks import Task, run_task  # noqa: E402
from tests.test_fleet_sim import write_fleet  # noqa: E402


def fleet_for(clusters: int, vms: int) -> list[Path]:
    out = HERE / "out" / f"fleet-{clusters}x{vms}"
    names = tuple(f"cluster-{i:02d}" for i in range(clusters))
    done = out.with_name(out.name + ".done")  # beside the bundles: a glob of them is the fleet
    if not done.exists():
        write_fleet(out, clusters=names, vms=vms)
        done.write_text("")
    return sorted(p for p in out.iterdir() if p.is_dir())


def timed(run: Callable[[], list[TaskResult]], repeat: int) -> tuple[list[float], list[TaskResult]]:
    walls, results = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        results = run()
        walls.append(time.perf_counter() - start)
    return walls, results


def here(tasks: Sequence[Task]) -> list[TaskResult]:
    return [r for t in tasks for r in run_task(t)]


def on_dask(
    tasks: Sequence[Task], workers: int, repeat: int
) -> tuple[float, list[float], list[TaskResult]]:
    start = time.perf_counter()
    with dask_client(f"local:{workers}") as client:
        client.run(_warm)  # every worker up, with kvtrace imported and its catalogs read
        started = time.perf_counter() - start

        cpu: list[float] = []

        def run() -> list[TaskResult]:
            before = client.run(time.process_time)
            futures = [client.submit(run_task, t, pure=False) for t in tasks]
            results = [r for results in client.gather(futures) for r in results]
            after = client.run(time.process_time)
            cpu.append(sum(after[w] - before[w] for w in after))
            return results

        walls, results = timed(run, repeat)
        spread = sorted(len(keys) for keys in client.has_what().values())
    share = [c / (w * workers) for c, w in zip(cpu, walls, strict=True)]
    print(
        f"dask {workers} worker(s): tasks per worker {spread}; worker CPU per run "
        f"{', '.join(f'{c:.2f}' for c in cpu)} s; share of {workers} core(s) they got: "
        f"{', '.join(f'{s:.0%}' for s in share)}"
    )
    return started, walls, results


def _warm() -> None:
    from kvtrace.timeline.callsites import catalog

    catalog()


def row(name: str, walls: list[float], bundles: int, note: str = "") -> str:
    best, median = min(walls), statistics.median(walls)
    return f"| {name} | {best:.2f} s | {median:.2f} s | {1000 * best / bundles:.0f} ms | {note} |"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def measure(bundles: list[Path], repeat: int, label: str) -> list[str]:
    tasks = plan_tasks(discover([str(p) for p in bundles]), Selection(None))
    lines = [f"\n{label}: {len(tasks)} bundles\n", "| run | best | median | per bundle | note |"]
    lines.append("|---|---|---|---|---|")
    local_walls, local = timed(lambda: here(tasks), repeat)
    lines.append(row("here (one process)", local_walls, len(tasks)))
    speeds = {}
    for workers in (1, 2):
        started, walls, results = on_dask(tasks, workers, repeat)
        assert results == local, "the Dask result differs from the local one"
        speeds[workers] = min(walls)
        lines.append(
            row(f"dask {workers} worker(s)", walls, len(tasks), f"start-up {started:.1f} s")
        )
    overhead = (speeds[1] - min(local_walls)) / len(tasks)
    lines.append(
        f"\nspeed-up 1 → 2 workers: {speeds[1] / speeds[2]:.2f}x; "
        f"overhead per bundle on Dask (1 worker − here): {1000 * overhead:.0f} ms"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--vms", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"uptime before: {uptime()}")
    fleet = fleet_for(args.clusters, args.vms)
    tiny = fleet_for(args.clusters, 1)
    lines = measure(
        fleet, args.repeat, f"fleet {args.clusters} clusters x 2 releases x {args.vms} VMs"
    )
    lines += measure(tiny, args.repeat, f"tiny: {args.clusters} clusters x 2 releases x 1 VM")
    print("\n".join(lines))
    print(f"\nuptime after: {uptime()}")


if __name__ == "__main__":
    main()
