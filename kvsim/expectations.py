"""The VM controller's expectations (pkg/controller/expectations.go at v1.9.0): a create or a
delete the controller made and has not yet seen in its informer; ``sync`` does nothing while one
is pending (vm.go:3225, 3308), unless the record is older than five minutes.

At logVerbosity 4 every step prints a line (expectations.go:123-344), the record as Go's ``%#v``
or ``%s`` shows a ``*ControlleeExpectations`` (two ``atomic.Int64`` counters, the key, and the
``time.Now()`` it was set at, monotonic reading included).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

EXPECTATIONS_TIMEOUT_US = 5 * 60 * 1_000_000  # expectations.go:48
MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)

Say = Callable[[str, str], None]  # (message, pos): a V(4) line of the container


@dataclass
class Record:
    add: int
    delete: int
    timestamp: int
    deleting: set[str] = field(default_factory=set)  # VMI keys (UID-tracking expectations)


def _silent(message: str, pos: str) -> None:
    return None


class Expectations:
    """One ``UIDTrackingControllerExpectations`` (vm.go:167). ``say`` prints its V(4) lines;
    ``started`` is the container's start, for the monotonic part of a printed time."""

    def __init__(self, say: Say = _silent, started: int = 0) -> None:
        self.records: dict[str, Record] = {}
        self.say, self.started = say, started

    def state(self, key: str, now: int) -> str:
        """``unrecorded``, ``fulfilled``, ``expired`` or ``waiting`` (expectations.go:119-141)."""
        record = self.records.get(key)
        if record is None:
            return "unrecorded"
        if record.add <= 0 and record.delete <= 0:
            return "fulfilled"
        return "expired" if now - record.timestamp > EXPECTATIONS_TIMEOUT_US else "waiting"

    def satisfied(self, key: str, now: int) -> bool:
        """SatisfiedExpectations, printing what it found."""
        state = self.state(key, now)
        record = self.records.get(key)
        if record is None:
            self.say(
                f"Controller {key} (name: ) either never recorded expectations, or the ttl "
                "expired.",
                "expectations.go:140",
            )
        elif state == "fulfilled":
            self.say(
                f"Controller expectations (name: ) fulfilled {self._go(record, key)}",
                "expectations.go:123",
            )
        elif state == "expired":
            self.say(
                f"Controller expectations (name: ) expired {self._go(record, key)}",
                "expectations.go:126",
            )
        else:
            self.say(
                f"Controller (name: ) still waiting on expectations {self._go(record, key)}",
                "expectations.go:129",
            )
        return state != "waiting"

    def pending(self, key: str, now: int) -> bool:
        """Whether a create or delete is still expected, without a line (setPrintableStatus
        reads the store directly)."""
        return self.state(key, now) == "waiting"

    def expect_creations(self, key: str, count: int, now: int) -> None:
        self._set(key, Record(count, 0, now))

    def creation_observed(self, key: str) -> None:
        record = self.records.get(key)
        if record is not None:
            record.add -= 1
            self.say(f"Lowered expectations: {self._plain(record, key)}", "expectations.go:184")

    def expect_deletions(self, key: str, vmi_keys: list[str], now: int) -> None:
        """UIDTrackingControllerExpectations.ExpectDeletions (expectations.go:302-320)."""
        self.say(
            f"Controller {key} waiting on deletions for: [{' '.join(vmi_keys)}]",
            "expectations.go:314",
        )
        self._set(key, Record(0, len(vmi_keys), now, set(vmi_keys)))

    def deletion_observed(self, key: str, vmi_key: str) -> None:
        record = self.records.get(key)
        if record is not None and vmi_key in record.deleting:
            self.say(f"Controller {key} received delete for pod {vmi_key}", "expectations.go:344")
            record.deleting.discard(vmi_key)
            record.delete -= 1
            self.say(f"Lowered expectations: {self._plain(record, key)}", "expectations.go:184")

    def delete(self, key: str) -> None:
        self.records.pop(key, None)

    def _set(self, key: str, record: Record) -> None:
        self.say(f"Setting expectations {self._go(record, key)}", "expectations.go:165")
        self.records[key] = record

    # --- how Go prints a record --------------------------------------------------------------
    def _go(self, record: Record, key: str) -> str:
        """``%#v``: time.Time's GoString for a time.Now() in the container's Local zone (UTC)."""
        at = _utc(record.timestamp)
        when = (
            f"time.Date({at.year}, time.{MONTHS[at.month - 1]}, {at.day}, {at.hour}, "
            f"{at.minute}, {at.second}, {at.microsecond * 1000}, time.Local)"
        )
        return (
            f"&controller.ControlleeExpectations{{add:{_atomic(record.add)}, "
            f'del:{_atomic(record.delete)}, key:"{key}", timestamp:{when}}}'
        )

    def _plain(self, record: Record, key: str) -> str:
        """``%s``: each field with %s, so the counters print as ``%!s(int64=N)``."""
        at = _utc(record.timestamp)
        since = (record.timestamp - self.started) / 1e6
        when = f"{at:%Y-%m-%d %H:%M:%S}.{at.microsecond * 1000:09d} +0000 UTC m=+{since:.9f}"
        return (
            f"&{{{{{{}} {{}} %!s(int64={record.add})}} {{{{}} {{}} %!s(int64={record.delete})}} "
            f"{key} {when}}}"
        )


def _atomic(value: int) -> str:
    return f"atomic.Int64{{_:atomic.noCopy{{}}, _:atomic.align64{{}}, v:{value}}}"


def _utc(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1e6, tz=timezone.utc).replace(
        microsecond=micros % 1_000_000
    )
