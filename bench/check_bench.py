#!/usr/bin/env python3
"""Benchmark ``kvtrace check`` over every VM of the bench log set against polars.read_ndjson.

Both read the same file: the bench logs with the kubelet prefix cut and only the JSON lines kept
(``bench/out/check.ndjson``, derived once), because polars reads nothing but NDJSON. polars is
only a benchmark reference: ``pip install polars`` in the bench environment, never a kvtrace
dependency.

    python3 bench/generate_log.py --size 1G    # once: bench/out/
    python3 bench/check_bench.py           # best of 3, warm cache
    python3 bench/check_bench.py --repeat 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from run import GNU_TIME, Result, fmt, kvtrace_argv, log_files, run_once, warm

OUT = Path(__file__).resolve().parent / "out"
PREFIX = 31  # `2026-11-23T00:00:01.736844466Z ` — the kubelet --timestamps prefix


def ndjson(out: Path) -> Path:
    """The JSON bodies of every bench log line, one per line (derived once)."""
    target = out / "check.ndjson"
    if target.exists():
        return target
    with open(target, "wb") as sink:
        for path in log_files(out):
            with open(path, "rb") as source:
                for line in source:
                    body = line[PREFIX:]
                    if body.startswith(b"{"):
                        sink.write(body)
    return target


def measure(
    name: str, argv: list[str], repeat: int, env: dict[str, str] | None, ok: tuple[int, ...]
) -> Result:
    result = Result(name, argv)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            wall, code, rss, err = run_once(argv, os.path.join(tmp, "out"), env, ok)
            if code not in ok:
                result.error = f"exit {code}: {err[-300:]}"
                break
            result.walls.append(wall)
            result.rss_kib.append(rss)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kvtrace", help="command to run instead of the installed kvtrace")
    args = parser.parse_args()
    if not log_files(OUT):
        print("no bench data: run python3 bench/generate_log.py first", file=sys.stderr)
        return 1
    data = ndjson(OUT)
    warm([data])
    size = data.stat().st_size / (1 << 20)
    kv, env = kvtrace_argv(args.kvtrace)
    floor = [sys.executable, str(Path(__file__).resolve().parent / "python_floor.py")]
    results = [
        measure(
            "kvtrace check",
            [*kv, "check", "-A", "--log", str(data), "-o", "json"],
            args.repeat,
            env,
            (0, 3),
        ),
        measure("python floor", [*floor, str(data)], args.repeat, None, (0,)),
        measure("python rows", [*floor, "--rows", str(data)], args.repeat, None, (0,)),
        measure(
            "polars",
            [sys.executable, "-c", f"import polars; polars.read_ndjson({str(data)!r})"],
            args.repeat,
            None,
            (0,),
        ),
    ]
    how = "GNU time" if GNU_TIME else "wait4"
    print(f"input: {data} ({size:,.1f} MiB); best of {args.repeat}")
    print(f"peak RSS via {how}: the largest process of the tree (workers included)")
    print(f"{'command':<16}{'best s':>9}{'median s':>10}{'peak RSS MiB':>14}  note")
    for r in results:
        timing = f"{fmt(r.best, '9.2f')}{fmt(r.median, '10.2f')}{fmt(r.peak_mib, '14.1f')}"
        print(f"{r.name:<16}{timing}  {r.error or ''}")
    kvtrace, decoded, lean, polars = results
    print()
    for a, b in ((kvtrace, polars), (decoded, polars), (lean, polars), (kvtrace, lean)):
        if a.best and b.best:
            pair = f"{a.name} / {b.name}"
            print(f"{pair:<32}{a.best / b.best:6.2f}x (wall, best of {args.repeat})")
    if polars.error and "No module named" in polars.error:
        print("polars is missing: pip install polars (bench only)", file=sys.stderr)
    return 0 if not kvtrace.error else 1


if __name__ == "__main__":
    sys.exit(main())
