"""Bounded concurrency for collection, on daemon threads so Ctrl-C is prompt.

``concurrent.futures`` joins its (non-daemon) workers at interpreter exit, so an interrupted
collection would wait for every in-flight request to time out. Here the caller waits in short
joins (a KeyboardInterrupt lands between them), and on any error or interrupt the workers are
abandoned: they stop at their next request or chunk (``ApiReader.cancelled``) or die with the
process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
_JOIN_STEP = 0.1  # seconds; how often the waiting thread can notice Ctrl-C


def bounded_map(func: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[func(item) for item in items]`` on at most ``workers`` threads; the first error wins."""
    results: dict[int, R] = {}
    errors: list[BaseException] = []
    pending = list(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        while not errors:
            with lock:
                if not pending:
                    return
                index = pending.pop(0)
            try:
                results[index] = func(items[index])
            except BaseException as exc:  # handed to the waiting thread
                errors.append(exc)

    threads = [
        threading.Thread(target=work, name=f"kvtrace-{n}", daemon=True)
        for n in range(min(workers, len(items)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(_JOIN_STEP)
    if errors:
        raise errors[0]
    return [results[i] for i in range(len(items))]
