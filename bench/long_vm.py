#!/usr/bin/env python3
"""Does the model scale with a VM's history? One VM crash-looping for days, at growing lengths.

kvsim runs one virt-controller and one VM with runStrategy Always whose launcher fails before
the guest runs, incarnation after incarnation: the controller stops the Failed VMI, waits out
the start-failure backoff (10 s × n², at most 300 s: vm.go:132, 1477-1504 at v1.9.0) and starts
it again. The history is captured each time the VM reaches one of the ``--cycles`` restart
counts, and ``kvtrace check default/crashloop --log F … -o json`` is timed on its logs.

    python3 bench/long_vm.py                  # 1,000 / 2,000 / 4,000 / 8,000 restarts
    python3 bench/long_vm.py --cycles 500 16000

It prints seconds per 1,000 lines: a flat figure means the model is linear in the VM's history;
a figure that doubles with the length means some rule is quadratic.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from workload import HOUR, START

from kvsim.bundle import write_bundle
from kvsim.cluster import Cluster
from kvsim.kernel import SECOND
from kvsim.nodes import Fate

VM = "crashloop"
NS = "default"


def crash_loop(cycles: list[int]) -> Iterator[tuple[int, Cluster]]:
    """The cluster each time the VM has been started ``n`` times, for each ``n`` of cycles."""
    cluster = Cluster("long-vm", START, replicas_count=1)
    for index in range(max(cycles) + 1):
        cluster.fates[(VM, index)] = Fate("fail-start")
    cluster.create_vm(START + 30 * SECOND, VM, NS)
    until = START
    for wanted in sorted(cycles):
        while cluster.nodes.incarnations.get(VM, 0) < wanted:
            until += HOUR // 4
            cluster.run(until)
        yield wanted, cluster


def timed_check(kvtrace: list[str], logs: list[Path]) -> float:
    argv = [*kvtrace, "check", f"{NS}/{VM}", *(f"--log={log}" for log in logs), "-o", "json"]
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise SystemExit(done.stderr.decode()[-400:])
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--kvtrace", default="kvtrace", help="command to run (default: kvtrace)")
    args = parser.parse_args()
    print(f"{'restarts':>9}{'lines':>9}{'check s':>9}{'s / 1k lines':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for cycles, cluster in crash_loop(args.cycles):
            root = write_bundle(cluster.capture(), Path(tmp) / f"crashloop-{cycles}")
            logs = sorted(root.glob("logs/**/*.log"))
            lines = sum(len(log.read_bytes().splitlines()) for log in logs)
            wall = timed_check(args.kvtrace.split(), logs)
            print(f"{cycles:>9}{lines:>9}{wall:>9.2f}{wall / lines * 1000:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
