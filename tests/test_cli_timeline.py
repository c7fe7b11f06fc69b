"""`kvtrace timeline` from the command line: outputs, errors, exit codes, input order."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.sample_names import ALWAYS_RESTART_STORY

BUNDLE = str(SAMPLES / "always-restart")
LOGS = sorted((SAMPLES / "always-restart" / "logs").rglob("*.log"))


kvtrace = run_cli


def test_table_has_the_columns_and_a_summary(capsys):
    code, out, err = kvtrace(capsys, "timeline", "default/testvm", "--bundle", BUNDLE)
    assert code == 0 and err == ""
    header = out.splitlines()[0].split()
    assert header[:4] == ["#", "TIME", "(UTC)", "ΔT"] and header[-2:] == ["POS", "VERDICT"]
    assert "Started VM by creating the new virtual machine instance testvm" in out
    assert re.search(r"VMI incarnations: [0-9a-f]{8}, [0-9a-f]{8} ·", out)


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_structured_output_is_a_kubectl_shaped_timeline(capsys, output):
    code, out, _ = kvtrace(capsys, "timeline", "default/testvm", "--bundle", BUNDLE, "-o", output)
    doc = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert code == 0
    assert doc["apiVersion"] == "kvtrace.io/v1alpha1" and doc["kind"] == "Timeline"
    assert doc["metadata"]["name"] == "testvm" and doc["metadata"]["namespace"] == "default"
    assert [i["pos"] for i in doc["items"] if i["category"] == "api"] == [
        "vm.go:1341",  # the first VMI
        "vm.go:1685",  # deleted once it Failed
        "vm.go:1341",  # its successor
    ]
    assert {i["resolution"] for i in doc["items"] if i["category"] == "phase"} == {"1s"}


def test_all_outputs_hold_the_same_rows(capsys):
    counts = {}
    for output in ("table", "wide", "json", "csv"):
        _, out, _ = kvtrace(capsys, "timeline", "default/testvm", "--bundle", BUNDLE, "-o", output)
        if output == "json":
            counts[output] = len(json.loads(out)["items"])
        elif output == "csv":
            counts[output] = len(list(csv.DictReader(io.StringIO(out))))
        else:
            counts[output] = len(out.split("\n\n")[0].splitlines()) - 1
    assert len(set(counts.values())) == 1, counts


def test_wide_shows_evidence_file_and_line(capsys):
    _, out, _ = kvtrace(capsys, "timeline", "default/testvm", "--bundle", BUNDLE, "-o", "wide")
    line = next(x for x in out.splitlines() if "Dispatching delete event" in x)
    assert "virt-controller/current.log:" in line


def test_unknown_vm_lists_close_names(capsys):
    code, out, err = kvtrace(capsys, "timeline", "default/testvn", "--bundle", BUNDLE)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"error: no VirtualMachine default/testvn in {BUNDLE} (looked in VM/VMI objects and 2 log source(s))",
        "close names: default/testvm",
        "VMs that exist: default/other-vm, default/testvm",
    ]


def test_no_evidence_is_a_usage_error(capsys):
    code, _, err = kvtrace(capsys, "timeline", "default/testvm")
    assert code == 2 and err.startswith("error: no evidence given: use --bundle PATH")


def test_bad_vm_key_is_a_usage_error(capsys):
    code, _, err = kvtrace(capsys, "timeline", "a/b/c", "--bundle", BUNDLE)
    assert (code, err) == (
        2,
        "error: cannot read 'a/b/c' as NAMESPACE/NAME (for example default/testvm)\n",
    )


def test_bad_since_is_a_usage_error(capsys):
    code, _, err = kvtrace(
        capsys, "timeline", "default/testvm", "--bundle", BUNDLE, "--since", "yesterday"
    )
    assert code == 2 and "cannot read time 'yesterday'" in err


def test_missing_log_file_names_the_path(capsys):
    code, _, err = kvtrace(capsys, "timeline", "default/testvm", "--log", "/nonexistent/x.log")
    assert code == 1 and "/nonexistent/x.log" in err


def test_since_and_until_restrict_the_window(capsys):
    args = ["timeline", "default/testvm", "--bundle", BUNDLE, "-o", "json"]
    _, out, _ = kvtrace(capsys, *args)
    everything = json.loads(out)["items"]
    deleted = next(i["time"] for i in everything if i["messageID"] == "vm.deleted")
    since, until = deleted[:19] + "Z", deleted[:17] + f"{int(deleted[17:19]) + 2:02d}Z"
    _, out, _ = kvtrace(capsys, *args, "--since", since, "--until", until)
    times = [i["time"] for i in json.loads(out)["items"]]
    assert deleted in times and len(times) < len(everything)
    instants = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in times]
    window = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (since, until)]
    assert window[0] <= min(instants) and max(instants) <= window[1]
    _, out, _ = kvtrace(capsys, *args, "--since", "3m")  # back from the capture time 00:44:51
    shown = json.loads(out)["items"]
    three_minutes_before_capture = datetime.fromisoformat("2026-11-28T00:41:51+00:00")
    assert shown and all(
        datetime.fromisoformat(i["time"].replace("Z", "+00:00")) >= three_minutes_before_capture
        for i in shown
    )


def test_plain_log_files_give_the_log_rows(capsys):
    args = [a for log in LOGS for a in ("--log", str(log))]
    code, out, _ = kvtrace(capsys, "timeline", "default/testvm", *args, "-o", "json")
    doc = json.loads(out)
    assert code == 0
    told = [i["messageID"] for i in doc["items"] if i["category"] in ("decision", "api")]
    story = [m for k, m in enumerate(told) if k == 0 or told[k - 1] != m]  # repeats told once
    assert story == ALWAYS_RESTART_STORY
    assert any("no objects" in n for n in doc["status"]["notes"])


def _log_rows(doc: dict) -> list[tuple]:
    return [(i["time"], i["source"], i["what"], i["pos"]) for i in doc["items"]]


def test_input_file_order_does_not_change_the_timeline(capsys, tmp_path):
    outputs = set()
    for seed in range(4):
        files = list(LOGS)
        random.Random(seed).shuffle(files)
        args = [a for log in files for a in ("--log", str(log))]
        _, out, _ = kvtrace(capsys, "timeline", "default/testvm", *args, "-o", "json")
        outputs.add(json.dumps(_log_rows(json.loads(out))))
    assert len(outputs) == 1


def test_bundle_without_logs_still_gives_object_rows(capsys, tmp_path):
    bundle = tmp_path / "no-logs"
    shutil.copytree(BUNDLE, bundle)
    shutil.rmtree(bundle / "logs")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["logs"] = []
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = kvtrace(capsys, "timeline", "default/testvm", "--bundle", str(bundle))
    assert code == 0
    assert "phase Running" in out
    assert "note: no virt-controller logs in this evidence" in out


def test_stdin_is_read_with_dash(tmp_path):
    data = b"".join(p.read_bytes() for p in LOGS)
    proc = subprocess.run(
        [sys.executable, "-m", "kvtrace", "timeline", "default/testvm", "--log", "-", "-o", "json"],
        input=data,
        capture_output=True,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [i["messageID"] for i in doc["items"] if i["category"] == "api"] == [
        "vm.created",
        "vm.deleted",
        "vm.created",
    ]


def test_installed_entry_points_exist():
    from importlib.metadata import entry_points

    names = {
        e.name for e in entry_points(group="console_scripts") if e.value.startswith("kvtrace.")
    }
    assert {"kvtrace", "kubectl-kvtrace"} <= names


def test_stated_older_release_is_judged_as_that_release(capsys):
    code, out, _ = kvtrace(
        capsys, "timeline", "default/testvm", "--bundle", BUNDLE, "--kubevirt-version", "v0.59.0"
    )
    assert code == 0 and "Started VM by creating" in out
    assert "model (KubeVirt v1.9.0's rules, judging v0.59.0)" in out
    assert "KV-SV-04 not applied: it holds for v1.0.0 on" in out
    assert "but the log lines' call sites fit v1.9.0 only" in out  # the lines say otherwise
    code, out, _ = kvtrace(capsys, "timeline", "default/testvm", "--bundle", BUNDLE)
    assert "judging v1.9.0" in out and "not applied" not in out
    assert "outside the model's range" not in out and "version unknown" not in out


def test_not_found_error_names_refused_archive_members(capsys, tmp_path):
    import tarfile

    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        member = tarfile.TarInfo("../../etc/evil")
        member.size = 1
        tar.addfile(member, io.BytesIO(b"x"))
    code, _, err = kvtrace(capsys, "timeline", "default/testvm", "--bundle", str(archive))
    assert code == 1
    assert "1 file(s) in the evidence were skipped:" in err
    assert "../../etc/evil: '..' in name refused" in err
    assert not (tmp_path.parent.parent / "etc" / "evil").exists()


def test_model_summary_lists_every_violation_first_and_caps_repeated_open_questions():
    from kvtrace.model.engine import Assessment
    from kvtrace.model.verdicts import Verdict
    from kvtrace.render.verdict_shape import UNVERIFIABLE_SHOWN, model_lines

    asked = [Verdict("KV-BO-01", "error", "unverifiable", f"question {k}", (k,)) for k in range(7)]
    broken = [Verdict("KV-RC-03", "error", "violation", f"broken {k}", (20 + k,)) for k in range(5)]
    other = [Verdict("KV-PH-01", "error", "unverifiable", "no phases", ())]
    lines = model_lines(Assessment([*asked, *broken, *other]))
    assert lines[0].endswith("0 explained, 5 violations, 8 unverifiable")
    assert [line.split(": ", 1)[1] for line in lines[1:6]] == [
        f"broken {k} [row {21 + k}]" for k in range(5)
    ]
    assert lines[6 : 6 + UNVERIFIABLE_SHOWN] == [
        f"  ? KV-BO-01 (error): question {k} [row {k + 1}]" for k in range(UNVERIFIABLE_SHOWN)
    ]
    assert lines[6 + UNVERIFIABLE_SHOWN :] == [
        f"  ? KV-BO-01: {7 - UNVERIFIABLE_SHOWN} more like these (-o json lists every one)",
        "  ? KV-PH-01 (error): no phases",
    ]


def test_headline_counts_a_long_list_of_incarnations():
    from kvsim import timefmt
    from kvsim.cluster import Cluster
    from kvsim.kernel import SECOND
    from kvsim.nodes import Fate
    from kvtrace.render.timeline_shape import summary_lines
    from tests.simulated import assessed

    def headline(count: int) -> tuple[list[str], str]:
        """An Always VM whose guest crashes 10 s into each run until its ``count``-th VMI."""
        start = timefmt.from_iso("2026-12-08T14:00:00Z")
        cluster = Cluster(f"headline-{count}", start)
        for index in range(count - 1):
            cluster.fates[("testvm", index)] = Fate("crash", 10 * SECOND)
        cluster.create_vm(start + 30 * SECOND, "testvm")
        timeline, _ = assessed(cluster.capture(start + (60 + 30 * count) * SECOND), "testvm")
        uids = [uid[:8] for uid in timeline.incarnations]
        assert len(uids) == count
        return uids, summary_lines(timeline)[0]

    uids, short = headline(6)
    assert f"VMI incarnations: {', '.join(uids)} ·" in short
    uids, long = headline(9)
    first, last = uids[0], uids[-1]
    assert f"VMI incarnations: 9 ({first}, " in long and f" … {last}) ·" in long
