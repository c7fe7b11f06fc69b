"""Phase two of a partitioned check: each worker parses and checks whole buckets.

Workers are forked after the evidence is open and the router is built, so they share both
without pickling them; tasks carry only bucket names and small numbering maps, and results are
the compact :class:`~kvtrace.check.report.VMCheck` values plus per-stream line tallies.

The bucket count grows with the logs (:data:`BUCKET_BYTES` of raw lines each), so a worker's
memory is bounded by the work of one bucket whatever the log size. Workers ignore Ctrl-C and
die on SIGTERM: the parent alone handles an interrupt, by terminating them at once (a pool that
waited for its running buckets took over ten seconds to stop). Lines are read by
:class:`~parsers.fastline.FastLogParser` (the records of the full parser, faster), with the
garbage collector off while a bucket's lines are parsed: they form no cycles.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.pool import Pool
from typing import Any

from kvtrace.check.partition import (
    LEADER,
    UNROUTED,
    Mapper,
    bucket_files,
    key_bucket,
    range_streams,
    split_all,
)
from kvtrace.check.progress import CheckProgress
from kvtrace.check.report import VMCheck, without_timeline
from kvtrace.check.vms import check_scopes
from kvtrace.evidence import Evidence, LogStream
from kvtrace.sources.safety import temp_space
from kvtrace.timeline.log_rows import LineDedup, SourceReport, stream_order
from kvtrace.timeline.router import BulkResult, Router, named, route_record
from kvtrace.timeline.rows import TimelineRow
from parsers.fastline import FastLogParser
from parsers.records import LineTally

BUCKETS_PER_WORKER = 8
BUCKET_BYTES = 16 << 20  # raw log bytes per bucket: what one worker holds at a time


@dataclass
class _Job:
    evidence: Evidence
    router: Router
    streams: list[LogStream]
    directory: str
    buckets: int
    since: bool = False  # --since: each VM comes back with the Reach its window needs
    leader_rows: list[TimelineRow] | None = None


@dataclass
class BucketResult:
    vms: list[VMCheck] = field(default_factory=list)
    tallies: dict[int, LineTally] = field(default_factory=dict)
    rows: dict[int, int] = field(default_factory=dict)


_JOB: _Job | None = None  # set in the parent before the pool forks


def workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def check_partitioned(
    evidence: Evidence,
    router: Router,
    progress: CheckProgress | None = None,
    since: bool = False,
) -> tuple[list[VMCheck], list[SourceReport]]:
    """Check every VM of ``router`` in the workers; with ``since``, each VM's result carries
    its :class:`~kvtrace.check.report.Reach` (``check --since`` chooses by row times)."""
    global _JOB
    streams = sorted(evidence.logs, key=stream_order)
    count = workers()
    shown = progress or CheckProgress(False)
    with temp_space() as directory:
        buckets = bucket_count(streams, count)
        _JOB = _Job(evidence, router, streams, str(directory), buckets, since)
        try:
            with _pool(count) as pool:
                aliases = _aliases(router)
                first, lines = split_all(
                    _mapper(pool, shown, "reading logs"),
                    streams,
                    str(directory),
                    _JOB.buckets,
                    aliases,
                )
                names = [LEADER, UNROUTED, *(str(b) for b in range(_JOB.buckets))]
                tasks = [(n, first) for n in names]
                results = list(_mapper(pool, shown, "checking VMs")(_check_bucket, tasks))
        finally:
            _JOB = None
            shown.close()
    return [vm for r in results for vm in r.vms], _reports(streams, lines, results)


def bucket_count(streams: list[LogStream], count: int) -> int:
    """Enough buckets for every core, and one per :data:`BUCKET_BYTES` of logs."""
    size = sum(_size(stream) for stream in streams)
    return max(count * BUCKETS_PER_WORKER, -(-size // BUCKET_BYTES))


def _size(stream: LogStream) -> int:
    try:
        return stream.path.stat().st_size if stream.path else 0
    except OSError:
        return 0


@contextmanager
def _pool(count: int) -> Iterator[Pool]:
    """Forked workers; leaving the block (normally, or on Ctrl-C or SIGTERM in the parent)
    terminates them at once."""
    context = multiprocessing.get_context("fork")
    pool = context.Pool(count, initializer=_worker_signals)
    try:
        yield pool
    finally:
        pool.terminate()
        pool.join()


def _worker_signals() -> None:
    """Ctrl-C reaches the whole process group: only the parent acts on it. SIGTERM (the
    parent's terminate) ends a worker at once. The inherited objects are never collected."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.freeze()


def _mapper(pool: Pool, progress: CheckProgress, phase: str) -> Mapper:
    """``map`` over the pool, results in task order, one progress step per finished task."""

    def mapped(function: Callable[[Any], Any], tasks: list[Any]) -> list[Any]:
        progress.start(phase, len(tasks))
        out = []
        for result in pool.imap(function, tasks):
            out.append(result)
            progress.step()
        return out

    return mapped


def _aliases(router: Router) -> dict[bytes, bytes]:
    """The objects logged in a VM's name (its snapshots, restores and their contents): their
    lines go to the VM's bucket, as the router sends them to the VM in process."""
    return {
        f"{ns}/{owned}".encode(): f"{ns}/{name}".encode()
        for (ns, name), scope in router.scopes.items()
        for owned in scope.owned_names
    }


def _reports(
    streams: list[LogStream], lines: dict[int, int], results: list[BucketResult]
) -> list[SourceReport]:
    reports = []
    for index, stream in enumerate(streams):
        info = stream.info
        total = lines.get(index, 0)
        report = SourceReport(info.source_id, info.pod, info.container, info.instance, total, total)
        for result in results:
            report.tally.update(result.tallies.get(index, LineTally()))
            report.rows += result.rows.get(index, 0)
        reports.append(report)
    return reports


def _check_bucket(task: tuple[str, dict[int, int]]) -> BucketResult:
    name, first = task
    job = _JOB
    assert job is not None, "worker started without a job"
    gc.disable()  # parsed lines form no cycles: collecting while they pile up only costs time
    try:
        grouped = _read(job, name, first)
        if name == LEADER:
            return _leader_tally(job, grouped)
        if name == UNROUTED:
            return _tally_only(job, grouped)
        sub = _bucket_router(job.router, int(name), job.buckets)
        routed, result, dedup = BulkResult({}, [], []), BucketResult(), LineDedup()
        for index, lines in sorted(grouped.items()):
            report = _parse_and_route(job, sub, index, lines, routed, dedup)
            result.tallies[index], result.rows[index] = report.tally, report.rows
        del grouped
        routed = named(routed, dedup)
    finally:
        gc.enable()
    result.vms = check_scopes(
        job.evidence, sub, routed.rows, _leader_rows(job, first), [], keep=job.since
    )
    if job.since:
        result.vms = [without_timeline(vm) for vm in result.vms]
    return result


def _read(job: _Job, bucket: str, first: dict[int, int]) -> dict[int, list[tuple[int, bytes]]]:
    """Bucket lines grouped by stream, in file order, with file line numbers."""
    stream_of = range_streams(job.streams)
    grouped: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    for path in bucket_files(job.directory, bucket):
        with open(path, "rb") as handle:
            for raw in handle:
                part, line_no, line = raw.rstrip(b"\n").split(b"\t", 2)
                grouped[stream_of[int(part)]].append((first[int(part)] + int(line_no), line))
    for lines in grouped.values():
        lines.sort(key=lambda item: item[0])
    return grouped


def _parse_and_route(
    job: _Job,
    sub: Router,
    index: int,
    lines: list[tuple[int, bytes]],
    routed: BulkResult,
    dedup: LineDedup,
) -> SourceReport:
    stream = job.streams[index]
    report = SourceReport(stream.info.source_id, None, None, None, 0, 0)
    parser = FastLogParser(stream.info, policy="skip", anchor=job.evidence.captured_at)
    for line_no, line in lines:
        for record in parser.feed(line_no, line):
            route_record(sub, record, stream, routed, report, dedup)
    for record in parser.close():
        route_record(sub, record, stream, routed, report, dedup)
    tally = LineTally(parser.tally)
    tally.update(report.tally)  # duplicates found while routing move lines from record
    report.tally = tally
    return report


def _tally_only(job: _Job, grouped: dict[int, list[tuple[int, bytes]]]) -> BucketResult:
    result = BucketResult()
    for index, lines in grouped.items():
        parser = FastLogParser(
            job.streams[index].info, policy="skip", anchor=job.evidence.captured_at
        )
        for line_no, line in lines:
            parser.feed(line_no, line)
        parser.close()
        result.tallies[index] = parser.tally
    return result


def _leader_tally(job: _Job, grouped: dict[int, list[tuple[int, bytes]]]) -> BucketResult:
    """The leader lines' tallies, duplicates found as in process: one line given twice is
    one line (the lease lines of a log given again are duplicates too)."""
    result, routed, dedup = BucketResult(), BulkResult({}, [], []), LineDedup()
    empty = Router({}, job.evidence, discover=False)
    for index, lines in sorted(grouped.items()):
        result.tallies[index] = _parse_and_route(job, empty, index, lines, routed, dedup).tally
    return result


def _leader_rows(job: _Job, first: dict[int, int]) -> list[TimelineRow]:
    """Leader-election rows, parsed once per worker process and shared by its buckets."""
    if job.leader_rows is None:
        routed, dedup = BulkResult({}, [], []), LineDedup()
        empty = Router({}, job.evidence, discover=False)
        for index, lines in sorted(_read(job, LEADER, first).items()):
            _parse_and_route(job, empty, index, lines, routed, dedup)
        job.leader_rows = named(routed, dedup).leader_rows
    return job.leader_rows


def _in_bucket(bucket: int, buckets: int, namespace: str, name: str) -> bool:
    return key_bucket(namespace, name, buckets) == bucket


def _bucket_router(router: Router, bucket: int, buckets: int) -> Router:
    sub = Router({}, router.evidence, discover=router.discover, namespaces=router.namespaces)
    sub.claims = partial(_in_bucket, bucket, buckets)
    for key, scope in router.scopes.items():
        if key_bucket(*key, buckets) == bucket:
            sub.index(key, scope)
    return sub
