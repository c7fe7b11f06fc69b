"""`kvtrace leader status|history` on every leader sample: exact output (golden) and exit code."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import SAMPLES, Golden
from tests.helpers import run_cli

# sample → (status exit code, history exit code)
EXPECTED = {
    "always-restart": (0, 0),  # healthy: two replicas, one epoch
    "leader-failover-gap": (0, 3),  # longer than the lease without a leader
    "leader-expired-holder-gone": (3, 3),  # expired, holder pod gone, leaderless to capture
    "leader-split-brain": (0, 3),  # a deposed leader acted after the standby took over
    "leader-endpoints-lock": (0, 0),  # pre-v1.3 Endpoints annotation record
    "must-gather-always-restart": (3, 0),  # no Lease in a must-gather
}
CASES = [
    (sample, command, output, codes[i])
    for sample, codes in EXPECTED.items()
    for i, command in enumerate(("status", "history"))
    for output in ("table", "json")
]


kvtrace = run_cli


def test_every_leader_sample_is_tested():
    on_disk = {p.name for p in SAMPLES.iterdir() if p.name.startswith("leader-")}
    assert on_disk <= set(EXPECTED)


@pytest.mark.parametrize(("sample", "command", "output", "exit_code"), CASES)
def test_leader_output_matches_golden(capsys, golden: Golden, sample, command, output, exit_code):
    code, out, err = kvtrace(
        capsys, "leader", command, "--bundle", str(SAMPLES / sample), "-o", output
    )
    assert (code, err) == (exit_code, "")
    golden.check(f"leader/{sample}/{command}.{'txt' if output == 'table' else 'json'}", out)


@pytest.mark.parametrize("command", ["status", "history"])
def test_yaml_is_the_json_document(capsys, command):
    bundle = str(SAMPLES / "leader-split-brain")
    _, as_json, _ = kvtrace(capsys, "leader", command, "-b", bundle, "-o", "json")
    _, as_yaml, _ = kvtrace(capsys, "leader", command, "-b", bundle, "-o", "yaml")
    assert yaml.safe_load(as_yaml) == json.loads(as_json)
    assert json.loads(as_json)["kind"] == (
        "LeaderStatus" if command == "status" else "LeaderHistory"
    )


def test_failover_gap_counts_the_work_that_waited(capsys):
    _, out, _ = kvtrace(
        capsys, "leader", "history", "-b", str(SAMPLES / "leader-failover-gap"), "-o", "json"
    )
    (gap,) = json.loads(out)["status"]["gaps"]
    assert gap["longerThanLease"] and gap["seconds"] > 15
    assert gap["actionsInGap"] == [] and gap["objectsAfter"] == ["default/web-2"]
    assert [a["what"].split()[0] for a in gap["actionsAfter"]][:2] == ["Starting", "Started"]


def test_split_brain_overlap_names_both_replicas_and_their_rows(capsys):
    _, out, _ = kvtrace(
        capsys, "leader", "history", "-b", str(SAMPLES / "leader-split-brain"), "-o", "json"
    )
    (overlap,) = json.loads(out)["status"]["overlaps"]
    assert len(set(overlap["replicas"])) == 2
    assert {a["replica"] for a in overlap["actions"]} == set(overlap["replicas"])
    assert all(a["evidence"].rsplit(":", 1)[1].isdigit() for a in overlap["actions"])


def test_expired_lease_of_a_missing_pod(capsys):
    code, out, _ = kvtrace(
        capsys, "leader", "status", "-b", str(SAMPLES / "leader-expired-holder-gone"), "-o", "json"
    )
    document = json.loads(out)["status"]
    assert code == 3 and document["state"] == "expired" and document["holderPodFound"] is False
    assert not any(r["holder"] for r in document["replicas"])


def test_must_gather_says_why_there_is_no_lease(capsys):
    code, out, _ = kvtrace(
        capsys, "leader", "status", "-b", str(SAMPLES / "must-gather-always-restart")
    )
    assert code == 3
    assert "must-gather never collects the virt-controller Lease" in out


def test_kubevirt_namespace_flag_overrides_detection(capsys):
    code, out, _ = kvtrace(
        capsys,
        "leader",
        "status",
        "-b",
        str(SAMPLES / "always-restart"),
        "--kubevirt-namespace",
        "other",
    )
    assert code == 3
    assert "Lock:         none found in other" in out


def test_a_gap_table_cell_names_five_objects_and_counts_the_rest():
    from kvtrace.render.leader_shape import _first

    names = [f"default/vm-{k:02d}" for k in range(8)]
    assert _first(names) == ", ".join(names[:5]) + " and 3 more"
    assert _first(names[:5]) == ", ".join(names[:5])
    assert _first([]) == "-"
