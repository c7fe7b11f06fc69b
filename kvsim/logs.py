"""virt-controller's stderr, line by line, as v1.9.0 prints it, with the kubelet's prefix.

Three writers share the stream (log.go, go-kit's json_logger.go and stdlib.go, client-go's
klog at v1.9.0):

- the KubeVirt logger: one JSON object per line, keys sorted (go-kit puts the key/values in a
  Go map), compact, HTML escaping off; ``timestamp`` with 6 fraction digits; ``pos`` the call
  site's file basename and line; ``Object(obj)`` adds ``namespace`` (if any), ``name``,
  ``kind`` (usually "" for informer-delivered objects) and ``uid``; ``Reason(err)`` adds
  ``reason``;
- Go's standard ``log`` through go-kit's adapter: JSON with ``pos`` ``stdlib.go:105``, level
  ``info`` and a ``ts`` in the stdlib format;
- klog (client-go leader election): ``Lmmdd hh:mm:ss.uuuuuu    PID file:line] msg``.

Every line records the call site it imitates (``site``), which for stdlib lines is the
application.go line behind ``stdlib.go:105``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kvsim import timefmt
from kvsim.releases import SIMULATED, printed_at

COMPONENT = "virt-controller"


@dataclass(frozen=True, slots=True)
class Line:
    at: int  # body time, µs
    body: str
    site: str  # the KubeVirt or client-go call site the line imitates


@dataclass(frozen=True)
class LoggedObject:
    """What ``log.Log.Object(obj)`` attaches (log.go:238-255 at v1.9.0)."""

    namespace: str
    name: str
    uid: str
    kind: str = ""


_GO_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _body_time(line: Line) -> int:
    return line.at


def go_json(fields: dict[str, Any]) -> str:
    return _GO_JSON.encode(fields)


@dataclass
class ContainerLog:
    """The stderr of one container instance (a restart starts a new one)."""

    namespace: str
    pod: str
    container: str
    seed: str
    lines: list[Line] = field(default_factory=list)
    release: str = SIMULATED  # the release whose positions the lines print (kvsim.releases)

    def kv(
        self,
        at: int,
        level: str,
        msg: str,
        pos: str,
        obj: LoggedObject | None = None,
        reason: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            "component": COMPONENT,
            "level": level,
            "msg": msg,
            "pos": printed_at(pos, self.release),
            "timestamp": timefmt.micro(at),
        }
        if obj is not None:
            if obj.namespace:
                fields["namespace"] = obj.namespace
            fields.update(name=obj.name, kind=obj.kind, uid=obj.uid)
        if reason is not None:
            fields["reason"] = reason
        self.lines.append(Line(at, go_json(fields), pos))

    def fields(self, at: int, site: str, **extra: Any) -> None:
        """A ``log.Log.Log(k, v, …)`` line with no msg (application.go:584)."""
        body = {"component": COMPONENT, "level": "info", "timestamp": timefmt.micro(at), **extra}
        self.lines.append(Line(at, go_json(body), site))

    def stdlib(self, at: int, msg: str, site: str) -> None:
        fields = {
            "component": COMPONENT,
            "level": "info",
            "msg": msg,
            "pos": "stdlib.go:105",
            "timestamp": timefmt.micro(at),
            "ts": timefmt.stdlib(at - 40),
        }
        self.lines.append(Line(at, go_json(fields), site))

    def klog(self, at: int, severity: str, fileline: str, msg: str, pid: int = 1) -> None:
        printed = printed_at(fileline, self.release)
        head = f"{severity}{timefmt.klog_header(at)} {pid:7d} {printed}] "
        self.lines.append(Line(at, head + msg, fileline))

    def rendered(self) -> Iterator[str]:
        """The file the kubelet keeps, line by line: each body behind its ``--timestamps``
        prefix, taken a few µs to ms after the body's own time and never going backwards."""
        rng = random.Random(self.seed)
        last_ns, second, head = 0, -1, ""
        for line in sorted(self.lines, key=_body_time):
            delay_ns = rng.randint(9_000, 2_400_000) + rng.randint(0, 999)
            ns = max(line.at * 1000 + delay_ns, last_ns + rng.randint(1_500, 40_000))
            last_ns = ns
            if ns // 1_000_000_000 != second:  # the prefix up to the fraction, once a second
                second = ns // 1_000_000_000
                head = timefmt.kubelet(second * 1_000_000_000)[:-10]
            yield f"{head}{ns % 1_000_000_000:09d}Z {line.body}\n"

    def render(self) -> str:
        return "".join(self.rendered())

    def bodies(self) -> str:
        """The lines as ``kubectl logs`` without ``--timestamps`` prints them."""
        return "".join(line.body + "\n" for line in sorted(self.lines, key=_body_time))

    def logfmt_era(self) -> str:
        """The JSON lines as KubeVirt before v0.6 (2018) printed its log: logfmt, ``level``,
        ``timestamp`` and ``pos`` first, then the object, ``msg`` last, and the VM kind of that
        era, ``OfflineVirtualMachine``. The positions stay kvsim's (v1.9.0's): no release of that
        era is simulated, only its line shape, for readers that must attribute such lines."""
        out = []
        for line in sorted(self.lines, key=_body_time):
            if not line.body.startswith("{"):
                continue
            fields = json.loads(line.body)
            if fields.get("name") and "uid" in fields:
                fields["kind"] = "OfflineVirtualMachine"
            head = ("level", "timestamp", "pos", "component")
            order = [*head, *(k for k in sorted(fields) if k not in (*head, "msg")), "msg"]
            out.append(" ".join(f"{k}={_logfmt(fields[k])}" for k in order if k in fields))
        return "".join(f"{text}\n" for text in out)


def _logfmt(value: Any) -> str:
    text = str(value)
    if text and not any(c in text for c in ' "=\\'):
        return text
    return json.dumps(text)
