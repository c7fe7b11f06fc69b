"""The model on bench data: one history kvsim ran for hundreds of VMs, with faults in a few.

``bench/generate_log.py`` simulates VMs of every run strategy in four namespaces, their users'
starts, stops, restarts, edits, deletes and re-creates, guests that crash, shut down or crash-loop,
webhook rejections and a leader crash with a failover (in shards merged into one cluster's
history, bench/shards.py), and injects faults into about one VM in ``--fault-every``.
``check -A`` must report violations on exactly the injected VMs, each with exactly the rules its
fault trips, from the bundle (objects and logs).

From the logs alone (``--log`` per file) only some faults can be decided: a duplicate create
(KV-EX-01) and, at verbosity 4, a delete and create in one reconcile (KV-RC-01) are in the lines;
a VMI naming another generation's revision (KV-SV-01), a phase taken back (KV-PH-01) and a
missing VMI finalizer (KV-SV-02) are only in the objects. There the comparison is restricted to
the rules the logs decide: no other violation anywhere, and those on exactly their VMs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import run_cli
from tests.test_model_simulated import EXPECTED

GENERATOR = ROOT / "bench" / "generate_log.py"
DECIDED_BY_LOGS = {"KV-EX-01", "KV-RC-01"}
# (seed, logVerbosity.virtController): verbosity 4 adds the delete-and-create fault
RUNS = [(1, 2), (2, 2), (3, 4)]

Violations = dict[str, set[str]]


def generate(out: Path, seed: int, verbosity: int) -> tuple[Violations, set[str]]:
    """The injected VMs with their rules, and the faults injected."""
    faults = out.parent / f"faults-{seed}.txt"
    subprocess.run(
        [
            sys.executable,
            str(GENERATOR),
            *("--size", "1M", "--vms", "240", "--fault-every", "20", "--seed", str(seed)),
            *("--verbosity", str(verbosity), "--out", str(out), "--faults-file", str(faults)),
        ],
        check=True,
        capture_output=True,
    )
    injected: Violations = {}
    kinds = set()
    for row in faults.read_text().splitlines():
        vm, rules, fault = row.split()
        assert EXPECTED[fault] == (rules.split(",")[0], "violation"), row
        injected[vm] = set(rules.split(","))
        kinds.add(fault)
    return injected, kinds


def violations(capsys: pytest.CaptureFixture[str], *evidence: str) -> Violations:
    code, out, err = run_cli(capsys, "check", "-A", *evidence, "-o", "json")
    assert code in (0, 3), err
    found: Violations = {}
    for vm in json.loads(out)["items"]:
        rules = {f["rule"] for f in vm["findings"] if f["status"] == "violation"}
        if rules:
            found[f"{vm['namespace']}/{vm['name']}"] = rules
    return found


@pytest.mark.parametrize(("seed", "verbosity"), RUNS)
def test_check_finds_exactly_the_injected_faults(tmp_path, capsys, seed, verbosity):
    bundle = tmp_path / "bundle"
    injected, kinds = generate(bundle, seed, verbosity)
    assert len(kinds) >= 3, f"too few kinds of fault injected: {kinds}"
    assert violations(capsys, "--bundle", str(bundle)) == injected
    logs = [arg for path in sorted(bundle.rglob("*.log")) for arg in ("--log", str(path))]
    from_logs = {vm: rules & DECIDED_BY_LOGS for vm, rules in injected.items()}
    assert violations(capsys, *logs) == {vm: rules for vm, rules in from_logs.items() if rules}
