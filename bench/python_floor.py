#!/usr/bin/env python3
"""The least any Python program can do to check every VM of an NDJSON log: a reference for
``check_bench.py``.

It reads the file in one byte range per core (as ``kvtrace check`` does), decodes every line with
orjson (the fastest JSON decoder on PyPI, written in Rust) and appends a
``(timestamp, msg, pos)`` tuple to a per-VM list. Nothing else: no timestamps parsed, no
message recognised, no rule run, no output. Whatever a real checker adds comes on top of this, so
``check / polars`` can never be below ``floor / polars``.

    python3 bench/python_floor.py bench/out/check.ndjson
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

import orjson

Entry = tuple[object, object, object]


def one_range(path: str, start: int, end: int) -> tuple[int, int]:
    """Decode and group the lines that start in [start, end); return (lines, VMs)."""
    loads = orjson.loads
    groups: defaultdict[object, list[Entry]] = defaultdict(list)
    lines = 0
    with open(path, "rb") as handle:
        if start:
            handle.seek(start - 1)
            handle.readline()  # the line that straddles start belongs to the previous range
        at = handle.tell()
        while at < end:
            chunk = handle.readlines(1 << 22)
            if not chunk:
                break
            for line in chunk:
                if at >= end:
                    break
                at += len(line)
                record = loads(line)
                key = record.get("name") or record.get("key")
                groups[key].append((record.get("timestamp"), record.get("msg"), record.get("pos")))
                lines += 1
    return lines, len(groups)


def main() -> int:
    path = sys.argv[1]
    size = os.path.getsize(path)
    cores = os.cpu_count() or 1
    bounds = [size * i // cores for i in range(cores + 1)]
    with ProcessPoolExecutor(cores) as pool:
        done = list(pool.map(one_range, [path] * cores, bounds[:-1], bounds[1:]))
    print(f"{sum(n for n, _ in done)} lines decoded and grouped on {cores} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
