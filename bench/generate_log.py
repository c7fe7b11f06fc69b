#!/usr/bin/env python3
"""Generate benchmark data: a kvtrace bundle of one virt-controller history that kvsim ran.

    python3 bench/generate_log.py --size 256M           # into bench/out/
    python3 bench/generate_log.py --size 64M --vms 1000 --seed 7 --out /tmp/kvbench
    python3 bench/generate_log.py --size 3M --vms 300 --fault-every 50 --faults-file F

The cluster: ``--vms`` VMs ``vm-00000`` … over the namespaces default, team-a, team-b and prod
(``namespace_of(i)``: by ``i % 4``), two virt-controller replicas (virt-operator's default).
Replica A leads from the start and crashes half-way (its container is ``previous.log``; the
restarted one waits for the lease as a standby); replica B, a standby until then, takes the lease
and leads to the end. The VMs' users start, stop and restart them, switch run strategies, edit
templates, delete and re-create them; guests crash, shut down, fail to start, some crash-loop for
hours; the VMI webhook refuses some creates. Everything the controllers do and print is kvsim's
(bench/shards.py says how the cluster is run in shards and merged).

``--size`` is a target for the log bytes: it sets how long the history runs (from how a VM's
log was measured to grow), so the result comes near it, not to the byte; histories shorter than
40 minutes are not made, so a small size with many VMs comes out larger. ``--fault-every N``
injects a fault into about one VM in N (bench/workload.py, RULES_OF_FAULT); ``--faults-file``
lists each faulty VM, one a line: ``ns/name RULE[,RULE…] fault``, with the rules whose verdicts
``kvtrace check`` must make violations.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import time
from pathlib import Path

from shards import SHARD_SIZE, ShardSpec, merge, run_shard, shard_specs
from workload import RULES_OF_FAULT, Timeline, namespace_of, plan_faults, timeline, vm_name

from kvsim.bundle import write_bundle
from kvsim.cluster import Capture

HERE = Path(__file__).resolve().parent
# A VM's log grows as about FIRST_HOUR_BYTES × hours ** GROWTH: busy at first (its creation,
# early crash loops), calmer later, as more VMs end up stopped (measured on 50-VM shards of 6 h
# and 23 h at verbosity 2; verbosity 4 writes about VERBOSE_FACTOR times as much).
FIRST_HOUR_BYTES = 34_400
GROWTH = 0.57
VERBOSE_FACTOR = 2.9


def parse_size(text: str) -> int:
    """``64M``, ``1G``, ``1.5GiB``, ``300000``."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def hours_for(size: int, vms: int, verbosity: int) -> float:
    per_vm = size / vms / (VERBOSE_FACTOR if verbosity >= 4 else 1)
    return float((per_vm / FIRST_HOUR_BYTES) ** (1 / GROWTH))


def run_shards(specs: list[ShardSpec], jobs: int) -> list[Capture]:
    if jobs <= 1:
        return [run_shard(spec) for spec in specs]
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=4) as pool:
        captures = []
        for done, capture in enumerate(pool.imap(run_shard, specs), 1):
            captures.append(capture)
            print(f"  shard {done}/{len(specs)} done", file=sys.stderr, end="\r")
        print(file=sys.stderr)
        return captures


def readme(args: argparse.Namespace, moments: Timeline, shards: int, faults: dict[int, str]) -> str:
    hours = (moments.end - moments.start) / 3600e6
    return (
        "# kvtrace bench data\n\n"
        f"Written by `bench/generate_log.py --size {args.size} --vms {args.vms} "
        f"--seed {args.seed} --fault-every {args.fault_every} --verbosity {args.verbosity}`: "
        f"a {hours:.1f} h history of {args.vms} VMs that kvsim ran as {shards} shards of "
        f"{SHARD_SIZE} VMs (bench/shards.py). See bench/README.md.\n\n"
        f"Injected faults ({len(faults)}; VM, the rules it must violate, fault):\n\n"
        + "".join(f"    {row}" for row in fault_rows(faults))
    )


def fault_rows(faults: dict[int, str]) -> list[str]:
    return sorted(
        f"{namespace_of(i)}/{vm_name(i)} {','.join(RULES_OF_FAULT[f])} {f}\n"
        for i, f in faults.items()
    )


def clear(out: Path) -> None:
    """Remove what an earlier run left (check_bench.py's derived NDJSON included)."""
    for name in ("logs", "objects"):
        shutil.rmtree(out / name, ignore_errors=True)
    for name in ("manifest.json", "README.md", "check.ndjson"):
        (out / name).unlink(missing_ok=True)


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="256M", help="target log bytes, e.g. 64M, 1G")
    parser.add_argument("--vms", type=int, default=5000, help="how many VMs (default 5000)")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--no-objects", action="store_true", help="logs only (no objects/)")
    parser.add_argument(
        "--fault-every", type=int, default=500, help="a fault in ~1 VM in N (0: none)"
    )
    parser.add_argument("--faults-file", type=Path, help="write the faulty VMs and rules here")
    parser.add_argument(
        "--verbosity",
        type=int,
        choices=(2, 4),
        default=2,
        help="logVerbosity.virtController (4 adds the delete-and-create fault)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    return parser.parse_args()


def main() -> int:
    args = options()
    size = parse_size(args.size)
    moments = timeline(hours_for(size, args.vms, args.verbosity))
    faults = plan_faults(args.seed, args.vms, args.fault_every, SHARD_SIZE, args.verbosity)
    specs = shard_specs(args.seed, args.vms, moments, faults, args.verbosity)
    started = time.perf_counter()
    capture = merge(specs, run_shards(specs, args.jobs))
    simulated = time.perf_counter() - started
    if args.no_objects:
        capture.objects = {}
    clear(args.out)
    write_bundle(capture, args.out, readme=readme(args, moments, len(specs), faults))
    if args.faults_file:
        args.faults_file.write_text("".join(fault_rows(faults)), encoding="utf-8")
    wall = time.perf_counter() - started
    lines = sum(len(log.lines) for log, _ in capture.logs)
    written = sum(path.stat().st_size for path in (args.out / "logs").rglob("*.log"))
    print(
        f"{args.out}: {written / (1 << 20):,.1f} MiB of logs, {lines:,} lines, {args.vms} VMs, "
        f"{len(faults)} faults; simulated in {simulated:.1f} s, {wall:.1f} s in all "
        f"({lines / wall:,.0f} lines/s on {args.jobs} processes)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
