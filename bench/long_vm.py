#!/usr/bin/env python3
"""Does the model scale with a VM's history? One VM crash-looping for days, at growing lengths.

A VM with runStrategy Always whose VMI fails before Running, again and again: each cycle is the
v1.9.0 default-verbosity sequence — ``Starting VM due to runStrategy``
(vm.go:1032), ``Started VM by creating …`` (vm.go:1341), then ``Stopping VM with VMI in phase
Failed …`` (vm.go:1005) with ``Dispatching delete event …`` (vm.go:1685) and a few repeats of
the stop decision while the VMI terminates, then the next start after the 300 s backoff cap
(vm.go:132, 1477-1504).

    python3 bench/long_vm.py                  # 1,000 / 2,000 / 4,000 / 8,000 restarts
    python3 bench/long_vm.py --cycles 500 5000

For each length it times ``kvtrace check default/crashloop --log F -o json`` and prints seconds
per 1,000 lines: a flat figure means the model is linear in the VM's history; a figure that
doubles with the length means some rule is quadratic.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VM = "crashloop"
NS = "default"
VM_UID = "5b0f3c1e-7d2a-4e57-9a64-2f1d8c0b7e31"
START_US = 1_796_083_200_000_000  # 2026-12-01T00:00:00Z in µs


def stamp(us: int) -> str:
    seconds, fraction = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:06d}Z"


def line(us: int, msg: str, pos: str) -> str:
    return (
        f'{{"component":"virt-controller","kind":"","level":"info","msg":"{msg}",'
        f'"name":"{VM}","namespace":"{NS}","pos":"{pos}","timestamp":"{stamp(us)}",'
        f'"uid":"{VM_UID}"}}\n'
    )


def cycle(us: int) -> tuple[list[str], int]:
    """One crash-loop cycle from ``us``; returns its lines and when the next one starts."""
    out = [
        line(us, "Starting VM due to runStrategy: Always", "vm.go:1032"),
        line(
            us + 9_000,
            f"Started VM by creating the new virtual machine instance {VM}",
            "vm.go:1341",
        ),
    ]
    failed = us + 6_000_000
    out.append(
        line(
            failed, "Stopping VM with VMI in phase Failed and VM runStrategy: Always", "vm.go:1005"
        )
    )
    out.append(
        line(
            failed + 17_000,
            f"Dispatching delete event for vmi {NS}/{VM} with phase Failed",
            "vm.go:1685",
        )
    )
    for repeat in range(1, 4):
        out.append(
            line(
                failed + repeat * 400_000,
                "Stopping VM with VMI in phase Failed and VM runStrategy: Always",
                "vm.go:1005",
            )
        )
    return out, failed + 301_000_000


def write_log(path: Path, cycles: int) -> int:
    lines, at = 0, START_US
    with open(path, "w") as sink:
        for _ in range(cycles):
            chunk, at = cycle(at)
            sink.writelines(chunk)
            lines += len(chunk)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--kvtrace", default="kvtrace", help="command to run (default: kvtrace)")
    args = parser.parse_args()
    print(f"{'restarts':>9}{'lines':>9}{'check s':>9}{'s / 1k lines':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for cycles in args.cycles:
            log = Path(tmp) / f"crashloop-{cycles}.log"
            lines = write_log(log, cycles)
            argv = [*args.kvtrace.split(), "check", f"{NS}/{VM}", "--log", str(log), "-o", "json"]
            started = time.perf_counter()
            done = subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
            )
            wall = time.perf_counter() - started
            if done.returncode not in (0, 3):
                print(done.stderr.decode()[-400:], file=sys.stderr)
                return 1
            print(f"{cycles:>9}{lines:>9}{wall:>9.2f}{wall / lines * 1000:>14.3f}")
            os.unlink(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
