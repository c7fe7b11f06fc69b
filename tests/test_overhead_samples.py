"""The verify-overhead samples: every clean case verifies clean; every mutated copy fails its check."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kvtrace.overhead.report import verify_pod
from kvtrace.overhead.settings import SettingFlags
from tests.conftest import SAMPLES
from tests.test_overhead_checks import load

OVERHEAD = SAMPLES / "overhead"
CLEAN = sorted(p.name.removesuffix("-pod.yaml") for p in OVERHEAD.glob("*-pod.yaml"))
MUTATED = json.loads((OVERHEAD / "mutated" / "index.json").read_text())


def _kubevirt(case: str):
    return load(OVERHEAD / ("kubevirt-ratio.yaml" if case == "vm-ratio" else "kubevirt.yaml"))


def test_the_cases_the_issue_asks_for_exist():
    wanted = {
        "vm-2cpu-2gi",
        "vm-8cpu-8gi",
        "vm-guest-only",
        "vm-dedicated",
        "vm-qos",
        "vm-passt",
        "vm-hugepages",
    }
    assert wanted <= set(CLEAN)
    assert {p.name for p in (OVERHEAD / "mutated").glob("*.yaml")} == set(MUTATED)


@pytest.mark.parametrize("case", CLEAN)
def test_clean_sample_verifies_clean(case):
    pod, vmi = load(OVERHEAD / f"{case}-pod.yaml"), load(OVERHEAD / f"{case}-vmi.yaml")
    report = verify_pod(pod, vmi, _kubevirt(case), SettingFlags())
    assert report.problems == []
    assert [c.key for c in report.checks if c.ok is not True] == []
    annotation = int(pod["metadata"]["annotations"]["kubevirt.io/memory-overhead-bytes"])
    assert report.overhead is not None and report.overhead.total == annotation


@pytest.mark.parametrize("file", sorted(MUTATED))
def test_mutated_sample_fails_exactly_its_check(file):
    row = MUTATED[file]
    case = row["case"]
    pod = (
        load(OVERHEAD / "mutated" / file)
        if file.endswith("-pod.yaml")
        else load(OVERHEAD / f"{case}-pod.yaml")
    )
    vmi = (
        load(OVERHEAD / "mutated" / file)
        if file.endswith("-vmi.yaml")
        else load(OVERHEAD / f"{case}-vmi.yaml")
    )
    report = verify_pod(pod, vmi, _kubevirt(case), SettingFlags())
    assert [c.key for c in report.checks if c.ok is not True] == [row["fails"]]


def test_sample_files_are_current():
    script = OVERHEAD / "make_overhead_samples.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
