"""must-gather ``--vm-incident`` roots, marked by ``incident-summary.yaml``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kvtrace.evidence import Evidence
from kvtrace.sources.builder import EvidenceBuilder, collection_time, parse_instant
from kvtrace.sources.layouts.inspect import read_inspect_root
from kvtrace.sources.walk import BundleTree
from parsers.manifests import load_manifests

SUMMARY = "incident-summary.yaml"
MAX_DEPTH = 4
# Keys that may carry the collection time; the wrapper's timestamp file is preferred.
_TIME_KEYS = (
    "collection_time",
    "collected_at",
    "collection_timestamp",
    "generated_at",
    "timestamp",
)

VM_INCIDENT_GAPS = (
    "--vm-incident bundles hold no virt-controller logs",
    "--vm-incident bundles hold no virt-controller Lease",
    "--vm-incident bundles hold no ControllerRevisions",
    "Events come from a text table with relative ages: their times are intervals around the "
    "collection time",
    "core/pods/* logs carry no capture-time prefix",
)


def find_roots(tree: BundleTree) -> list[str]:
    return [
        relative.rsplit("/", 1)[0] if "/" in relative else ""
        for relative in tree.files
        if relative.rsplit("/", 1)[-1] == SUMMARY and relative.count("/") <= MAX_DEPTH
    ]


def read_vm_incident(builder: EvidenceBuilder, roots: list[str]) -> Evidence:
    """Summary first (for the collection time the events table needs), then the inspect rules."""
    for root in roots:
        summary = _summary(builder, f"{root}/{SUMMARY}" if root else SUMMARY)
        builder.manifest = builder.manifest or summary
        builder.captured_at = builder.captured_at or collection_time(builder, root)
        builder.captured_at = builder.captured_at or _summary_time(summary)
        builder.missing.extend(_collector_skips(summary))
    for root in roots:
        read_inspect_root(builder, root)
    builder.missing.extend(VM_INCIDENT_GAPS)
    return builder.build("vm-incident", "low")


def _summary(builder: EvidenceBuilder, relative: str) -> dict[str, Any]:
    data = builder.read(relative)
    loaded = load_manifests(data or b"", relative)
    if loaded.error is not None:
        builder.skip(relative, f"not readable YAML: {loaded.error}")
    return loaded.objects[0] if loaded.objects else {}


def _summary_time(summary: dict[str, Any]) -> datetime | None:
    for key in _TIME_KEYS:
        moment = parse_instant(summary.get(key))
        if moment is not None:
            return moment
    return None


def _collector_skips(summary: dict[str, Any]) -> list[str]:
    skipped = summary.get("skipped")
    if not isinstance(skipped, list):
        return []
    return [f"the --vm-incident collector skipped: {_words(entry)}" for entry in skipped]


def _words(entry: Any) -> str:
    if isinstance(entry, dict):
        return ", ".join(f"{key}: {value}" for key, value in entry.items())
    return str(entry)
