"""The log rows of one partition of a bundle's VMs, parsing only that partition's lines.

A partition task must not parse the whole log (every partition would then do all the work):
each stream is split by :func:`kvtrace.check.partition.split_range` — the raw-byte routing
``kvtrace check`` uses for its worker processes — into a temp directory, and only the lines of
this task's bucket and the leader-election lines are parsed, in file order, with their file line
numbers, and routed to the partition's VMs as a whole-bundle check routes them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kvtrace.check.partition import LEADER, Range, bucket_files, split_range
from kvtrace.evidence import Evidence, LogStream
from kvtrace.sources.safety import temp_space
from kvtrace.timeline.log_rows import LineDedup, SourceReport, stream_order
from kvtrace.timeline.router import BulkResult, Router, named, route_record
from parsers.logstream import LogParser

Aliases = dict[bytes, bytes]


def aliases_of(router: Router) -> Aliases:
    """Objects logged in a VM's name (snapshots, restores, …): their lines go with the VM's."""
    return {
        f"{ns}/{owned}".encode(): f"{ns}/{name}".encode()
        for (ns, name), scope in router.scopes.items()
        for owned in scope.owned_names
    }


def partition_log_rows(
    router: Router, evidence: Evidence, partition: int, partitions: int, aliases: Aliases
) -> tuple[BulkResult, int]:
    """The partition's rows and leader rows, and how many lines the logs have in all."""
    streams = sorted(evidence.logs, key=stream_order)
    result, dedup, total = BulkResult({}, [], []), LineDedup(), 0
    with temp_space() as directory:
        for index, stream in enumerate(streams):
            total += split_range(
                stream, Range(index, index, 0, None), str(directory), partitions, aliases
            )
        kept = _lines_of(directory, [LEADER, str(partition)])
        for index, stream in enumerate(streams):
            report = _report(stream)
            _parse(stream, kept.get(index, []), evidence, router, result, report, dedup)
            result.reports.append(report)
    return named(result, dedup), total


def _lines_of(directory: Path, buckets: list[str]) -> dict[int, list[tuple[int, bytes]]]:
    """The buckets' lines by stream, in file order, with their file line numbers."""
    grouped: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    for bucket in buckets:
        for path in bucket_files(str(directory), bucket):
            with open(path, "rb") as handle:
                for raw in handle:
                    part, line_no, line = raw.rstrip(b"\n").split(b"\t", 2)
                    grouped[int(part)].append((int(line_no), line))
    for lines in grouped.values():
        lines.sort(key=lambda item: item[0])
    return grouped


def _report(stream: LogStream) -> SourceReport:
    info = stream.info
    return SourceReport(info.source_id, info.pod, info.container, info.instance, 0, 0)


def _parse(
    stream: LogStream,
    lines: list[tuple[int, bytes]],
    evidence: Evidence,
    router: Router,
    result: BulkResult,
    report: SourceReport,
    dedup: LineDedup,
) -> None:
    parser = LogParser(stream.info, policy="skip", anchor=evidence.captured_at)
    for line_no, line in lines:
        for record in parser.feed(line_no, line):
            route_record(router, record, stream, result, report, dedup)
    for record in parser.close():
        route_record(router, record, stream, result, report, dedup)
    report.tally.update(parser.tally)
