"""Shared informers of one virt-controller replica: a LIST, then the watch stream, applied to a
local cache that the controllers read, with add/update/delete handlers.

The cache lags the API server by the watch delivery lag (a few ms, more under load, or a lost
event as a fault). Handlers run when an event is applied, as client-go's processor does.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from kvsim.apiserver import ApiServer, Obj, Watch, freeze, thaw
from kvsim.kernel import MS, Host, Process, Signal

# (old, new); None for add / delete. Handlers get the cache's own objects, as client-go's do:
# they read them and never change them.
Handler = Callable[[Obj | None, Obj | None], None]


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
        self._frozen: dict[str, dict[tuple[str, str], bytes]] = {}  # the cache, serialised
        self._sorted: dict[str, list[tuple[str, str]]] = {}  # key order, dropped on add/delete
        for kind in self.kinds:
            self.caches[kind] = {}
            self._frozen[kind] = {}
            self.handlers[kind] = []

    def on(self, kind: str, handler: Handler) -> None:
        self.handlers[kind].append(handler)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        found = self._frozen[kind].get((namespace, name))
        return thaw(found) if found is not None else None

    def list(self, kind: str, match: Callable[[Obj], bool] | None = None) -> list[Obj]:
        """Copies of the cached objects of ``kind`` (those ``match`` accepts), in key order."""
        cache, frozen = self.caches[kind], self._frozen[kind]
        keys = self._sorted.get(kind)
        if keys is None:
            keys = self._sorted[kind] = sorted(cache)
        return [thaw(frozen[key]) for key in keys if match is None or match(cache[key])]

    def start(self) -> Process:
        """LIST every kind, then watch; ``synced`` fires once the caches are filled."""
        yield self.rng.randint(20, 200) * MS
        self.api.watch(
            Watch(
                set(self.kinds),
                self.host,
                self._deliver,
                self._lag,
                0,
                self._dropped,
                self._deliver_frozen,
            )
        )
        for kind in self.kinds:
            for obj in list(self.api.items(kind)):
                frozen = freeze(obj)
                self._apply("ADDED", thaw(frozen), frozen)
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
        self._deliver_frozen(event, obj, freeze(obj))

    def _deliver_frozen(self, event: str, obj: Obj, frozen: bytes) -> None:
        """A frozen container applies its watch events when it thaws, in order."""
        if self.host.frozen_until > self.api.kernel.now:
            self.api.kernel.at(
                self.host.frozen_until, lambda: self._deliver_frozen(event, obj, frozen)
            )
            return
        self._apply(event, obj, frozen)

    def _apply(self, event: str, obj: Obj, frozen: bytes) -> None:
        kind, meta = obj["kind"], obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        cache = self.caches[kind]
        old = cache.get(key)
        if event == "DELETED":
            if old is None:
                return
            del cache[key], self._frozen[kind][key]
            self._sorted.pop(kind, None)
            self._notify(kind, obj, None)  # OnDelete gets the object as the DELETED event has it
            return
        if old is None:
            self._sorted.pop(kind, None)
        cache[key] = obj
        self._frozen[kind][key] = frozen
        self._notify(kind, old, obj)

    def _notify(self, kind: str, old: Obj | None, new: Obj | None) -> None:
        for handler in self.handlers[kind]:
            handler(old, new)
