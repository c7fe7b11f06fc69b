#!/usr/bin/env python3
"""How long kvtrace takes to start, against the floor any click program has.

Each command runs ``--runs`` times as a fresh process, as a shell runs it; the minimum is the
figure to compare (the least interference from the rest of the machine), the median says how
noisy the machine was. The CPU time (user + system, of the child) is shown too: on a loaded
machine it is the better estimate of what a quiet one would take, since waiting for a core
does not count in it. The references:

- ``python -c pass``: the interpreter and its site packages (a virtualenv's ``.pth`` files,
  an editable install's finder), which every console script pays;
- ``python -c 'import click'``: the least a click CLI can import;
- ``kvtrace --help``: the group's help, which imports no command (``kvtrace.cli.LazyGroup``);
- ``kvtrace timeline --help``: one command's module and the options it declares.

The target (issue 17) is ``kvtrace --help`` under 0.15 s on a quiet machine.

    python3 bench/startup_bench.py            # 20 runs each
    python3 bench/startup_bench.py --runs 50 --importtime   # and the slowest imports of --help
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_SECONDS = 0.15


def console_script(name: str) -> str:
    """The installed console script next to this interpreter (as a user's shell finds it)."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        sys.exit(f"{name}: not installed next to {sys.executable}; pip install -e . first")
    return found


def cases() -> list[tuple[str, list[str]]]:
    kvtrace = console_script("kvtrace")
    return [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("python -c 'import click'", [sys.executable, "-c", "import click"]),
        ("kvtrace --help", [kvtrace, "--help"]),
        ("kvtrace timeline --help", [kvtrace, "timeline", "--help"]),
    ]


def timed(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (user + system of the child) of each run."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(argv, capture_output=True, check=True, env=env)  # warm the page cache once
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env
        )
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def slowest_imports(argv: list[str], count: int = 12) -> list[tuple[int, str]]:
    """The imports of one run with the largest cumulative time (``python -X importtime``)."""
    script = Path(argv[0]).read_text(encoding="utf-8").splitlines()
    python = script[0][2:] if script and script[0].startswith("#!") else sys.executable
    done = subprocess.run(
        [python, "-X", "importtime", argv[0], *argv[1:]], capture_output=True, text=True, check=True
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--importtime", action="store_true", help="also list kvtrace --help's imports"
    )
    options = parser.parse_args(argv)
    print(
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, {options.runs} runs each"
    )
    print(f"{'command':<28}{'min':>9}{'median':>9}{'max':>9}{'cpu min':>10}{'cpu med':>10}")
    walls, cpus = {}, {}
    for name, command in cases():
        wall, cpu = timed(command, options.runs)
        walls[name], cpus[name] = min(wall), statistics.median(cpu)
        print(
            f"{name:<28}{_ms(min(wall))}{_ms(statistics.median(wall))}{_ms(max(wall))}"
            f"{_ms(min(cpu), 10)}{_ms(statistics.median(cpu), 10)}"
        )
    help_, click = "kvtrace --help", "python -c 'import click'"
    for label, figures in (("wall, minimum", walls), ("CPU, median", cpus)):
        verdict = "within" if figures[help_] < TARGET_SECONDS else "over"
        print(
            f"kvtrace --help ({label}): {figures[help_] * 1000:.0f} ms, "
            f"{(figures[help_] - figures[click]) * 1000:.0f} ms above importing click; {verdict} "
            f"the {TARGET_SECONDS:.2f} s target"
        )
    if options.importtime:
        print("\nslowest imports of kvtrace --help (cumulative µs):")
        for micros, module in slowest_imports(cases()[2][1]):
            print(f"{micros:>10}  {module}")
    return 0


def _ms(seconds: float, width: int = 9) -> str:
    return f"{seconds * 1000:>{width - 2}.0f}ms"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
