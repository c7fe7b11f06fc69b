"""virt-handler's side of a filesystem freeze, minimally (``Cluster(snapshots=True)``).

* The guest agent connects some seconds after the guest runs: virt-handler gives the VMI the
  condition ``AgentConnected`` (pkg/virt-handler/vm.go at v1.9.0), which the snapshot
  controller reads to decide whether to freeze (source.go:110).
* The VMI ``freeze`` / ``unfreeze`` subresources (virt-api → virt-handler → launcher → guest
  agent, pkg/virt-handler/rest/lifecycle.go:110-160): the call returns once the guest agent has
  run ``guest-fsfreeze-freeze``; virt-handler then copies the domain's state to
  ``status.fsFreezeStatus`` (``frozen``, or removed when thawed; vm.go:936-941,
  virtwrap/api/schema.go:99-100) on its next update.

virt-handler's own log is not captured, so none of its lines are written.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kvsim.apiserver import ApiError, ApiServer, Obj, Watch
from kvsim.kernel import MS, SECOND, Host, Kernel

VMI = "VirtualMachineInstance"
AGENT = "AgentConnected"


def _agent_condition() -> dict[str, object]:
    return {"lastProbeTime": None, "lastTransitionTime": None, "status": "True", "type": AGENT}


def connected(vmi: Obj) -> bool:
    conditions = vmi.get("status", {}).get("conditions") or []
    return any(c.get("type") == AGENT for c in conditions)


class GuestAgents:
    """Every guest's agent, as virt-handler reports it, and the freeze subresources."""

    def __init__(self, kernel: Kernel, api: ApiServer, seed: str) -> None:
        self.kernel, self.api = kernel, api
        self.rng = random.Random(f"guest-agents/{seed}")
        self.host = Host("guest-agents")
        self.pending: set[str] = set()  # VMI uids whose agent is about to connect
        self.frozen: dict[str, bool] = {}  # the guest filesystems' state, by VMI uid
        self.api.watch(Watch({VMI}, self.host, self._event, lambda: self.rng.randint(200, 2_500)))

    def _event(self, event: str, vmi: Obj) -> None:
        uid = vmi["metadata"]["uid"]
        running = vmi.get("status", {}).get("phase") == "Running"
        if event == "DELETED" or not running or connected(vmi) or uid in self.pending:
            return
        self.pending.add(uid)
        self.kernel.after(self.rng.randint(8, 25) * SECOND, lambda: self._connect(vmi))

    def _connect(self, vmi: Obj) -> None:
        def add(current: Obj) -> None:
            current["status"].setdefault("conditions", []).append(_agent_condition())

        self._patch(vmi, add)

    def _patch(self, vmi: Obj, mutate: Callable[[Obj], None]) -> None:
        meta = vmi["metadata"]
        live = self.api.peek(VMI, meta["namespace"], meta["name"])
        if live is None or live["metadata"]["uid"] != meta["uid"]:
            return
        if live["metadata"].get("deletionTimestamp"):
            return
        self.api.patch(VMI, meta["namespace"], meta["name"], mutate)

    def freeze_time_us(self) -> int:
        """How long the guest agent's fsfreeze takes behind the subresource call."""
        return self.rng.randint(15, 400) * MS

    def freeze(self, namespace: str, name: str, frozen: bool) -> None:
        """The subresource on the server side: refused unless the guest's agent is there."""
        vmi = self.api.peek(VMI, namespace, name)
        if vmi is None or vmi.get("status", {}).get("phase") != "Running":
            raise ApiError(409, "Conflict", f"VMI {name} is not running")
        if not connected(vmi):
            raise ApiError(
                500, "InternalError", "Internal error occurred: guest agent is not connected"
            )
        self.frozen[vmi["metadata"]["uid"]] = frozen
        self.kernel.after(self.rng.randint(300, 1_500) * MS, lambda: self._report(vmi))

    def _report(self, vmi: Obj) -> None:
        """virt-handler's next update copies the domain's current state."""
        frozen = self.frozen.get(vmi["metadata"]["uid"], False)

        def write(current: Obj) -> None:
            if frozen:
                current["status"]["fsFreezeStatus"] = "frozen"
            else:
                current["status"].pop("fsFreezeStatus", None)

        self._patch(vmi, write)


def go_duration(ns: int) -> str:
    """Go's ``time.Duration.String()`` for durations under a minute."""
    if ns < 1_000:
        return f"{ns}ns"
    for unit, size in (("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000)):
        if ns < size * 1_000 or unit == "s":
            whole, fraction = divmod(ns, size)
            digits = f"{fraction:0{len(str(size)) - 1}d}".rstrip("0")
            return f"{whole}.{digits}{unit}" if digits else f"{whole}{unit}"
    raise AssertionError("unreachable")
