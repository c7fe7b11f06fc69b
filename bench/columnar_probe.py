#!/usr/bin/env python3
"""Which library should read the common line? The measurement behind parsers/fastline.py.

The model reads rows: every rule walks a VM's rows in order, by index, by source and by
reconcile (kvtrace/model/facts.py), so whatever decodes a line must end in one Python value per
line the model sees. Four ways to get there from an NDJSON file, each on one core, interleaved:

- ``orjson``: ``orjson.loads`` per line (what FastLogParser does), the dict as the row;
- ``polars rows``: the lines read as one string column per 64 MiB chunk, decoded by
  ``str.json_decode`` inside polars, then handed to Python as tuples (``iter_rows``);
- ``polars columns``: the same decode, left in columns (no Python value per line);
- ``read_ndjson``: ``polars.read_ndjson`` of the whole file (the check bench's reference).

    python3 bench/columnar_probe.py /tmp/kvb/g64/check.ndjson --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

CHUNK = 64 << 20


def chunks(path: str) -> Iterator[list[bytes]]:
    with open(path, "rb") as handle:
        while lines := handle.readlines(CHUNK):
            yield lines


def with_orjson(path: str) -> int:
    count = 0
    for lines in chunks(path):
        rows = [orjson.loads(line) for line in lines]
        count += len(rows)
    return count


def _decoded(lines: list[bytes]) -> Any:
    import polars

    column = polars.Series("line", [line.decode() for line in lines], dtype=polars.String)
    return column.str.json_decode(infer_schema_length=None).struct.unnest()


def polars_rows(path: str) -> int:
    count = 0
    for lines in chunks(path):
        frame = _decoded(lines)
        count += sum(1 for _ in frame.iter_rows())
    return count


def polars_columns(path: str) -> int:
    count = 0
    for lines in chunks(path):
        count += len(_decoded(lines))
    return count


def read_ndjson(path: str) -> int:
    import polars

    return len(polars.read_ndjson(path))


WAYS: dict[str, Callable[[str], int]] = {
    "orjson": with_orjson,
    "polars rows": polars_rows,
    "polars columns": polars_columns,
    "read_ndjson": read_ndjson,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(args.rounds):
        for name, way in WAYS.items():
            started = time.process_time()
            lines = way(args.path)
            walls[name].append(time.process_time() - started)
    print(f"{args.path}: {lines:,} lines; CPU s, best and median of {args.rounds} (interleaved)")
    for name, values in walls.items():
        print(f"  {name:<16}{min(values):8.2f}{statistics.median(values):8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
