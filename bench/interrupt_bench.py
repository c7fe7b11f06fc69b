#!/usr/bin/env python3
"""How long ``kvtrace check -A`` takes to stop after Ctrl-C: SIGINT to its whole process group,
as a terminal sends it, a few seconds into the run (the workers busy); then whether any process
of the group is left.

    python3 bench/interrupt_bench.py --data /tmp/kvb/g64
    python3 bench/interrupt_bench.py --data /tmp/kvb/g64 --before /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from run import log_files


def stop_time(argv: list[str], env: dict[str, str], after: float) -> tuple[int | None, float, int]:
    """(exit code, seconds from SIGINT to exit, processes of the group left half a second on)."""
    child = subprocess.Popen(
        argv,
        cwd="/",  # python -m kvtrace must not find a checkout in the working directory
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(after)
    if child.poll() is not None:
        return child.returncode, 0.0, 0
    started = time.perf_counter()
    os.killpg(child.pid, signal.SIGINT)
    child.wait()
    took = time.perf_counter() - started
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-g", str(child.pid)], capture_output=True, text=True)
    return child.returncode, took, len(left.stdout.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a generate_log.py output")
    parser.add_argument("--before", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--after", type=float, nargs="*", default=[8.0, 20.0], help="seconds")
    args = parser.parse_args()
    logs = [a for f in log_files(args.data.resolve()) for a in ("--log", str(f))]
    argv = [sys.executable, "-m", "kvtrace", "check", "-A", *logs, "-o", "json"]
    trees = [("this tree", dict(os.environ))]
    if args.before:
        trees.append((str(args.before), {**os.environ, "PYTHONPATH": str(args.before.resolve())}))
    for name, env in trees:
        for after in args.after:
            code, took, left = stop_time(argv, env, after)
            print(f"{name}: SIGINT after {after:g} s: exit {code} in {took:.2f} s, {left} left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
