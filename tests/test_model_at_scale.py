"""The model on thousands of simulated VM histories: no false violation, every injected fault.

``bench/generate_log.py`` writes, for each VM, only what v1.9.0's controller could have logged for
its runStrategy and VMI state, over two leaders and a failover, and injects stale-cache create
collisions on purpose. ``check -A`` must report exactly the injected VMs, with KV-EX-01 alone,
from the bundle (objects and logs) and from the logs alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import run_cli

GENERATOR = ROOT / "bench" / "generate_log.py"


def generate(out: Path, seed: int) -> list[str]:
    faults = out.parent / f"faults-{seed}.txt"
    subprocess.run(
        [
            sys.executable,
            str(GENERATOR),
            *("--size", "3M", "--vms", "300", "--fault-every", "250", "--seed", str(seed)),
            *("--out", str(out), "--faults-file", str(faults)),
        ],
        check=True,
        capture_output=True,
    )
    return sorted(set(faults.read_text().split()))


def violations(capsys: pytest.CaptureFixture[str], *evidence: str) -> dict[str, set[str]]:
    code, out, err = run_cli(capsys, "check", "-A", *evidence, "-o", "json")
    assert code in (0, 3), err
    found: dict[str, set[str]] = {}
    for vm in json.loads(out)["items"]:
        rules = {f["rule"] for f in vm["findings"] if f["status"] == "violation"}
        if rules:
            found[f"{vm['namespace']}/{vm['name']}"] = rules
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_check_finds_exactly_the_injected_faults(tmp_path, capsys, seed):
    bundle = tmp_path / "bundle"
    injected = generate(bundle, seed)
    assert injected, "the generator injected no fault: raise --fault-every's rate"
    from_bundle = violations(capsys, "--bundle", str(bundle))
    assert sorted(from_bundle) == injected
    assert set().union(*from_bundle.values()) == {"KV-EX-01"}
    logs = [arg for path in sorted(bundle.rglob("*.log")) for arg in ("--log", str(path))]
    assert violations(capsys, *logs) == from_bundle
