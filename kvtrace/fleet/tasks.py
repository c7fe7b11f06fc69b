"""One fleet task: open one bundle where it is, check one partition of its VMs (all of them for
a bundle of ordinary size), and return findings and statistics.

The same function runs in this process and on a Dask worker, so the two give the same result.
A partition is the VMs whose ``crc32(namespace/name) % partitions`` is its number — the bucket
of :mod:`kvtrace.check.partition` — and a VM known only from logs is discovered by the
partition that owns its key (``Router.claims``), so the partitions of a bundle are disjoint and
together hold every VM a whole-bundle check holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from kvtrace.check.partition import key_bucket
from kvtrace.check.report import Selection, VMCheck
from kvtrace.check.vms import check_scopes
from kvtrace.errors import KvtraceError
from kvtrace.evidence import Evidence
from kvtrace.fleet.partition_rows import aliases_of, partition_log_rows
from kvtrace.fleet.results import BundleIdentity, BundleSource, Finding, TaskResult, VMStats
from kvtrace.fleet.samples import migration_samples, phase_samples
from kvtrace.model.verdicts import EXPLAINED, VIOLATION, Verdict
from kvtrace.model.version import VersionInfo, detect
from kvtrace.timeline.router import BulkResult, Router, bulk_log_rows, router_for


@dataclass(frozen=True)
class Task:
    source: BundleSource
    selection: Selection
    version_flag: str | None = None
    partition: int = 0
    partitions: int = 1


def run_task(task: Task) -> list[TaskResult]:
    """Check one task's VMs in each bundle of its source (an archive may hold several); a
    source that cannot be read is a result with ``error`` set (the fleet report counts and names
    it), never an exception that loses the other bundles."""
    from kvtrace.fleet.remote import open_sources

    results: list[TaskResult] = []
    try:
        with open_sources(task.source) as bundles:
            for label, evidence in bundles:
                results.append(check_evidence(evidence, _labelled(task, label)))
    except KvtraceError as exc:
        failed = TaskResult(_unread(task.source), task.partition, task.partitions, error=str(exc))
        results.append(failed)
    return results


def _labelled(task: Task, label: str) -> Task:
    """The task of one bundle of an archive: its source names the bundle's root."""
    if label == ".":
        return task
    return replace(task, source=BundleSource(task.source.location, label))


def check_evidence(evidence: Evidence, task: Task) -> TaskResult:
    version = detect(evidence, task.version_flag)
    router, bulk, lines = _log_rows(evidence, task)
    vms = check_scopes(evidence, router, bulk.rows, bulk.leader_rows, [], keep=False)
    notes: dict[str, None] = dict.fromkeys(version.notes())
    for vm in vms:
        notes.update(dict.fromkeys(vm.assessment.judge(version)))
    result = TaskResult(identity(evidence, task.source, version), task.partition, task.partitions)
    result.lines = lines
    result.notes = [*notes, *evidence.missing]
    for vm in sorted(vms, key=lambda v: v.key):
        _add_vm(result, router, vm)
    return result


def _add_vm(result: TaskResult, router: Router, vm: VMCheck) -> None:
    findings = [_finding(vm, v) for v in vm.assessment.verdicts if v.status != EXPLAINED]
    violations = sum(1 for f in findings if f.status == VIOLATION)
    namespace, name = vm.key
    result.findings.extend(findings)
    result.vms.append(
        VMStats(
            namespace,
            name,
            vm.strategy or "",
            vm.incarnations,
            len(vm.migrations),
            vm.failed_migrations,
            violations,
            len(findings) - violations,
        )
    )
    phases, dropped = phase_samples(router.scopes[vm.key])
    result.phases.extend(phases)
    result.dropped_samples += dropped
    result.migrations.extend(migration_samples(namespace, name, vm.migrations))


def _finding(vm: VMCheck, verdict: Verdict) -> Finding:
    return Finding(
        vm.key[0],
        vm.key[1],
        verdict.rule,
        verdict.severity,
        verdict.status,
        verdict.why,
        tuple(vm.evidence_of(verdict)),
        verdict.release,
    )


def _log_rows(evidence: Evidence, task: Task) -> tuple[Router, BulkResult, int]:
    """The router of the task's VMs, their log rows, and the number of log lines. A partition
    parses only its own lines (:mod:`kvtrace.fleet.partition_rows`)."""
    selection = task.selection
    namespaces = {selection.namespace} if selection.namespace else None
    only = (selection.namespace or "default", selection.name) if selection.name else None
    router = router_for(evidence, namespaces, only, selection.keeps if selection.labels else None)
    if task.partitions == 1:
        bulk = bulk_log_rows(router, evidence.logs, evidence.captured_at)
        return router, bulk, sum(report.tally.lines() for report in bulk.reports)
    owns = partial(_owns, task.partition, task.partitions)
    sub = Router({}, evidence, discover=router.discover, namespaces=router.namespaces, claims=owns)
    for key, scope in router.scopes.items():
        if owns(*key):
            sub.index(key, scope)
    aliases = aliases_of(router)
    bulk, lines = partition_log_rows(sub, evidence, task.partition, task.partitions, aliases)
    return sub, bulk, lines


def _owns(partition: int, partitions: int, namespace: str, name: str) -> bool:
    return key_bucket(namespace, name, partitions) == partition


def identity(evidence: Evidence, source: BundleSource, version: VersionInfo) -> BundleIdentity:
    captured = evidence.captured_at
    return BundleIdentity(
        bundle=source.name,
        cluster=cluster_name(evidence, source),
        captured_at=captured.strftime("%Y-%m-%dT%H:%M:%SZ") if captured else "",
        release=version.shown,
        release_source=version.source,
        layout=evidence.layout,
        coverage=evidence.coverage,
    )


def cluster_name(evidence: Evidence, source: BundleSource) -> str:
    """The manifest's ``cluster`` when a collector wrote one, else the bundle's own name (its
    directory or archive name without the archive suffixes): bundles of one cluster are told
    apart by their capture time."""
    stated = (evidence.manifest or {}).get("cluster")
    if isinstance(stated, str) and stated:
        return stated
    return bundle_stem(source.member or source.location)


def bundle_stem(location: str) -> str:
    name = Path(location.rstrip("/")).name or location
    for suffix in (".gz", ".bz2", ".xz", ".zst", ".tgz", ".tar", ".zip"):
        name = name.removesuffix(suffix)
    return name


def _unread(source: BundleSource) -> BundleIdentity:
    name = bundle_stem(source.member or source.location)
    return BundleIdentity(source.name, name, "", "", "", "", "")
