"""The Perfetto / Chrome trace export: a structure both viewers accept, for every sample."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.engine import assess
from kvtrace.model.version import detect
from kvtrace.render.check_shape import with_timelines
from kvtrace.render.perfetto import render_perfetto
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import SAMPLES

BUNDLES = sorted(p.name for p in SAMPLES.iterdir() if (p / "README.md").exists())
REQUIRED = {
    "M": {"pid", "tid", "name", "args"},
    "B": {"pid", "tid", "ts", "name"},
    "E": {"pid", "tid", "ts"},
    "X": {"pid", "tid", "ts", "dur", "name"},
    "i": {"pid", "tid", "ts", "name", "s", "args"},
    "b": {"pid", "tid", "ts", "name", "cat", "id"},
    "e": {"pid", "tid", "ts", "name", "cat", "id"},
    "s": {"pid", "tid", "ts", "name", "cat", "id"},
    "f": {"pid", "tid", "ts", "name", "cat", "id", "bp"},
}


def _bundle_trace(bundle: str) -> dict:
    with open_bundle(SAMPLES / bundle) as evidence:
        report = run_check(evidence, Selection(None))
        text = render_perfetto([(t, vm.assessment) for vm, t in with_timelines(report)])
    return json.loads(text)


@pytest.fixture(scope="module", params=BUNDLES)
def trace(request) -> dict:
    return _bundle_trace(request.param)


def _events(trace: dict, *phases: str) -> list[dict]:
    return [e for e in trace["traceEvents"] if e["ph"] in phases]


def test_every_event_has_its_required_fields(trace):
    for event in trace["traceEvents"]:
        missing = REQUIRED[event["ph"]] - set(event)
        assert not missing, (event, missing)
        if "ts" in event:
            assert isinstance(event["ts"], int) and event["ts"] > 1_500_000_000_000_000  # µs
    assert all(e["s"] == "t" for e in _events(trace, "i"))
    assert all(e["bp"] == "e" for e in _events(trace, "f"))
    assert all(e["dur"] >= 0 for e in _events(trace, "X"))


def test_processes_are_vms_and_threads_are_named(trace):
    named = {(e["pid"], e["tid"]) for e in _events(trace, "M") if e["name"] == "thread_name"}
    processes = {
        e["pid"]: e["args"]["name"] for e in _events(trace, "M") if e["name"] == "process_name"
    }
    assert processes and all("/" in name for name in processes.values())
    used = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] != "M"}
    assert used <= named


def _track(event: dict) -> tuple:
    if event["ph"] in "be":
        return (event["pid"], event["cat"], event["id"])
    return (event["pid"], event["tid"])


def test_timestamps_never_go_back_on_a_track(trace):
    last: dict[tuple, int] = {}
    for event in _events(trace, "B", "E", "X", "i", "b", "e", "s", "f"):
        key = _track(event)
        assert event["ts"] >= last.get(key, 0), event
        last[key] = event["ts"]


def _intervals(trace: dict) -> dict[tuple, list[tuple[int, int, str]]]:
    """Complete and B/E slices per thread; asserts every E closes the B it should."""
    out: dict[tuple, list[tuple[int, int, str]]] = defaultdict(list)
    open_: dict[tuple, list[dict]] = defaultdict(list)
    for event in _events(trace, "B", "E", "X"):
        key = (event["pid"], event["tid"])
        if event["ph"] == "B":
            open_[key].append(event)
        elif event["ph"] == "E":
            begun = open_[key].pop()
            assert begun["name"] == event["name"]
            out[key].append((begun["ts"], event["ts"], begun["name"]))
        else:
            out[key].append((event["ts"], event["ts"] + event["dur"], event["name"]))
    assert not any(open_.values()), "B without E"
    return out


def test_thread_slices_nest(trace):
    for key, slices in _intervals(trace).items():
        stack: list[tuple[int, int, str]] = []
        for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1][1], (key, name, stack[-1])
            stack.append((start, end, name))


def test_async_phases_pair_per_vmi(trace):
    open_: dict[tuple, list[str]] = defaultdict(list)
    for event in _events(trace, "b", "e"):
        key = _track(event)
        if event["ph"] == "b":
            assert not open_[key], "phases of one VMI never overlap"
            open_[key].append(event["name"])
        else:
            assert open_[key].pop() == event["name"]
    assert not any(open_.values())


def test_flow_arrows_pair_and_bind_to_slices(trace):
    ends: dict[int, dict[str, dict]] = defaultdict(dict)
    for event in _events(trace, "s", "f"):
        assert event["ph"] not in ends[event["id"]]
        ends[event["id"]][event["ph"]] = event
    slices = _intervals(trace)
    for flow in ends.values():
        assert set(flow) == {"s", "f"}
        for event in flow.values():
            key = (event["pid"], event["tid"])
            assert any(a <= event["ts"] <= b for a, b, _ in slices[key]), event


def test_create_and_delete_arrows_of_the_fault_sample():
    trace = _bundle_trace("fault-delete-create-one-reconcile")
    names = sorted(e["name"] for e in _events(trace, "s"))
    assert names == ["create → VMI", "delete → VMI gone"]
    violated = [
        e
        for e in _events(trace, "X")
        if any("✗ KV-RC-01" in v for v in e["args"].get("verdicts", []))
    ]
    assert {e["args"]["messageID"] for e in violated} == {"vm.deleted"}


def test_log_lines_are_instants_with_their_fields():
    trace = _bundle_trace("always-restart")
    stop = next(e for e in _events(trace, "i") if e["args"].get("messageID") == "vm.stop")
    assert stop["args"]["evidence"].endswith(".log:" + stop["args"]["evidence"].rsplit(":", 1)[1])
    assert stop["args"]["pos"] == "vm.go:1005"
    assert stop["args"]["arg.phase"] == "Failed"


def test_export_is_deterministic():
    texts = []
    for _ in range(2):
        with open_bundle(SAMPLES / "fault-non-leader-action") as evidence:
            timeline = build_timeline(evidence, "default", "batch-worker")
            texts.append(render_perfetto([(timeline, assess(timeline, version=detect(evidence)))]))
    assert texts[0] == texts[1]
