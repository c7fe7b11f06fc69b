#!/usr/bin/env python3
"""How the objects of a bundle cost as the VMs grow: ``timeline --bundle`` of one VM (and,
with ``--check``, ``check -A --bundle``) on kvsim sets of 5,000 and 20,000 VMs, against
``grep -F`` for the VM name over the same bundle (objects and logs), in one run.

    python3 bench/objects_bench.py                  # generates bench/out/vms-N once, if absent
    python3 bench/objects_bench.py --vms 5000 --repeat 5 --check
    python3 bench/objects_bench.py --kvtrace "env PYTHONPATH=/tmp/old python -m kvtrace"

Each set is ``generate_log.py --size 1M --vms N`` (the shortest history, 40 min: the cost here
is the objects, not the logs) into ``bench/out/vms-N``. Issue 16: the objects grew faster than
the VMs (``find_vm`` scanned every VM for each VM; ``timeline`` decoded every VM's objects).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from run import GNU_TIME, Result, compile_trees, fmt, kvtrace_argv, run_once, warm
from workload import namespace_of

HERE = Path(__file__).resolve().parent


def bundle_for(vms: int) -> Path:
    """``bench/out/vms-N``, generated the first time (5,000 VMs: about 2 min on 2 cores)."""
    out = HERE / "out" / f"vms-{vms}"
    if not (out / "manifest.json").is_file():
        argv = [sys.executable, str(HERE / "generate_log.py"), "--size", "1M", "--vms", str(vms)]
        subprocess.run([*argv, "--out", str(out)], check=True)
    return out


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".log"))


def measure(result: Result, repeat: int, env: dict[str, str] | None, ok: tuple[int, ...]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            wall, code, rss, err = run_once(result.argv, os.path.join(tmp, "out"), env, ok)
            if code not in ok:
                result.error = f"exit {code}: {err.splitlines()[-1] if err else ''}"
                return
            result.walls.append(wall)
            result.rss_kib.append(rss)


def bench_set(vms: int, args: argparse.Namespace) -> list[Result]:
    root = bundle_for(vms)
    files = files_of(root)
    index = vms * 1234 // 5000  # the same place in every set
    vm = f"vm-{index:05d}"
    kv, env = kvtrace_argv(args.kvtrace)
    results = [
        Result("timeline", [*kv, "timeline", f"{namespace_of(index)}/{vm}", "--bundle", str(root)]),
        Result("grep -F", ["grep", "-rF", vm, str(root / "objects"), str(root / "logs")]),
    ]
    results[0].argv += ["-o", "json"]
    if args.check:
        check = [*kv, "check", "-A", "--bundle", str(root), "-o", "json"]
        results.append(Result("check -A", check))
    size = sum(f.stat().st_size for f in files) / (1 << 20)
    print(f"{vms} VMs: {size:,.0f} MiB in {root} (VM {namespace_of(index)}/{vm})", file=sys.stderr)
    compile_trees(Path(__file__).resolve().parent.parent)
    warm(files)
    for result in results:
        print(f"  running {shlex.join(result.argv[:5])} …", file=sys.stderr)
        repeat = 1 if result.name == "check -A" else args.repeat
        measure(result, repeat, None if result.name == "grep -F" else env, (0, 1, 3))
    return results


def report(by_set: dict[int, list[Result]], repeat: int) -> None:
    how = "GNU time -f %M" if GNU_TIME else "os.wait4 ru_maxrss"
    print(f"best of {repeat} (check -A: 1 run), warm cache; peak RSS via {how}")
    print(f"{'VMs':>6} {'command':<10} {'best s':>8} {'median s':>9} {'peak MiB':>9} {'/ grep':>7}")
    for vms, results in by_set.items():
        grep = next(r for r in results if r.name == "grep -F")
        for r in results:
            ratio = r.best / grep.best if r.best and grep.best else None
            note = f"  {r.error}" if r.error else ""
            print(
                f"{vms:>6} {r.name:<10} {fmt(r.best, '8.2f')} {fmt(r.median, '9.2f')} "
                f"{fmt(r.peak_mib, '9.1f')} {fmt(ratio, '6.2f')}x{note}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vms", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="also check -A --bundle (slow)")
    parser.add_argument("--kvtrace", help="kvtrace command line (default: as bench/run.py)")
    args = parser.parse_args()
    by_set = {vms: bench_set(vms, args) for vms in args.vms}
    report(by_set, args.repeat)
    return 0 if all(r.error is None for rs in by_set.values() for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())
