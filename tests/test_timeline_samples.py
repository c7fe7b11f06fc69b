"""Golden timelines for every VM in every sample bundle: a new sample directory is a new test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtrace.evidence import VM
from kvtrace.model.engine import AssessedTimeline, assess
from kvtrace.model.version import detect
from kvtrace.render.outputs import render
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from kvtrace.timeline.rows import TimelineRow
from tests.conftest import ROOT, SAMPLES, Golden
from tests.sample_names import ALWAYS_RESTART_STORY


def _sample_vms() -> list[tuple[str, str, str]]:
    cases = []
    for sample in sorted(p for p in SAMPLES.iterdir() if (p / "README.md").exists()):
        with open_bundle(sample) as evidence:
            for vm in sorted(evidence.of_kind(VM), key=lambda o: (o.namespace or "", o.name)):
                cases.append((sample.name, vm.namespace or "default", vm.name))
    return cases


CASES = _sample_vms()


def test_every_sample_has_a_vm():
    samples = {p.name for p in SAMPLES.iterdir() if (p / "README.md").exists()}
    assert samples == {c[0] for c in CASES}


@pytest.mark.parametrize(("sample", "namespace", "name"), CASES)
@pytest.mark.parametrize("output", ["table", "json"])
def test_sample_timeline_matches_golden(
    sample, namespace, name, output, golden: Golden, monkeypatch
):
    monkeypatch.chdir(ROOT)  # the evidence origin is the path given: keep it relative
    with open_bundle(Path("sample-logs") / sample) as evidence:
        timeline = build_timeline(evidence, namespace, name)
        text = render(
            "timeline",
            AssessedTimeline(timeline, assess(timeline, version=detect(evidence))),
            output,
        )
    suffix = "txt" if output == "table" else "json"
    golden.check(f"timeline/{sample}/{namespace}_{name}.{suffix}", text)


def _timeline(sample: str, namespace: str, name: str):
    with open_bundle(SAMPLES / sample) as evidence:
        return build_timeline(evidence, namespace, name)


def _story(rows: list[TimelineRow]) -> list[str]:
    """The VM controller's decisions and API calls, each run of repeats told once."""
    told = [
        str(r.message_id)
        for r in rows
        if r.origin == "log" and r.message_id in ("vm.start", "vm.created", "vm.stop", "vm.deleted")
    ]
    return [m for i, m in enumerate(told) if i == 0 or told[i - 1] != m]


def test_always_restart_tells_the_incident():
    timeline = _timeline("always-restart", "default", "testvm")
    assert _story(timeline.rows) == ALWAYS_RESTART_STORY
    by_id = {r.message_id: r for r in reversed(timeline.rows) if r.origin == "log"}
    assert (by_id["vm.start"].pos, by_id["vm.created"].pos) == ("vm.go:1032", "vm.go:1341")
    assert (by_id["vm.stop"].pos, by_id["vm.deleted"].pos) == ("vm.go:1005", "vm.go:1685")
    assert by_id["vm.stop"].arg("phase") == "Failed"
    old, new = timeline.incarnations
    deleted = [r for r in timeline.rows if r.message_id == "vm.deleted"]
    created = [r for r in timeline.rows if r.message_id == "vm.created"]
    assert {r.incarnation for r in deleted} == {old}
    assert [r.incarnation for r in created] == [old, new]
    assert deleted[0].time and created[1].time  # restarted as soon as the old VMI was gone
    assert 0 < (created[1].time.at - deleted[0].time.at).total_seconds() < 5
    phases = [r.arg("phase") for r in timeline.rows if r.category == "phase"]
    assert phases == ["Pending", "Scheduling", "Scheduled", "Running"]  # only the new VMI is left
    assert all(
        r.time and r.time.resolution_us == 1_000_000 for r in timeline.rows if r.category == "phase"
    )


def test_standby_replica_only_attempts_the_lease():
    timeline = _timeline("always-restart", "default", "testvm")
    by_source: dict[str, set[str]] = {}
    for row in timeline.rows:
        if row.category == "leader":
            by_source.setdefault(row.source, set()).add(str(row.message_id))
    leader, standby = sorted(by_source.values(), key=len, reverse=True)
    assert standby == {"leader.attempt"}
    assert {"leader.attempt", "leader.acquired", "leader.controllers"} <= leader


def test_rerun_on_failure_succeeded_is_not_restarted():
    timeline = _timeline("rerun-on-failure-succeeded", "default", "batch-job")
    assert _story(timeline.rows)[-2:] == ["vm.stop", "vm.deleted"]
    stop = [r for r in timeline.rows if r.message_id == "vm.stop"][-1]
    assert stop.arg("phase") == "Succeeded" and stop.arg("strategy") == "RerunOnFailure"
    assert _story(timeline.rows).count("vm.start") == 1


def test_no_sample_line_is_unparsed():
    for sample, namespace, name in CASES:
        timeline = _timeline(sample, namespace, name)
        for source in timeline.sources:
            assert source.tally.problems() == {}, (sample, source.source_id)
