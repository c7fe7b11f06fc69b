"""`kvtrace check`: selection, outputs, exit codes, and agreement with `kvtrace timeline`."""

from __future__ import annotations

import csv
import io
import json

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.model.engine import assess
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from tests.conftest import SAMPLES
from tests.helpers import run_cli

BUNDLE = str(SAMPLES / "always-restart")


kvtrace = run_cli


def test_clean_bundle_exits_zero_with_a_row_per_vm(capsys):
    code, out, _ = kvtrace(capsys, "check", "-A", "--bundle", BUNDLE, "-o", "wide")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["VM", "RUNSTRATEGY"]
    assert [line.split()[0] for line in lines[1:3]] == ["default/other-vm", "default/testvm"]
    assert lines[-1].startswith("2 VMs in all namespaces") and "0 violations" in lines[-1]


@pytest.mark.parametrize("output", ["json", "yaml", "csv"])
def test_structured_outputs(capsys, output):
    import yaml

    code, out, _ = kvtrace(capsys, "check", "-A", "--bundle", BUNDLE, "-o", output)
    assert code == 0
    if output == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert {r["name"] for r in rows} == {"testvm", "other-vm"}
        return
    doc = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert doc["kind"] == "CheckReport"
    testvm = next(i for i in doc["items"] if i["name"] == "testvm")
    assert (
        testvm["runStrategy"] == "Always"
        and testvm["incarnations"] == 2
        and testvm["restarts"] == 1
    )
    assert testvm["creationToRunningP50"] == _creation_to_running("testvm")
    assert testvm["findings"] == []  # every step explained: the VMI that crashed had run


def _creation_to_running(name: str) -> float:
    """From the sample's VMI object: creationTimestamp to the Running transition stamp."""
    import yaml

    from parsers.timestamps import parse_time

    text = (SAMPLES / "always-restart" / "objects" / "virtualmachineinstances.yaml").read_text()
    items = yaml.safe_load(text)["items"]
    vmi = next(v for v in items if v["metadata"]["name"] == name)
    created = parse_time(vmi["metadata"]["creationTimestamp"])
    stamps = vmi["status"]["phaseTransitionTimestamps"]
    running = parse_time(
        next(s["phaseTransitionTimestamp"] for s in stamps if s["phase"] == "Running")
    )
    assert created and running
    return (running.at - created.at).total_seconds()


def test_one_vm_and_namespace_selection(capsys):
    code, out, _ = kvtrace(capsys, "check", "default/testvm", "--bundle", BUNDLE, "-o", "json")
    assert code == 0 and [i["name"] for i in json.loads(out)["items"]] == ["testvm"]
    code, _, err = kvtrace(capsys, "check", "-n", "nowhere", "--bundle", BUNDLE)
    assert code == 1
    assert (
        err.strip()
        == f"error: no VMs found for namespace nowhere in {BUNDLE}; namespaces with VMs: default (use -n NS or -A)"
    )


def test_a_bare_vm_name_takes_the_namespace_flag_as_kubectl_does(capsys):
    code, out, _ = kvtrace(capsys, "check", "-n", "default", "testvm", "--bundle", BUNDLE)
    assert code == 0 and "testvm" in out
    code, _, err = kvtrace(capsys, "check", "-n", "prod", "testvm", "--bundle", BUNDLE)
    assert code == 1 and "VirtualMachine prod/testvm" in err
    code, _, err = kvtrace(capsys, "check", "-n", "prod", "default/testvm", "--bundle", BUNDLE)
    assert code == 2 and "not several" in err


def test_conflicting_selection_is_a_usage_error(capsys):
    code, _, err = kvtrace(capsys, "check", "default/testvm", "-A", "--bundle", BUNDLE)
    assert code == 2 and "not several" in err


def test_violations_exit_three_and_fail_on_filters_by_severity(capsys, tmp_path):
    import shutil

    import yaml

    bundle = tmp_path / "b"
    shutil.copytree(BUNDLE, bundle)
    vmis = bundle / "objects" / "virtualmachineinstances.yaml"
    doc = yaml.safe_load(vmis.read_text())
    doc["items"][0]["status"]["virtualMachineRevisionName"] = "revision-start-vm-wrong-1"
    vmis.write_text(yaml.safe_dump(doc))
    code, out, _ = kvtrace(capsys, "check", "-A", "--bundle", str(bundle))
    assert code == 3
    assert (
        "✗ KV-SV-01 (error) default/testvm: status.virtualMachineRevisionName is 'revision-start-vm-wrong-1'"
        in out
    )
    assert (
        "    at VirtualMachineInstance/default/testvm metadata.creationTimestamp (VMI created)"
        in out
    )


# Samples whose lines name their VM in several ways: by the object they are logged with, by
# the key in the text, and (the migration, node and pool controllers) only in the text.
ROUTED_SAMPLES = (
    *("always-restart", "live-migration", "drain-one-failed", "node-failure-restart"),
    *("pool-proactive-update", "snapshot-restore"),
)


@pytest.mark.parametrize("sample", ROUTED_SAMPLES)
def test_check_and_timeline_give_the_same_verdicts(sample):
    """The bulk reader (check) and the raw-byte scan (timeline) attribute the same lines."""
    with open_bundle(SAMPLES / sample) as evidence:
        report = run_check(evidence, Selection(None))
        for vm in report.vms:
            single = build_timeline(evidence, *vm.key)
            assert [r.what for r in vm.timeline.rows] == [r.what for r in single.rows]
            assert vm.assessment.verdicts == assess(single, version=report.version).verdicts


@pytest.mark.parametrize("sample", ROUTED_SAMPLES)
def test_partitioned_check_equals_the_in_process_check(monkeypatch, sample):
    """Large log sets are split into per-VM buckets checked by worker processes; the result must
    not depend on that."""
    import kvtrace.check.run as check

    def summary(report):
        def findings(vm):
            return [v for v in vm.assessment.verdicts if v.status != "explained"]

        return [
            (vm.key, vm.strategy, vm.incarnations, vm.assessment.counts(), findings(vm), vm.refs)
            for vm in report.vms
        ], [(r.source_id, r.lines, dict(r.tally), r.rows) for r in report.reports]

    with open_bundle(SAMPLES / sample) as evidence:
        here = summary(run_check(evidence, Selection(None)))
        monkeypatch.setattr(check, "PARTITION_MIN_BYTES", 1)
        split = summary(run_check(evidence, Selection(None)))
    assert split == here


def test_table_lists_at_most_fifty_violations_and_says_how_many_more():
    from kvtrace.check.report import CheckReport, VMCheck
    from kvtrace.model.engine import Assessment
    from kvtrace.model.verdicts import Verdict
    from kvtrace.render.check_shape import violation_lines

    verdicts = [Verdict("KV-RC-03", "error", "violation", f"delete #{i}", ()) for i in range(60)]
    vm = VMCheck(("default", "vm"), "Always", 1, Assessment(verdicts))
    report = CheckReport(Selection(None), None, [vm], [], None)  # type: ignore[arg-type]
    lines = violation_lines(report)
    assert len(lines) == 51
    assert lines[-1] == "… and 10 more violations (-o json or -o html lists them all)"


def test_a_partition_reads_an_over_long_line_as_its_head(tmp_path):
    """check's byte ranges read lines in bounded memory (parsers.lines): a line past the cap is
    its head, the next line and the range ends are where they were."""
    from kvtrace.check.partition import Range, _lines
    from parsers.lines import MAX_LINE

    path = tmp_path / "big.log"
    path.write_bytes(b"first\n" + b"\0" * (3 * MAX_LINE) + b"\nlast\n")
    with path.open("rb") as handle:
        lines = list(_lines(handle, Range(0, 0, 0, None)))
    assert [len(x) for x in lines] == [5, MAX_LINE + 1, 4] and lines[-1] == b"last"
    with path.open("rb") as handle:  # a range that starts inside the long line skips it
        assert list(_lines(handle, Range(1, 0, 10, None))) == [b"last"]


def test_a_vms_repeats_of_one_finding_are_one_entry_so_other_vms_stay_listed():
    """A VM whose stale cache made 60 duplicate creates must not push another VM's violation
    past the terminal's 50 entries: the repeats are one entry, with their count and the
    evidence of the first and the last."""
    from kvtrace.check.report import CheckReport, VMCheck
    from kvtrace.model.engine import Assessment
    from kvtrace.model.verdicts import Verdict
    from kvtrace.render.check_shape import violation_lines

    why = "the VMI create collided with a VMI this VM had created"
    repeats = [Verdict("KV-EX-01", "error", "violation", why, (0, 2 * i + 1)) for i in range(60)]
    noisy = VMCheck(("default", "a"), "Always", 1, Assessment(repeats))
    noisy.refs = {0: "log:1 (Started)", 1: "log:2 (Failed)", 119: "log:120 (Failed)"}
    other = VMCheck(
        ("default", "b"), "Always", 1, Assessment([Verdict("KV-SV-01", "error", "violation", "x")])
    )
    report = CheckReport(Selection(None), None, [noisy, other], [], None)  # type: ignore[arg-type]
    assert violation_lines(report) == [
        f"✗ KV-EX-01 (error) default/a: {why} (60 times: the first, then the last)",
        "    at log:1 (Started)",
        "    at log:2 (Failed)",
        "    … 58 more of the same in between",
        "    at log:120 (Failed)",
        "✗ KV-SV-01 (error) default/b: x",
    ]
