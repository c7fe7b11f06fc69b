"""Golden timelines for every VM in every sample bundle: a new sample directory is a new test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtrace.evidence import VM
from kvtrace.model.engine import AssessedTimeline, assess
from kvtrace.render.outputs import render
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import ROOT, SAMPLES, Golden


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
        text = render("timeline", AssessedTimeline(timeline, assess(timeline)), output)
    suffix = "txt" if output == "table" else "json"
    golden.check(f"timeline/{sample}/{namespace}_{name}.{suffix}", text)


def _timeline(sample: str, namespace: str, name: str):
    with open_bundle(SAMPLES / sample) as evidence:
        return build_timeline(evidence, namespace, name)


def test_always_restart_tells_the_incident():
    timeline = _timeline("always-restart", "default", "testvm")
    logged = [r for r in timeline.rows if r.origin == "log" and r.category != "leader"]
    ids = [r.message_id for r in logged]
    assert ids == ["vm.stop", "vm.deleted", "vm.stop", "vm.start", "vm.created"]
    first_decision, created = logged[0], logged[-1]
    assert first_decision.time and created.time
    assert (created.time.at - first_decision.time.at).total_seconds() == pytest.approx(
        0.19, abs=1e-6
    )
    assert created.pos == "vm.go:1341" and first_decision.pos == "vm.go:1005"
    old, new = timeline.incarnations
    assert {r.incarnation for r in logged[:3]} == {old}
    assert created.incarnation == new
    phases = [
        (r.arg("phase"), r.time.at.strftime("%H:%M:%S"))
        for r in timeline.rows
        if r.category == "phase" and r.time
    ]
    assert phases == [
        ("Pending", "00:42:32"),
        ("Scheduling", "00:42:32"),
        ("Scheduled", "00:42:35"),
        ("Running", "00:42:36"),
    ]
    assert all(
        r.time and r.time.resolution_us == 1_000_000 for r in timeline.rows if r.category == "phase"
    )


def test_standby_replica_only_attempts_the_lease():
    timeline = _timeline("always-restart", "default", "testvm")
    by_source: dict[str, set[str]] = {}
    for row in timeline.rows:
        if row.category == "leader":
            by_source.setdefault(row.source, set()).add(str(row.message_id))
    assert sorted(map(sorted, by_source.values())) == [
        ["leader.acquired", "leader.attempt", "leader.controllers"],
        ["leader.attempt"],
    ]


def test_rerun_on_failure_succeeded_is_not_restarted():
    timeline = _timeline("rerun-on-failure-succeeded", "default", "batch-job")
    ids = [r.message_id for r in timeline.rows if r.origin == "log" and r.category != "leader"]
    assert ids[-2:] == ["vm.stop", "vm.deleted"]
    stop = [r for r in timeline.rows if r.message_id == "vm.stop"][-1]
    assert stop.arg("phase") == "Succeeded" and stop.arg("strategy") == "RerunOnFailure"
    assert "vm.start" not in ids[ids.index("vm.deleted") :]


def test_must_gather_copy_gives_the_same_log_rows_as_the_kvtrace_bundle():
    def logged(sample: str) -> list[tuple[object, ...]]:
        t = _timeline(sample, "default", "testvm")
        return [
            (r.time, r.source, r.what, r.pos, r.incarnation) for r in t.rows if r.origin == "log"
        ]

    assert logged("must-gather-always-restart") == logged("always-restart")
    notes = _timeline("must-gather-always-restart", "default", "testvm").notes
    assert any("Lease" in n for n in notes)


def test_no_sample_line_is_unparsed():
    for sample, namespace, name in CASES:
        timeline = _timeline(sample, namespace, name)
        for source in timeline.sources:
            assert source.tally.problems() == {}, (sample, source.source_id)
