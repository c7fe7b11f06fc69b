"""Run a command and sample the memory of its whole process tree (the command and every process
it forks), every 50 ms, from /proc.

Two sums are kept: RSS (what ``ps`` and ``top`` show; pages that forked workers still share
with their parent are counted once per process, so it over-counts) and PSS (each shared page
divided among the processes that map it: the fair share of the machine's memory, from
``/proc/PID/smaps_rollup``). The peak of each sum over the run is reported. Linux only;
standard library only.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

INTERVAL = 0.05


@dataclass
class TreeRun:
    wall: float
    code: int
    peak_rss_kib: int
    peak_pss_kib: int
    peak_processes: int
    peak_one_rss_kib: int  # the largest single process of the tree
    stderr: str


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (via /proc/PID/task/TID/children)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            pending.extend(int(child) for child in children)
    return found


def _kib(path: str, field: str) -> int:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _sample(pid: int) -> tuple[int, int, int, int]:
    pids = descendants(pid)
    each = [_kib(f"/proc/{p}/status", "VmRSS:") for p in pids]
    pss = sum(_kib(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
    return sum(each), pss, len(pids), max(each, default=0)


def run_tree(argv: list[str], stdout_path: str, env: dict[str, str] | None = None) -> TreeRun:
    """Run ``argv`` (stdout to ``stdout_path``), sampling its tree until it exits."""
    peaks = [0, 0, 0, 0]
    with open(stdout_path, "wb") as out:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env)
        done = threading.Event()

        def sampler() -> None:
            while not done.is_set():
                for i, value in enumerate(_sample(child.pid)):
                    peaks[i] = max(peaks[i], value)
                done.wait(INTERVAL)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        _, err = child.communicate()
        wall = time.perf_counter() - started
        done.set()
        thread.join()
    tail = err[-3000:].decode("utf-8", "replace").strip()
    return TreeRun(wall, child.returncode, peaks[0], peaks[1], peaks[2], peaks[3], tail)
