"""KV-MG-06: a failed attempt's target pod is cleaned up (the migration controller,
pkg/virt-controller/watch/migration/migration.go at v1.9.0).

Where the controller deletes a migration's target pod:

- its pending timeout (``handlePendingPodTimeout``, migration.go:1717-1756): in phase Scheduling
  (or Pending with a pod) a target pod still ``Pending`` is looked at on every reconcile; when it
  is unschedulable the controller logs ``Migration target pod for VMI [ns/name] is currently
  unschedulable.`` (migration.go:1740) and, in that same call, once the pod is older than the
  unschedulable timeout (300 s, migration.go:86; the VMIM annotation
  ``kubevirt.io/migrationUnschedulablePodTimeoutSeconds`` overrides it, 1549-1563) or the
  catch-all timeout (900 s, migration.go:99; ``kubevirt.io/migrationPendingPodTimeoutSeconds``,
  1565-1579), deletes it (``deleteTimedOutTargetPod``, 1530-1547: Info ``Deleted pending
  migration target pod …`` and Event ``SuccessfulDelete``; a refused delete is Event
  ``FailedDelete`` and a retry). With the pod gone the migration fails (migration.go:599-605);
- a migration deleted before its hand-off (``handlePreHandoffMigrationCancel``, 1156-1173);
- garbage collection of finalized migrations past five per VMI deletes a failed one's target
  pod with it (``garbageCollectFinalizedMigrations``, 2251-2315).

A failed migration's target pod that started is otherwise stopped on its node (its launcher
exits) and its object stays until that garbage collection, so a terminated target pod is
cleaned up as far as the controller goes. The one case the evidence can prove wrong: the
controller logged the unschedulable warning for a pod already past its timeout, kept leading
and running, and the same pod is still there, Pending and not being deleted, when it was read.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from kvtrace.evidence import KubeObject
from kvtrace.model.facts import Facts
from kvtrace.model.leader_epochs import leader_at, replica_of
from kvtrace.model.verdicts import Finding, explained, unverifiable, violated
from kvtrace.timeline.migration_rows import target_pods
from kvtrace.timeline.vmscope import mapping_at
from parsers.timestamps import parse_time

UNSCHEDULABLE_TIMEOUT_S = 300  # migration.go:86
PENDING_TIMEOUT_S = 900  # migration.go:99
UNSCHEDULABLE_ANNOTATION = "kubevirt.io/migrationUnschedulablePodTimeoutSeconds"  # types.go:1310
PENDING_ANNOTATION = "kubevirt.io/migrationPendingPodTimeoutSeconds"  # types.go:1314
# between the controller reading its clock (timeSinceCreationSeconds) and printing the warning
CLOCK_MARGIN = timedelta(seconds=60)
# how long the warning's replica must be seen running afterwards: the delete is the next call
STILL_RUNNING = timedelta(minutes=2)
EVENT_SLACK = timedelta(seconds=2)  # Event times are whole seconds
TERMINATED = ("Succeeded", "Failed")
CREATED_PREFIX = "Created migration target pod "  # Event SuccessfulCreate (migration.go:1042)


def target_pod_cleanup(facts: Facts) -> Iterator[Finding]:
    for vmim in facts.timeline.scope.migrations:
        overdue = list(_overdue(facts, vmim))
        yield from overdue
        if _phase(vmim) == "Failed" and not overdue:
            yield from _failed_attempt(facts, vmim)


# --- a failed attempt ------------------------------------------------------------------------
def _failed_attempt(facts: Facts, vmim: KubeObject) -> Iterator[Finding]:
    scope = facts.timeline.scope
    rows, pods = _rows_of(facts, vmim.name), target_pods(vmim, scope)
    deleted = _deleted_rows(facts, vmim)
    if not pods:
        yield from _absent_target(facts, vmim, rows, deleted)
        return
    for pod in pods:
        phase = str(mapping_at(pod.body, "status").get("phase") or "")
        if mapping_at(pod.body, "metadata").get("deletionTimestamp"):
            yield explained(
                f"migration {vmim.name} failed; its target pod {pod.name} is being deleted", *rows
            )
        elif phase in TERMINATED:
            yield explained(
                f"migration {vmim.name} failed; its target pod {pod.name} has terminated "
                f"({phase}): the object stays until finalized migrations past 5 per VMI are "
                "garbage-collected (migration.go:2251-2315)",
                *rows,
            )
        else:
            yield unverifiable(
                f"migration {vmim.name} failed and its target pod {pod.name} is still "
                f"{phase or 'in no known phase'} when read: the controller deletes it only past "
                "its pending timeout while the migration is Scheduling, or when it "
                "garbage-collects finalized migrations (past 5 per VMI); a later capture or the "
                "pod's Events would decide",
                *rows,
            )


def _absent_target(
    facts: Facts, vmim: KubeObject, rows: list[int], deleted: list[int]
) -> Iterator[Finding]:
    names = _target_names(facts, vmim)
    if deleted:
        yield explained(
            f"migration {vmim.name} failed; the controller deleted its target pod", *deleted
        )
    elif names and facts.timeline.scope.pods:
        yield explained(
            f"migration {vmim.name} failed; its target pod {names[0]} is gone when read", *rows
        )
    elif names:
        yield unverifiable(
            f"migration {vmim.name} failed; its target pod {names[0]} is not in the evidence, but "
            "no launcher pod of the VM is either: the pods of the capture would decide",
            *rows,
        )


def _target_names(facts: Facts, vmim: KubeObject) -> list[str]:
    """The target pod's name: the migration state's ``targetPod``, else the SuccessfulCreate
    Event on the VMIM."""
    state = mapping_at(vmim.body, "status", "migrationState")
    names = [str(state["targetPod"])] if state.get("targetPod") else []
    for event in facts.timeline.scope.events:
        involved = mapping_at(event.body, "involvedObject")
        message = str(event.body.get("message") or "")
        if involved.get("uid") == vmim.uid and message.startswith(CREATED_PREFIX):
            names.append(message.removeprefix(CREATED_PREFIX))
    return names


# --- a target pod past its pending timeout ---------------------------------------------------
def _overdue(facts: Facts, vmim: KubeObject) -> Iterator[Finding]:
    """The unschedulable warning for a pod already past its timeout, with the pod still there."""
    pods = target_pods(vmim, facts.timeline.scope)
    if len(pods) != 1 or not _pending(pods[0]):
        return
    pod, created = pods[0], _time_of(pods[0], "creationTimestamp")
    if created is None:
        return
    due = created + timedelta(seconds=_timeout(vmim)) + CLOCK_MARGIN
    late = [i for i in _warnings(facts, vmim) if _at(facts, i) >= due]
    if not late:
        return
    yield _judge(facts, vmim, pod, late[0])


def _judge(facts: Facts, vmim: KubeObject, pod: KubeObject, warning: int) -> Finding:
    at, replica = _at(facts, warning), replica_of(facts.rows[warning].source)
    subject = f"target pod {pod.name} of migration {vmim.name}"
    if replica not in leader_at(facts.epochs, at):
        return unverifiable(
            f"{subject} was past its pending timeout when {replica} reported it unschedulable, "
            f"but {replica}'s leadership then is not in the evidence",
            warning,
        )
    later = _running_later(facts, replica, at + STILL_RUNNING)
    read = facts.timeline.evidence.read_from
    if later is None or read is None or read < _at(facts, later):
        return unverifiable(
            f"{subject} was past its pending timeout when {replica} reported it unschedulable "
            f"and is still Pending when read; a later line of {replica} while it led, before "
            "the pod was read, would show the controller kept running and should have deleted it",
            warning,
        )
    if not _events_cover(facts, vmim, at):
        return unverifiable(
            f"{subject} outlived its pending timeout, but the migration's Events of that time "
            "are not in the evidence: a FailedDelete Event would show the delete was refused",
            warning,
        )
    if _other_deletions(facts, vmim, pod) or _refused_delete(facts, vmim):
        return unverifiable(
            f"{subject} outlived its pending timeout, but the controller deleted another target "
            "pod of it or had a delete refused (Event FailedDelete): which pod it judged is not "
            "in the evidence",
            warning,
        )
    return violated(
        f"{subject} was past its pending timeout ({_timeout(vmim)} s) when {replica} reported "
        f"it unschedulable, {replica} kept leading, and the pod is still Pending and not "
        "being deleted when read: handlePendingPodTimeout deletes it in that same reconcile "
        "(migration.go:1717-1756, 1530-1547)",
        warning,
        later,
    )


def _running_later(facts: Facts, replica: str, after: datetime) -> int | None:
    """A line of ``replica`` at or after ``after``, while it still held the lease."""
    for i, row in enumerate(facts.rows):
        if row.time is None or row.time.at < after or replica_of(row.source) != replica:
            continue
        if replica in leader_at(facts.epochs, row.time.at):
            return i
    return None


def _timeout(vmim: KubeObject) -> int:
    """When handlePendingPodTimeout deletes an unschedulable Pending pod: the smaller of its two
    timeouts, each overridden by a VMIM annotation that parses as an integer (strconv.Atoi)."""
    annotations = mapping_at(vmim.body, "metadata", "annotations")
    return min(
        _seconds(annotations.get(UNSCHEDULABLE_ANNOTATION), UNSCHEDULABLE_TIMEOUT_S),
        _seconds(annotations.get(PENDING_ANNOTATION), PENDING_TIMEOUT_S),
    )


def _seconds(value: object, default: int) -> int:
    try:
        return int(str(value).strip()) if isinstance(value, str) else default
    except ValueError:
        return default


def _warnings(facts: Facts, vmim: KubeObject) -> list[int]:
    return [
        i
        for i in facts.by_message("migration.target-unschedulable")
        if vmim.uid and facts.rows[i].subject == vmim.uid and facts.rows[i].time is not None
    ]


def _deleted_rows(facts: Facts, vmim: KubeObject) -> list[int]:
    return [
        i
        for i in facts.by_message("migration.target-deleted")
        if facts.rows[i].arg("migration_uid") == vmim.uid
    ]


def _other_deletions(facts: Facts, vmim: KubeObject, pod: KubeObject) -> bool:
    """The controller deleted another target pod of this migration: its line names the pod's
    uid, its SuccessfulDelete Event the pod's name (migration.go:1544-1545)."""
    if any(facts.rows[i].arg("pod_uid") != pod.uid for i in _deleted_rows(facts, vmim)):
        return True
    return any(
        mapping_at(e.body, "involvedObject").get("uid") == vmim.uid
        and e.body.get("reason") == "SuccessfulDelete"
        and f"/{pod.name} " not in str(e.body.get("message") or "")
        for e in facts.timeline.scope.events
    )


def _refused_delete(facts: Facts, vmim: KubeObject) -> bool:
    return any(
        mapping_at(e.body, "involvedObject").get("uid") == vmim.uid
        and e.body.get("reason") == "FailedDelete"
        for e in facts.timeline.scope.events
    )


def _events_cover(facts: Facts, vmim: KubeObject, at: datetime) -> bool:
    """An Event of the VMIM recorded at the warning or later (the warning's own Event, written
    in the same call, migration.go:1735-1739): the Events of that time were collected."""
    for event in facts.timeline.scope.events:
        if mapping_at(event.body, "involvedObject").get("uid") != vmim.uid:
            continue
        when = parse_time(str(event.body.get("lastTimestamp") or event.body.get("eventTime") or ""))
        if when is not None and when.at >= at - EVENT_SLACK:
            return True
    return False


def _pending(pod: KubeObject) -> bool:
    meta = mapping_at(pod.body, "metadata")
    return mapping_at(pod.body, "status").get("phase") == "Pending" and not meta.get(
        "deletionTimestamp"
    )


def _phase(vmim: KubeObject) -> str:
    return str(mapping_at(vmim.body, "status").get("phase") or "")


def _time_of(obj: KubeObject, key: str) -> datetime | None:
    when = parse_time(str(mapping_at(obj.body, "metadata").get(key) or ""))
    return when.at if when else None


def _at(facts: Facts, index: int) -> datetime:
    time = facts.rows[index].time
    assert time is not None  # only rows with a time are judged
    return time.at


def _rows_of(facts: Facts, name: str) -> list[int]:
    return [
        i
        for i, r in enumerate(facts.rows)
        if r.origin == "migration" and r.arg("migration") == name
    ]
