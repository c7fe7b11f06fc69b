#!/usr/bin/env python3
"""Every issue-16 figure in one interleaved run: on a shared machine the commands are then
loaded alike, so their ratios hold even when the absolute times do not.

    python3 bench/generate_log.py --size 256M --out /tmp/kvb/g256   # never inside the repo
    python3 bench/suite.py --data /tmp/kvb/g256 --rounds 3
    python3 bench/suite.py --data /tmp/kvb/g256 --only check        # check -A and references

Each round runs every command once, in the same order; the table gives the best and median
wall time and the peak memory of each command's whole process tree (``tree_rss.py``: RSS and
PSS summed over the command and its workers, sampled every 50 ms). The load average (uptime)
is printed before and after. The commands:

- ``kvtrace check -A --log <raw logs>`` (kubelet prefix, klog lines) and ``--log check.ndjson``
  (the JSON bodies alone, derived once next to the data as ``check_bench.py`` does);
- ``polars.read_ndjson(check.ndjson)``, and the Python floor and rows references
  (``python_floor.py``) on the same file;
- ``kvtrace timeline <vm> --log <raw logs>`` against ``grep -F <vm>`` and ``jq`` on the same
  files; ``kvtrace timeline <vm> --bundle`` against ``grep -rF <vm>`` over the bundle.

Needs polars for its reference (``pip install polars``) and jq for its (``apt-get install jq``);
a missing tool is reported in its row and the rest still runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from run import compile_trees, kvtrace_argv, log_files, printed, warm
from tree_rss import run_tree
from workload import namespace_of

HERE = Path(__file__).resolve().parent
PREFIX = 31  # the kubelet --timestamps prefix kvsim writes


@dataclass
class Command:
    name: str
    group: str
    argv: list[str]
    ok: tuple[int, ...] = (0,)
    env: dict[str, str] | None = None
    walls: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    pss: list[int] = field(default_factory=list)
    one: list[int] = field(default_factory=list)
    error: str = ""

    def best(self) -> float | None:
        return min(self.walls) if self.walls else None

    def row(self) -> str:
        if not self.walls:
            return f"| {self.name} | n/a | n/a | n/a | n/a | n/a | {self.error} |"
        median = statistics.median(self.walls)
        rss, pss, one = (max(values) / 1024 for values in (self.rss, self.pss, self.one))
        return (
            f"| {self.name} | {min(self.walls):,.2f} | {median:,.2f} | {rss:,.1f} | {pss:,.1f} "
            f"| {one:,.1f} | {self.error} |"
        )


def ndjson(data: Path) -> Path:
    """The JSON bodies of every log line of the set, one per line (derived once)."""
    target = data / "check.ndjson"
    if not target.exists():
        with open(target, "wb") as sink:
            for path in log_files(data):
                with open(path, "rb") as source:
                    for line in source:
                        if line[PREFIX : PREFIX + 1] == b"{":
                            sink.write(line[PREFIX:])
    return target


def commands(
    data: Path,
    vm: str,
    only: str | None,
    kv: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> list[Command]:
    if kv is None:
        kv, env = kvtrace_argv(None)
    logs = [str(f) for f in log_files(data)]
    flat = ndjson(data)
    as_logs = [a for f in logs for a in ("--log", f)]
    floor = [sys.executable, str(HERE / "python_floor.py")]
    ns, _, vm = vm.rpartition("/")
    ns = ns or namespace_of(int(vm.rsplit("-", 1)[1]))
    check = [
        Command("check -A --log raw", "check", [*kv, "check", "-A", "-q", *as_logs, "-o", "json"]),
        Command("check -A --log ndjson", "check", [*kv, "check", "-A", "-q", "--log", str(flat)]),
        Command("polars.read_ndjson", "check", [sys.executable, "-c", _polars(flat)]),
        Command("python floor", "check", [*floor, str(flat)]),
        Command("python rows", "check", [*floor, "--rows", str(flat)]),
    ]
    for c in check[:2]:
        c.ok, c.env = (0, 3), env
        c.argv += ["-o", "json"] if c.argv[-1] != "json" else []
    flt = f'.[31:] | fromjson? | select(.name=="{vm}" or ((.msg // "")|contains("{vm}")))'
    key = f"{ns}/{vm}"
    bundle = ["grep", "-rF", "--exclude=check.ndjson", vm, str(data)]
    timeline = [
        Command("timeline --log", "timeline", [*kv, "timeline", key, *as_logs, "-o", "json"]),
        Command("grep -F (logs)", "timeline", ["grep", "-F", vm, *logs], (0, 1)),
        Command("jq (logs)", "timeline", ["jq", "-cR", flt, *logs]),
        Command("timeline --bundle", "timeline", [*kv, "timeline", key, "--bundle", str(data)]),
        Command("grep -rF (bundle)", "timeline", bundle, (0, 1)),
    ]
    timeline[0].env = timeline[3].env = env
    timeline[3].argv += ["-o", "json"]
    if shutil.which("jq") is None:
        timeline[2].error = "jq not installed"
    return [c for c in check + timeline if only is None or c.group == only]


def before_commands(data: Path, vm: str, only: str | None, tree: Path) -> list[Command]:
    """The kvtrace commands again, from another checkout (``--before``): ``python -m kvtrace``
    with that tree first on the path (run from outside any checkout), interleaved."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    ours = [c for c in commands(data, vm, only, [sys.executable, "-m", "kvtrace"], env)]
    return [
        Command(f"{c.name} (before)", c.group, c.argv, c.ok, env)
        for c in ours
        if c.name.startswith(("check", "timeline"))
    ]


def _polars(path: Path) -> str:
    return f"import polars; polars.read_ndjson({str(path)!r})"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def run_rounds(todo: list[Command], rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kvtrace-bench-") as tmp:
        home = os.getcwd()
        os.chdir(tmp)  # python -m kvtrace must not find this checkout first on its path
        out = os.path.join(tmp, "out")
        for round_no in range(1, rounds + 1):
            for command in todo:
                if command.error and not command.walls:
                    continue
                print(f"  round {round_no}: {command.name}", file=sys.stderr, flush=True)
                try:
                    run = run_tree(command.argv, out, command.env)
                except OSError as exc:
                    command.error = f"cannot run: {exc}"
                    continue
                if run.code not in command.ok:
                    command.error = f"exit {run.code}: {run.stderr.splitlines()[-1:]}"
                    continue
                if command.name.startswith(("check", "timeline")) and not printed(out):
                    command.error = "no output: not a measurement of kvtrace"
                    continue
                command.walls.append(run.wall)
                command.rss.append(run.peak_rss_kib)
                command.pss.append(run.peak_pss_kib)
                command.one.append(run.peak_one_rss_kib)
        os.chdir(home)


def ratios(todo: list[Command]) -> list[str]:
    by = {c.name: c.best() for c in todo}
    pairs = [
        ("check -A --log raw", "polars.read_ndjson", "≤ 5×"),
        ("check -A --log ndjson", "polars.read_ndjson", "≤ 5×"),
        ("check -A --log ndjson", "python rows", ""),
        ("check -A --log raw", "check -A --log raw (before)", "after / before"),
        ("check -A --log ndjson", "check -A --log ndjson (before)", "after / before"),
        ("timeline --log", "timeline --log (before)", "after / before"),
        ("timeline --log", "grep -F (logs)", "≤ 1.5×"),
        ("timeline --log", "jq (logs)", ""),
        ("timeline --bundle", "grep -rF (bundle)", "≤ 2×"),
    ]
    out = []
    for a, b, goal in pairs:
        if by.get(a) and by.get(b):
            out.append(f"| {a} / {b} | {by[a] / by[b]:.2f}× | {goal} |")  # type: ignore[operator]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="a generate_log.py output")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--vm", default="vm-01234", help="NAME (the generator's namespace) or NS/NAME"
    )
    parser.add_argument("--only", choices=["check", "timeline"], help="one group of commands")
    parser.add_argument("--before", type=Path, help="another checkout: its kvtrace runs too")
    args = parser.parse_args()
    args.data = args.data.resolve()
    if not log_files(args.data):
        print(f"no logs under {args.data}: run bench/generate_log.py --out it", file=sys.stderr)
        return 1
    todo = commands(args.data, args.vm, args.only)
    if args.before:
        todo += before_commands(args.data, args.vm, args.only, args.before.resolve())
    compile_trees(HERE.parent, *([args.before.resolve()] if args.before else []))
    warm([*log_files(args.data), ndjson(args.data)])
    size = sum(f.stat().st_size for f in log_files(args.data)) / (1 << 20)
    before = uptime()
    run_rounds(todo, args.rounds)
    print(f"data: {args.data} ({size:,.1f} MiB of logs); {args.rounds} interleaved round(s)")
    print(f"load before: {before}\nload after:  {uptime()}\n")
    print(
        "| command | best s | median s | peak tree RSS MiB | peak tree PSS MiB "
        "| largest process MiB | note |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(c.row() for c in todo))
    print("\n| ratio (best wall) | value | target |\n|---|---|---|")
    print("\n".join(ratios(todo)))
    return 0 if not any(c.error and not c.walls for c in todo if "check" in c.name) else 1


if __name__ == "__main__":
    sys.exit(main())
