"""Kubernetes Events as client-go's recorder writes them: named ``<involved name>.<hex of the
creation UnixNano>``, second-precision first/last timestamps, identical events folded into one
with ``count`` (record/events_cache.go, record/util/util.go:50-56). The API server forgets an
Event an hour after its last write (kube-apiserver's default ``--event-ttl``)."""

from __future__ import annotations

from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiServer, Obj
from kvsim.kernel import MS

EVENT_TTL_US = 3_600_000_000


def involved(obj: Obj) -> dict[str, Any]:
    meta = obj["metadata"]
    ref = {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
        "uid": meta["uid"],
    }
    return ref


class Recorder:
    """One component's event recorder (``virtualmachine-controller``, ``node-controller``,
    ``virt-controller`` for the Lease, ``kubelet``, ``default-scheduler``)."""

    def __init__(self, api: ApiServer, component: str, host: str = "") -> None:
        self.api, self.component, self.host = api, component, host
        self._seen: dict[tuple[str, str, str, str], str] = {}

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """The recorder sends asynchronously: the Event lands a moment after the call."""
        ref = involved(obj)
        delay = self.api.rng.randint(1, 30) * MS
        self.api.kernel.after(delay, lambda: self._write(ref, type_, reason, message))

    def _write(self, ref: dict[str, Any], type_: str, reason: str, message: str) -> None:
        now = self.api.kernel.now
        identity = (ref["uid"], type_, reason, message)
        existing = self._seen.get(identity)
        if existing and self.api.peek("Event", ref["namespace"], existing):
            self.api.patch("Event", ref["namespace"], existing, lambda e: _count(e, now))
            return
        name = f"{ref['name']}.{now * 1000 + self.api.rng.randint(0, 999):x}"
        self._seen[identity] = name
        source = {"component": self.component, **({"host": self.host} if self.host else {})}
        self.api.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "count": 1,
                "firstTimestamp": timefmt.seconds(now),
                "lastTimestamp": timefmt.seconds(now),
                "involvedObject": ref,
                "message": message,
                "metadata": {"name": name, "namespace": ref["namespace"]},
                "reason": reason,
                "reportingComponent": self.component,
                "reportingInstance": self.host,
                "source": source,
                "type": type_,
            }
        )


def _count(event: Obj, now: int) -> None:
    event["count"] = int(event.get("count", 1)) + 1
    event["lastTimestamp"] = timefmt.seconds(now)
