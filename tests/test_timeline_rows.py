"""TimelineRow's positional copies keep every field (they stand in for dataclasses.replace)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import datetime, timezone

from kvtrace.timeline.rows import Provenance, TimelineRow
from parsers.records import Timestamp


def _every_field_set() -> TimelineRow:
    """A row whose every field differs from its default and from every other field."""
    values: dict[str, object] = {
        "time": Timestamp(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc), 1000),
        "evidence": Provenance("log", "a.log", 7),
        "args": (("key", "ns/vm"),),
        "order_uncertain": True,
    }
    for index, field in enumerate(fields(TimelineRow)):
        values.setdefault(field.name, f"{field.name}-{index}")
    return TimelineRow(**values)  # type: ignore[arg-type]


def test_with_incarnation_is_replace_of_the_incarnation_alone() -> None:
    row = _every_field_set()
    assert row.with_incarnation("uid-2") == replace(row, incarnation="uid-2")
    assert row.with_incarnation(None) == replace(row, incarnation=None)
    assert row.with_incarnation("uid-2") != replace(row, incarnation="uid-3")
