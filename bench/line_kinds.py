#!/usr/bin/env python3
"""What share of a log's lines the model acts on: each line's message kind, counted.

A fast path that never makes records of the lines no rule reads pays only if such lines are
many. This counts, for the JSON lines of the given logs (any prefix before the object), the
catalog category of each (``kvtrace.timeline.catalog.match`` of its msg and pos), and whether
the model's rules read rows of that category (``kvtrace.model.facts.ACTION_CATEGORIES`` and the
leader lines).

    python3 bench/line_kinds.py /tmp/kvb/g64/logs --limit 200000
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from itertools import islice
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kvtrace.model.facts import ACTION_CATEGORIES
from kvtrace.timeline.catalog import match

READ = ACTION_CATEGORIES | {"leader"}


def kind(line: bytes) -> str:
    at = line.find(b"{")
    if at < 0:
        return "not JSON"
    try:
        obj = orjson.loads(line[at:])
    except orjson.JSONDecodeError:
        return "not JSON"
    if not isinstance(obj, dict) or not isinstance(obj.get("msg"), str):
        return "no msg"
    found = match(obj["msg"], obj.get("pos") if isinstance(obj.get("pos"), str) else None)
    return found[0].category if found else "not in the catalog"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="log files or folders of *.log")
    parser.add_argument("--limit", type=int, default=0, help="lines per file (0: all)")
    args = parser.parse_args()
    files = [f for p in args.paths for f in (sorted(p.rglob("*.log")) if p.is_dir() else [p])]
    kinds: Counter[str] = Counter()
    for path in files:
        with open(path, "rb") as handle:
            lines = islice(handle, args.limit) if args.limit else handle
            kinds.update(kind(line) for line in lines)
    total = sum(kinds.values()) or 1
    print(f"{total:,} lines in {len(files)} files")
    print("| kind | lines | share | rules read it |\n|---|---|---|---|")
    for name, count in kinds.most_common():
        print(f"| {name} | {count:,} | {count / total:.1%} | {'yes' if name in READ else 'no'} |")
    read = sum(n for k, n in kinds.items() if k in READ)
    print(f"\nread by the rules: {read / total:.1%}")


if __name__ == "__main__":
    main()
