#!/usr/bin/env python3
"""Is `kvtrace check -A` linear in the log size and in the number of VMs? Sets of several sizes,
interleaved, one table.

    python3 bench/generate_log.py --size 256M --out /tmp/kvb/g256      # never inside the repo
    python3 bench/generate_log.py --size 1G --out /tmp/kvb/g1g
    python3 bench/growth.py --data /tmp/kvb/g256 /tmp/kvb/g1g --rounds 2
    python3 bench/growth.py --data /tmp/kvb/vms-5000 /tmp/kvb/vms-20000 --bundle

Each round runs ``kvtrace check -A -q -o json`` once on every set, in the given order
(``--bundle``: the bundle, objects and Events too; else the raw logs alone), so a shared
machine loads them alike. For each set: log bytes and lines, VMs, best wall time, the CPU time of
the whole process tree (user + system of the command and every worker it waited for), and the
peak RSS and PSS of the tree (``tree_rss.py``). The last columns divide by the first set: time
and memory over size (or over VMs), 1.0 meaning linear; a memory ratio near 0 meaning flat.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from run import compile_trees, kvtrace_argv, log_files, printed, warm
from suite import uptime
from tree_rss import run_tree


@dataclass
class DataSet:
    path: Path
    mib: float
    lines: int
    vms: int
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    pss: list[int] = field(default_factory=list)
    error: str = ""


def describe(path: Path) -> DataSet:
    files = log_files(path)
    size = sum(f.stat().st_size for f in files)
    return DataSet(path, size / (1 << 20), sum(_lines(f) for f in files), _vms(path))


def _lines(path: Path) -> int:
    count = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 24):
            count += chunk.count(b"\n")
    return count


def _vms(path: Path) -> int:
    """The VMs of the set: its objects' VirtualMachine items, else the README's count."""
    objects = path / "objects" / "virtualmachines.json"
    if objects.is_file():
        return len(json.loads(objects.read_bytes()).get("items", []))
    return 0


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(argv: list[str], env: dict[str, str] | None, data: DataSet, out: str) -> None:
    before = children_cpu()
    run = run_tree(argv, out, env)
    if run.code not in (0, 3):  # 3: findings (the generator injects faults)
        data.error = f"exit {run.code}: {run.stderr.splitlines()[-1:]}"
        return
    if not printed(out):
        data.error = "no output: not a measurement of kvtrace"
        return
    data.walls.append(run.wall)
    data.cpus.append(children_cpu() - before)
    data.rss.append(run.peak_rss_kib)
    data.pss.append(run.peak_pss_kib)


def argv_for(kv: list[str], data: DataSet, bundle: bool) -> list[str]:
    if bundle:
        source = ["--bundle", str(data.path)]
    else:
        source = [a for f in log_files(data.path) for a in ("--log", str(f))]
    return [*kv, "check", "-A", "-q", *source, "-o", "json"]


def table(sets: list[DataSet]) -> list[str]:
    head = [
        "| set | log MiB | lines | VMs | best s | tree CPU s | CPU µs/line | peak tree RSS MiB "
        "| peak tree PSS MiB | time ratio / size ratio | time ratio / VM ratio | RSS ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    base = next((s for s in sets if s.walls), None)
    rows = []
    for s in sets:
        if not s.walls or base is None:
            rows.append(f"| {s.path.name} | {s.mib:,.1f} | {s.lines:,} | {s.vms:,} | {s.error} |")
            continue
        cpu, rss, pss = min(s.cpus), max(s.rss) / 1024, max(s.pss) / 1024
        time_ratio = cpu / min(base.cpus)
        per_size = time_ratio / (s.mib / base.mib)
        per_vm = time_ratio / (s.vms / base.vms) if s.vms and base.vms else float("nan")
        rows.append(
            f"| {s.path.name} | {s.mib:,.1f} | {s.lines:,} | {s.vms:,} | {min(s.walls):,.2f} "
            f"| {cpu:,.1f} | {cpu * 1e6 / max(s.lines, 1):,.1f} | {rss:,.1f} | {pss:,.1f} "
            f"| {per_size:.2f} | {per_vm:.2f} | {rss / (max(base.rss) / 1024):.2f} |"
        )
    return head + rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, nargs="+", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bundle", action="store_true", help="read the bundles, not the logs")
    args = parser.parse_args()
    kv, env = kvtrace_argv(None)
    compile_trees(Path(__file__).resolve().parent.parent)
    sets = [describe(path) for path in args.data]
    print(f"before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="kvtrace-growth-") as tmp:
        for round_no in range(1, args.rounds + 1):
            for data in sets:
                warm(log_files(data.path))
                print(f"  round {round_no}: {data.path}", file=sys.stderr, flush=True)
                run_once(argv_for(kv, data, args.bundle), env, data, os.path.join(tmp, "out"))
    print(f"after:  {uptime()}")
    print("\n".join(table(sets)))
    return 1 if any(s.error for s in sets) else 0


if __name__ == "__main__":
    sys.exit(main())
