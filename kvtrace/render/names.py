"""``-o name``: the objects a report is about, one ``resource.group/name`` a line as kubectl
prints them, ready for ``xargs kubectl get``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtrace.model.leader_epochs import LOCK_NAME
from kvtrace.render.check_shape import listed

if TYPE_CHECKING:
    from kvtrace.check.report import CheckReport
    from kvtrace.leader.history import LeaderHistory
    from kvtrace.leader.lock import LockRecord
    from kvtrace.leader.status import LeaderStatus
    from kvtrace.model.engine import AssessedTimeline
    from kvtrace.overhead.report import OverheadReport

VM = "virtualmachine.kubevirt.io"
_LOCKS = {"Lease": "lease.coordination.k8s.io", "Endpoints": "endpoints"}


def _lines(names: list[str]) -> str:
    return "".join(f"{n}\n" for n in names)


def timeline_names(report: AssessedTimeline) -> str:
    return _lines([f"{VM}/{report.timeline.name}"])


def check_names(report: CheckReport) -> str:
    """The VMs the table lists: those with a violation or an open question (the one VM asked
    for, whatever its verdicts)."""
    return _lines([f"{VM}/{vm.key[1]}" for vm in listed(report)])


def _lock_name(lock: LockRecord | None) -> str:
    return _lines([f"{_LOCKS.get(lock.kind, lock.kind.lower())}/{LOCK_NAME}"] if lock else [])


def leader_status_names(status: LeaderStatus) -> str:
    return _lock_name(status.lock)


def leader_history_names(history: LeaderHistory) -> str:
    return _lock_name(history.lock)


def overhead_names(report: OverheadReport) -> str:
    return _lines([f"pod/{report.pod.name}"])
