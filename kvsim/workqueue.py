"""client-go's rate-limited work queue, as the VM and VMI controllers use it (vm.go:153-156,
vmi.go:83-86 at v1.9.0; util/workqueue in the vendored client-go v0.34.2).

- ``add``: a key is queued once however often it is added; a key being processed is queued
  again only when its worker calls ``done``, so one key never runs on two workers at once.
- ``add_after``: the key is added after a delay (the earliest pending delay wins).
- ``add_rate_limited``: ``add_after`` the default controller limiter's delay, the larger of a
  per-key exponential ``5 ms × 2^failures`` capped at 1000 s and a queue-wide token bucket of
  10 per second with a burst of 100 (default_rate_limiters.go:50-56, 116-135); ``forget``
  resets the key's failures.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from kvsim.kernel import SECOND, Kernel, Process, Signal

if TYPE_CHECKING:
    from kvsim.informer import Informers
    from kvsim.runtime import Runtime

BASE_DELAY_US = 5_000
MAX_DELAY_US = 1000 * SECOND
BUCKET_RATE_PER_S = 10
BUCKET_BURST = 100


class TokenBucket:
    def __init__(self, now: int) -> None:
        self.tokens = float(BUCKET_BURST)
        self.last = now

    def reserve(self, now: int) -> int:
        """µs to wait for the next token (golang.org/x/time/rate Reserve)."""
        self.tokens = min(
            BUCKET_BURST, self.tokens + (now - self.last) * BUCKET_RATE_PER_S / SECOND
        )
        self.last = now
        self.tokens -= 1
        if self.tokens >= 0:
            return 0
        return int(-self.tokens * SECOND / BUCKET_RATE_PER_S)


class WorkQueue:
    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.queue: deque[str] = deque()
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.failures: dict[str, int] = {}
        self.waiting: dict[str, int] = {}
        self.bucket = TokenBucket(kernel.now)
        self._ready = Signal()
        self.shut = False

    def add(self, key: str) -> None:
        if self.shut or key in self.dirty:
            return
        self.dirty.add(key)
        if key in self.processing:
            return
        self.queue.append(key)
        self._ready.fire()

    def add_after(self, key: str, delay: int) -> None:
        if delay <= 0:
            self.add(key)
            return
        when = self.kernel.now + delay
        if key in self.waiting and self.waiting[key] <= when:
            return
        self.waiting[key] = when
        self.kernel.at(when, lambda: self._due(key, when))

    def _due(self, key: str, when: int) -> None:
        if self.waiting.get(key) == when:
            del self.waiting[key]
            self.add(key)

    def when(self, key: str) -> int:
        failures = self.failures.get(key, 0)
        self.failures[key] = failures + 1
        exponential = int(min(MAX_DELAY_US, BASE_DELAY_US * 2**failures))
        return max(exponential, self.bucket.reserve(self.kernel.now))

    def add_rate_limited(self, key: str) -> None:
        self.add_after(key, self.when(key))

    def forget(self, key: str) -> None:
        self.failures.pop(key, None)

    def get(self) -> Process:
        """Wait for a key and take it (``yield from queue.get()``)."""
        while not self.queue:
            if self._ready.fired:
                self._ready = Signal()
            yield self._ready
        key = self.queue.popleft()
        self.processing.add(key)
        self.dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        self.processing.discard(key)
        if key in self.dirty:
            self.queue.append(key)
            self._ready.fire()

    def shutdown(self) -> None:
        self.shut = True


def serve(queue: WorkQueue, execute: Callable[[str], Process]) -> Process:
    """One worker: take a key, reconcile it, hand it back (processNextWorkItem's loop)."""
    while True:
        key = yield from queue.get()
        yield from execute(key)
        queue.done(key)


def settle(queue: WorkQueue, key: str, err: str | None) -> None:
    """After a reconcile: a failure is retried through the rate limiter, a success forgets
    the key's failures (vm.go:336-355, vmi.go:275-293, disruptionbudget.go:335-351)."""
    if err is None:
        queue.forget(key)
    else:
        queue.add_rate_limited(key)


class PriorityWorkQueue(WorkQueue):
    """controller-runtime's priority queue as the migration controller builds it
    (migration.go:171-174): the same rate limiter, but the highest priority is handed out first
    (first in, first out among equals), and adding a queued key again can only raise its
    priority."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel)
        self.priorities: dict[str, int] = {}
        self.taken: dict[str, int] = {}  # the priority each key in process was handed out with

    def add_priority(self, key: str, priority: int, delay: int = 0) -> None:
        if delay > 0:
            self.kernel.after(delay, lambda: self.add_priority(key, priority))
            return
        self.priorities[key] = max(priority, self.priorities.get(key, priority))
        self.add(key)

    def get(self) -> Process:
        while not self.queue:
            if self._ready.fired:
                self._ready = Signal()
            yield self._ready
        key = max(self.queue, key=lambda k: self.priorities.get(k, 0))
        self.queue.remove(key)
        self.taken[key] = self.priorities.pop(key, 0)
        self.processing.add(key)
        self.dirty.discard(key)
        return key


def start_workers(
    rt: Runtime, cache: Informers, queue: WorkQueue, execute: Callable[[str], Process], threads: int
) -> Process:
    """A controller's Run: wait for its informers to sync, then start its workers."""
    yield rt.informers.synced
    yield cache.synced
    for _ in range(threads):
        rt.kernel.spawn(rt.host, serve(queue, execute))
