"""The lock record (Lease, pre-v1.3 Endpoints annotation), its health, the holder's pod
(kvtrace/leader/status.py), and the epoch/gap/overlap arithmetic
(kvtrace/model/leader_epochs.py)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kvtrace.evidence import ENDPOINTS, LEASE, POD, Evidence, KubeObject
from kvtrace.leader.history import leader_history
from kvtrace.leader.lock import ABSENT, EXPIRED, HEALTHY, LATE, judge, read_endpoints_lock
from kvtrace.leader.status import leader_status
from kvtrace.model.leader_epochs import Action, Epoch, action_overlaps, leader_gaps
from kvtrace.timeline.rows import Provenance, TimelineRow
from parsers.records import Timestamp

T0 = datetime(2026, 11, 28, tzinfo=timezone.utc)
HOLDER = "virt-controller-6f8b9c7d54-aaaaa"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def obj(kind: str, name: str, body: dict[str, Any], namespace: str = "kubevirt") -> KubeObject:
    return KubeObject(kind, namespace, name, None, None, body)


def lease(holder: str = HOLDER, renew: float = 100.0, duration: int = 15) -> KubeObject:
    spec = {
        "holderIdentity": holder,
        "acquireTime": stamp(10),
        "renewTime": stamp(renew),
        "leaseDurationSeconds": duration,
        "leaseTransitions": 2,
    }
    return obj(LEASE, "virt-controller", {"spec": spec})


def endpoints(record: object) -> KubeObject:
    value = record if isinstance(record, str) else json.dumps(record)
    meta = {"annotations": {"control-plane.alpha.kubernetes.io/leader": value}}
    return obj(ENDPOINTS, "virt-controller", {"metadata": meta})


def pod(name: str) -> KubeObject:
    meta = {"labels": {"kubevirt.io": "virt-controller"}}
    return obj(
        POD, name, {"metadata": meta, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
    )


def evidence(*objects: KubeObject) -> Evidence:
    by_kind: dict[str, list[KubeObject]] = {}
    for o in objects:
        by_kind.setdefault(o.kind, []).append(o)
    return Evidence("kvtrace", "full", by_kind, [], captured_at=at(102))


@pytest.mark.parametrize(
    ("age", "duration", "state"),
    [
        (1.9, 15, HEALTHY),
        (10.0, 15, HEALTHY),
        (12.0, 15, LATE),
        (15.5, 15, EXPIRED),
        (9, 8, EXPIRED),
    ],
)
def test_health_against_renew_deadline_and_lease_duration(age, duration, state):
    ev = evidence(lease(renew=100, duration=duration))
    status = leader_status(ev, "kubevirt", at(100 + age))
    assert (status.state, status.age) == (state, pytest.approx(age))


def test_no_lock_is_absent():
    assert judge(None, T0) == (ABSENT, None)
    status = leader_status(evidence(pod(HOLDER)), "kubevirt", at(0))
    assert status.failed and status.state == ABSENT
    assert "--kubevirt-namespace" in status.notes[0]


def test_holder_that_names_no_pod_is_flagged():
    status = leader_status(
        evidence(lease(), pod("virt-controller-6f8b9c7d54-bbbbb")), "kubevirt", at(102)
    )
    assert status.state == HEALTHY and status.holder_missing and status.failed


def test_holder_is_not_judged_missing_without_pod_objects():
    status = leader_status(evidence(lease()), "kubevirt", at(102))
    assert not status.holder_missing and not status.failed
    assert any("no Pod objects" in n for n in status.notes)


def test_endpoints_annotation_record_of_older_releases():
    record = {
        "holderIdentity": HOLDER,
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-11-28T00:00:10Z",
        "renewTime": "2026-11-28T00:01:38Z",
        "leaderTransitions": 4,
    }
    status = leader_status(evidence(endpoints(record), pod(HOLDER)), "kubevirt", at(100))
    assert status.lock is not None and status.lock.kind == ENDPOINTS
    assert (status.lock.transitions, status.state, status.age) == (4, HEALTHY, 2.0)
    assert status.lock.renew is not None and status.lock.renew.resolution_us == 1_000_000
    assert status.replicas[0].holder


def test_lease_wins_over_the_endpoints_lock_of_v1_0_to_v1_2():
    record = {"holderIdentity": "old", "renewTime": "2026-11-28T00:00:01Z"}
    status = leader_status(evidence(lease(), endpoints(record), pod(HOLDER)), "kubevirt", at(102))
    assert status.lock is not None and status.lock.kind == LEASE
    assert status.other_lock is not None and status.other_lock.holder == "old"
    [note] = [n for n in status.notes if "Endpoints kubevirt/virt-controller" in n]
    assert f"names old, the Lease {HOLDER}" in note and "unknown leader" in note


@pytest.mark.parametrize(
    "release, kinds",
    [("v0.59.0", {"Endpoints"}), ("v1.1.1", {"Endpoints", "Lease"}), ("v1.3.1", {"Lease"})],
)
def test_each_release_keeps_its_leader_lock_and_status_reads_it(tmp_path, release, kinds):
    """leaderelectionconfig/config.go:42: Endpoints before v1.0, EndpointsLeases (client-go's
    MultiLock: both, from one record) v1.0–v1.2, the Lease from v1.3. Under the MultiLock a
    renewal keeps the acquire time read from the Endpoints annotation, whole seconds."""
    from kvsim.bundle import write_bundle
    from kvsim.histories import legitimate
    from kvtrace.sources.bundle import open_bundle

    capture = legitimate(3, release=release).capture()
    assert {k for k in ("Endpoints", "Lease") if capture.objects.get(k)} == kinds
    events = {
        e["involvedObject"]["kind"]
        for e in capture.objects["Event"]
        if e["reason"] == "LeaderElection"
    }
    assert events == kinds
    with open_bundle(write_bundle(capture, tmp_path / "b")) as evidence:
        status = leader_status(evidence, "kubevirt", at(0))
    assert status.lock is not None and status.lock.holder
    assert status.lock.kind == (LEASE if "Lease" in kinds else ENDPOINTS)
    assert (status.other_lock is not None) is (len(kinds) == 2)
    if len(kinds) == 2:
        assert status.other_lock is not None and status.other_lock.holder == status.lock.holder
        assert any("names the same holder" in n for n in status.notes)
        [lease_obj] = capture.objects["Lease"]
        assert lease_obj["spec"]["acquireTime"].endswith(".000000Z")


@pytest.mark.parametrize("value", ["not json", "[]", ""])
def test_unreadable_annotation_is_no_lock(value):
    assert read_endpoints_lock(evidence(endpoints(value)), "kubevirt") is None


def test_expired_lease_without_logs_gives_an_ended_epoch_and_a_gap_to_capture():
    history = leader_history(evidence(lease(renew=50)), "kubevirt")
    (epoch,) = history.epochs
    assert (epoch.start, epoch.end, epoch.ended_by) == (at(10), at(65), "expired")
    (gap,) = history.gaps
    assert (gap.start, gap.end, gap.before) == (at(65), at(102), None) and gap.too_long


def action(seconds: float, replica: str) -> Action:
    row = TimelineRow(
        time=Timestamp(at(seconds)),
        origin="log",
        source=replica,
        category="decision",
        what="Starting VM due to runStrategy: Always",
        evidence=Provenance("log", f"{replica}.log", line=int(seconds)),
    )
    return Action(row, "default/vm1")


def test_a_normal_failover_gap_is_not_too_long():
    a, b = Epoch("a", at(0), at(100), "leader.renew-failed"), Epoch("b", at(108))
    (gap,) = leader_gaps([a, b], [action(108.5, "b"), action(200, "b")])
    assert gap.seconds == 8 and not gap.too_long
    assert [x.at for x in gap.caught_up] == [at(108.5)]


def test_interleaved_actions_of_two_replicas_overlap_and_turns_do_not():
    epochs = [Epoch("a", at(0), at(30)), Epoch("b", at(20))]
    turns = [action(5, "a"), action(10, "a"), action(40, "b")]
    assert action_overlaps(turns, epochs) == []
    (overlap,) = action_overlaps([*turns, action(25, "b"), action(29, "a")], epochs)
    # b acquired the lease from a at 20 s; a's action at 29 s is a deposed leader's: the
    # overlap runs from b's acquisition to a's last action, with both replicas' actions in it
    assert overlap.replicas == ("a", "b") and (overlap.start, overlap.end) == (at(20), at(29))
    assert [(x.replica, x.at) for x in overlap.actions] == [("b", at(25)), ("a", at(29))]
    assert overlap.leading == {"a": False, "b": True}
