#!/usr/bin/env python3
"""The least any Python program can do to check every VM of an NDJSON log: references for
``check_bench.py``.

Both modes read the file in one byte range per core (as ``kvtrace check`` does) and decode every
line with orjson (the fastest JSON decoder on PyPI, written in Rust).

- ``decode`` (the floor): append a ``(timestamp, msg, pos)`` tuple to the line's VM list.
  Nothing else: no timestamp parsed, no message recognised, no rule run, no output.
- ``rows``: the floor plus the least a timeline needs: recognise the message (one regex per
  distinct text, cached), turn the timestamp into seconds (one strptime per distinct second,
  cached), keep one tuple row per line, sort each VM's rows by time and run one trivial rule
  (count the creates). No real rule, no output.

Whatever a real checker adds comes on top, so ``check / polars`` can never be below
``rows / polars``.

    python3 bench/python_floor.py bench/out/check.ndjson
    python3 bench/python_floor.py --rows bench/out/check.ndjson
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from typing import Any

import orjson

KIND = re.compile(
    r"(Stopping VM|Dispatching delete|Starting VM|Started VM|re-?enqueuing|processing|Updating|"
    r"Running with|Reconciling|Failed|Delaying|failed|Patching)"
)


def lines_of(path: str, start: int, end: int) -> Any:
    """The raw lines that start in [start, end)."""
    with open(path, "rb") as handle:
        if start:
            handle.seek(start - 1)
            handle.readline()  # the line that straddles start belongs to the previous range
        at = handle.tell()
        while at < end:
            chunk = handle.readlines(1 << 22)
            if not chunk:
                return
            for line in chunk:
                if at >= end:
                    return
                at += len(line)
                yield line


def decode(path: str, start: int, end: int) -> int:
    loads = orjson.loads
    groups: defaultdict[object, list[tuple[object, ...]]] = defaultdict(list)
    lines = 0
    for line in lines_of(path, start, end):
        record = loads(line)
        key = record.get("name") or record.get("key")
        groups[key].append((record.get("timestamp"), record.get("msg"), record.get("pos")))
        lines += 1
    return lines


def rows(path: str, start: int, end: int) -> int:
    loads = orjson.loads
    groups: defaultdict[object, list[tuple[Any, ...]]] = defaultdict(list)
    kinds: dict[str, str] = {}
    seconds: dict[str, float] = {}
    lines = 0
    for line in lines_of(path, start, end):
        record = loads(line)
        msg = record.get("msg", "")
        kind = kinds.get(msg)
        if kind is None:
            found = KIND.match(msg)
            kind = kinds[msg] = found.group(1) if found else ""
        stamp = record.get("timestamp", "")
        second = seconds.get(stamp[:19])
        if second is None:
            parsed = datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")
            second = seconds[stamp[:19]] = parsed.replace(tzinfo=timezone.utc).timestamp()
        at = second + int(stamp[20:26] or 0) / 1e6
        key = (record.get("namespace"), record.get("name"))
        groups[key].append((at, kind, record.get("uid"), record.get("pos"), lines))
        lines += 1
    for history in groups.values():
        history.sort()
        sum(1 for row in history if row[1] == "Started VM")
    return lines


def main() -> int:
    mode: Callable[[str, int, int], int] = rows if "--rows" in sys.argv else decode
    path = sys.argv[-1]
    size = os.path.getsize(path)
    cores = os.cpu_count() or 1
    bounds = [size * i // cores for i in range(cores + 1)]
    with ProcessPoolExecutor(cores) as pool:
        done = list(pool.map(mode, [path] * cores, bounds[:-1], bounds[1:]))
    print(f"{sum(done)} lines ({mode.__name__}) on {cores} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
