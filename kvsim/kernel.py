"""The discrete-event kernel: simulated time in integer microseconds, and processes written as
generators that yield how long to sleep (or a :class:`Signal` to wait for).

A process belongs to a :class:`Host` (a virt-controller container, a node's virt-handler, a
user): freezing a host holds every one of its processes where it is, killing it ends them, as a
SIGSTOP'd or crashed container would.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

US = 1
MS = 1_000
SECOND = 1_000_000

Process = Generator[Any, Any, Any]


@dataclass
class Host:
    """Where processes run. ``frozen_until`` holds them; ``alive`` False ends them."""

    name: str
    frozen_until: int = 0
    alive: bool = True
    generation: int = 0  # bumped on every kill, so stale wake-ups of dead processes are dropped


@dataclass(eq=False, slots=True)
class Signal:
    """A one-shot condition processes can wait on; ``fire`` wakes them all. Compared by
    identity: each is one condition."""

    fired: bool = False
    value: Any = None
    waiters: list[Callable[[Any], None]] = field(default_factory=list)

    def fire(self, value: Any = None) -> None:
        if self.fired:
            return
        self.fired, self.value = True, value
        waiters, self.waiters = self.waiters, []
        for wake in waiters:
            wake(value)


class Kernel:
    """The event heap. Ties are broken by insertion order, so a run is deterministic."""

    def __init__(self, start: int) -> None:
        self.now = start
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = itertools.count()

    def at(self, when: int, action: Callable[[], None]) -> None:
        now = self.now
        heapq.heappush(self._heap, (when if when > now else now, next(self._seq), action))

    def after(self, delay: int, action: Callable[[], None]) -> None:
        self.at(self.now + max(0, delay), action)

    def spawn(self, host: Host, process: Process) -> None:
        """Start ``process`` on ``host`` now."""
        self.after(0, partial(self._step, host, host.generation, process, None))

    def _step(self, host: Host, generation: int, process: Process, value: Any) -> None:
        if not host.alive or host.generation != generation:
            process.close()
            return
        if host.frozen_until > self.now:
            self.at(host.frozen_until, partial(self._step, host, generation, process, value))
            return
        try:
            waited = process.send(value)
        except StopIteration:
            return
        if waited.__class__ is int:  # a sleep, by far the most common wait
            wake = self.now + waited if waited > 0 else self.now
            step: Callable[[], None] = partial(self._step, host, generation, process, None)
            heapq.heappush(self._heap, (wake, next(self._seq), step))
            return
        self._park(host, generation, process, waited)

    def _park(self, host: Host, generation: int, process: Process, waited: Any) -> None:
        if isinstance(waited, Signal):
            if waited.fired:
                self.after(0, partial(self._step, host, generation, process, waited.value))
            else:
                waited.waiters.append(partial(self._wake, host, generation, process))
            return
        self.after(int(waited), partial(self._step, host, generation, process, None))

    def _wake(self, host: Host, generation: int, process: Process, value: Any) -> None:
        step: Callable[[], None] = partial(self._step, host, generation, process, value)
        heapq.heappush(self._heap, (self.now, next(self._seq), step))

    def run(self, until: int) -> None:
        """Run every event up to ``until``; the clock then stands at ``until``."""
        heap, pop = self._heap, heapq.heappop
        while heap and heap[0][0] <= until:
            when, _, action = pop(heap)
            self.now = when
            action()
        self.now = max(self.now, until)


def kill(host: Host) -> None:
    """End every process of ``host`` (a crashed container); the host can be revived."""
    host.generation += 1


def sleep(delay: int) -> Process:
    """``yield from sleep(d)``: the readable form of ``yield d``."""
    yield delay
