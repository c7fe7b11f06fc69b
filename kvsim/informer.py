"""Shared informers of one virt-controller replica: a LIST, then the watch stream, applied to a
local cache that the controllers read, with add/update/delete handlers.

The cache lags the API server by the watch delivery lag (a few ms, more under load, or a lost
event as a fault). Handlers run when an event is applied, as client-go's processor does.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from kvsim.apiserver import ApiServer, Obj, Watch, clone
from kvsim.kernel import MS, Host, Process, Signal

Handler = Callable[[Obj | None, Obj | None], None]  # (old, new); None for add / delete


@dataclass
class DropRule:
    """A watch event that never arrives (a fault): matching ``kind``/``name``/event type."""

    kind: str
    name: str
    event: str  # ADDED | MODIFIED | DELETED
    times: int = 1


@dataclass
class Informers:
    """Every informer of one replica, fed by one watch on the API server."""

    api: ApiServer
    host: Host
    seed: str
    kinds: tuple[str, ...] = (
        "VirtualMachine",
        "VirtualMachineInstance",
        "ControllerRevision",
        "Pod",
    )
    caches: dict[str, dict[tuple[str, str], Obj]] = field(default_factory=dict)
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    drops: list[DropRule] = field(default_factory=list)
    extra_lag_us: int = 0
    synced: Signal = field(default_factory=Signal)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"informer/{self.seed}")
        for kind in self.kinds:
            self.caches[kind] = {}
            self.handlers[kind] = []

    def on(self, kind: str, handler: Handler) -> None:
        self.handlers[kind].append(handler)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        found = self.caches[kind].get((namespace, name))
        return clone(found) if found is not None else None

    def list(self, kind: str, match: Callable[[Obj], bool] | None = None) -> list[Obj]:
        """Copies of the cached objects of ``kind`` (those ``match`` accepts), in key order."""
        return [clone(o) for _, o in sorted(self.caches[kind].items()) if match is None or match(o)]

    def start(self) -> Process:
        """LIST every kind, then watch; ``synced`` fires once the caches are filled."""
        yield self.rng.randint(20, 200) * MS
        self.api.watch(
            Watch(set(self.kinds), self.host, self._deliver, self._lag, 0, self._dropped)
        )
        for kind in self.kinds:
            for obj in list(self.api.items(kind)):
                self._apply("ADDED", clone(obj))
        self.synced.fire()

    def _lag(self) -> int:
        return self.rng.randint(300, 6_000) + self.extra_lag_us

    def _dropped(self, event: str, obj: Obj) -> bool:
        for rule in self.drops:
            if (
                rule.times > 0
                and rule.kind == obj["kind"]
                and rule.name == obj["metadata"]["name"]
                and rule.event == event
            ):
                rule.times -= 1
                return True
        return False

    def _deliver(self, event: str, obj: Obj) -> None:
        """A frozen container applies its watch events when it thaws, in order."""
        if self.host.frozen_until > self.api.kernel.now:
            self.api.kernel.at(self.host.frozen_until, lambda: self._deliver(event, obj))
            return
        self._apply(event, obj)

    def _apply(self, event: str, obj: Obj) -> None:
        kind, meta = obj["kind"], obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        cache = self.caches[kind]
        old = cache.get(key)
        if event == "DELETED":
            if old is None:
                return
            del cache[key]
            self._notify(kind, obj, None)  # OnDelete gets the object as the DELETED event has it
            return
        cache[key] = obj
        self._notify(kind, old, obj)

    def _notify(self, kind: str, old: Obj | None, new: Obj | None) -> None:
        for handler in self.handlers[kind]:
            handler(clone(old) if old else None, clone(new) if new else None)
