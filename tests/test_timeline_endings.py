"""What ended each incarnation (kvtrace/timeline/endings.py), on histories kvsim runs with a
known truth: the guest's fate, the user's request, the run strategy, the VM's deletion."""

from __future__ import annotations

import pytest

from kvsim.cluster import Cluster
from kvsim.histories import T0
from kvsim.kernel import SECOND
from kvsim.nodes import Fate
from kvtrace.timeline import endings as E
from tests.simulated import assessed

MINUTE = 60 * SECOND


def _causes(cluster: Cluster, until: int = 6 * MINUTE) -> list[str]:
    timeline, _ = assessed(cluster.capture(T0 + until), "vm-a")
    return [e.cause for e in E.endings(timeline)]


def _cluster(strategy: str, fate: Fate | None = None) -> Cluster:
    fates = {("vm-a", 0): fate} if fate else {}
    cluster = Cluster("endings", T0, fates=fates)
    cluster.create_vm(T0 + 30 * SECOND, "vm-a", strategy=strategy)
    return cluster


@pytest.mark.parametrize(
    "strategy, fate, wanted",
    [
        ("Always", Fate("crash", 60 * SECOND), [E.CRASHED, E.PRESENT]),
        ("RerunOnFailure", Fate("shutdown", 60 * SECOND), [E.SHUT_DOWN]),
        ("Once", Fate("shutdown", 60 * SECOND), [E.SHUT_DOWN]),
    ],
)
def test_the_guest_ending_is_told_by_the_stopped_event(strategy, fate, wanted):
    assert _causes(_cluster(strategy, fate)) == wanted


@pytest.mark.parametrize(
    "strategy, verb, wanted",
    [
        ("Manual", "stop", [E.STOP_REQUEST]),
        ("Always", "restart", [E.RESTART_REQUEST, E.PRESENT]),
        # virtctl stop of an Always VM sets runStrategy Halted (virt-api's stop subresource)
        ("Always", "stop", [E.HALTED]),
    ],
)
def test_a_user_request_ends_the_incarnation(strategy, verb, wanted):
    cluster = _cluster(strategy)
    if strategy == "Manual":
        cluster.virtctl(T0 + 40 * SECOND, "start", "vm-a")
    cluster.virtctl(T0 + 2 * MINUTE, verb, "vm-a")
    assert _causes(cluster) == wanted


def test_a_switch_to_halted_and_a_deletion_end_the_incarnation():
    halted = _cluster("Always")
    halted.set_strategy(T0 + 2 * MINUTE, "vm-a", "Halted")
    assert _causes(halted) == [E.HALTED]
    deleted = _cluster("Always")
    deleted.delete_vm(T0 + 2 * MINUTE, "vm-a")
    assert _causes(deleted) == [E.VM_DELETED]


def test_each_ending_points_at_the_row_that_says_it():
    cluster = _cluster("Always", Fate("crash", 60 * SECOND))
    timeline, _ = assessed(cluster.capture(T0 + 6 * MINUTE), "vm-a")
    first = E.endings(timeline)[0]
    assert first.row is not None
    row = timeline.rows[first.row]
    assert row.message_id == "vm.stop" and row.incarnation == first.incarnation


def test_a_drain_of_a_vm_that_does_not_migrate_is_named_as_the_likely_cause():
    """evictionStrategy None: the eviction webhook lets the drain delete the launcher pod, the
    VMI controller fails the running VMI whose pod is gone, and the VM controller restarts it."""
    cluster = Cluster("endings-drain", T0, live_migration=True)
    cluster.create_vm(T0 + 30 * SECOND, "vm-a", eviction="None")

    def drain() -> None:
        node = cluster.node_of("vm-a")
        assert node is not None
        cluster.drain(cluster.kernel.now, node)

    cluster.at(T0 + 3 * MINUTE, drain)
    timeline, assessment = assessed(cluster.capture(T0 + 8 * MINUTE), "vm-a")
    first = E.endings(timeline)[0]
    assert first.cause == "launcher pod gone?"
    assert "evictionStrategy is None" in first.detail and "drain" in first.detail
    assert not [v for v in assessment.verdicts if v.status == "violation"]


def test_a_start_that_never_ran_is_not_called_a_lost_pod():
    """A launcher that dies before the guest runs leaves the VMI Failed without a Stopped
    Event too; it never ran, so no pod 'went away while it ran'."""
    cluster = _cluster("Always", Fate("fail-start"))
    causes = _causes(cluster)
    assert causes and causes[0] != "launcher pod gone?"


def test_a_node_failure_ending_names_the_node():
    from kvsim.migration_histories import node_failure

    history = node_failure(0)
    timeline, _ = assessed(history.capture(), "vm-0")
    first = E.endings(timeline)[0]
    assert first.cause == E.NODE_FAILURE
    row = timeline.rows[first.row or 0]
    assert row.subject_name and f"node {row.subject_name}:" in first.detail


def test_a_pool_update_ending_is_named_as_such():
    """A VirtualMachinePool's template edit: the pool deletes each outdated VMI (pool.go:1636)
    and the VM controller starts a new one from the new template."""
    from kvsim.histories import pool_update

    timeline, assessment = assessed(pool_update(0).capture(), "web-0")
    found = E.endings(timeline)
    assert found[0].cause == E.POOL_UPDATE and len(found) >= 2
    assert "Proactive update of VM default/web-0" in timeline.rows[found[0].row or 0].what
    assert not [v for v in assessment.verdicts if v.status == "violation"]
