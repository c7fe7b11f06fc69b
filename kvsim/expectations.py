"""The VM controller's expectations (pkg/controller/expectations.go at v1.9.0): a create or a
delete the controller made and has not yet seen in its informer; ``sync`` does nothing while one
is pending (vm.go:3225, 3308), unless the record is older than five minutes."""

from __future__ import annotations

from dataclasses import dataclass, field

EXPECTATIONS_TIMEOUT_US = 5 * 60 * 1_000_000  # expectations.go:48


@dataclass
class Record:
    add: int
    delete: int
    timestamp: int
    deleting: set[str] = field(default_factory=set)  # VMI keys (UID-tracking expectations)


class Expectations:
    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    def satisfied(self, key: str, now: int) -> bool:
        record = self.records.get(key)
        if record is None:
            return True
        if record.add <= 0 and record.delete <= 0:
            return True
        return now - record.timestamp > EXPECTATIONS_TIMEOUT_US

    def expect_creations(self, key: str, count: int, now: int) -> None:
        self.records[key] = Record(count, 0, now)

    def creation_observed(self, key: str) -> None:
        record = self.records.get(key)
        if record is not None:
            record.add -= 1

    def expect_deletions(self, key: str, vmi_keys: list[str], now: int) -> None:
        self.records[key] = Record(0, len(vmi_keys), now, set(vmi_keys))

    def deletion_observed(self, key: str, vmi_key: str) -> None:
        record = self.records.get(key)
        if record is not None and vmi_key in record.deleting:
            record.deleting.discard(vmi_key)
            record.delete -= 1

    def delete(self, key: str) -> None:
        self.records.pop(key, None)
