"""Events rebuilt from an ``oc get events`` text table (as must-gather ``--vm-incident`` writes).

A table row has no absolute time, only an age truncated to its unit. Each row becomes an Event
dict whose ``firstTimestamp``/``lastTimestamp`` stay null; the time *interval* is under the
``x-kvtrace`` key: ``lastSeen = {"after": …, "notAfter": …}`` means the last occurrence lies in
``(after, notAfter]``, computed as ``(collection − age_hi, collection − age_lo]``. ``firstSeen``
comes from ``(xN over D)`` or a FIRST SEEN column. Without a collection time both are null.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from parsers.manifests import AgeInterval, TableEvent

EVENTS_TABLE = "events_table"


def table_event_body(
    row: TableEvent, namespace: str | None, collected: datetime | None, source: str
) -> dict[str, Any]:
    """A ``v1`` Event dict for one table row, marked as derived from the table."""
    ns = row.namespace or namespace
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{row.object_name or 'unknown'}.table-line-{row.line_no}",
            "namespace": ns,
        },
        "involvedObject": {"kind": row.object_kind, "name": row.object_name, "namespace": ns},
        "reason": row.reason,
        "message": row.message,
        "type": row.type,
        "count": row.count or 1,
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "source": {},
        "x-kvtrace": {
            "derivedFrom": "events-table",
            "file": source,
            "line": row.line_no,
            "raw": row.raw,
            "realigned": row.realigned,
            "lastSeen": age_window(row.last_seen, collected),
            "firstSeen": age_window(row.first_seen, collected),
        },
    }


def age_window(age: AgeInterval | None, collected: datetime | None) -> dict[str, str] | None:
    """``(collected − high, collected − low]`` as RFC 3339 strings, or None when unknown."""
    if age is None or collected is None:
        return None
    return {
        "after": _rfc3339(collected - timedelta(seconds=age.high_s)),
        "notAfter": _rfc3339(collected - timedelta(seconds=age.low_s)),
    }


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
