"""Output shapes (kvtrace/render/*_shape.py, outputs.py, names.py, jsonpath.py, words.py): every
document kubectl-shaped, CSV a spreadsheet reads right, counts and sizes and durations as a
reader writes them, and -o name / jsonpath / custom-columns / wide as kubectl users expect."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from kvtrace.render.words import byte_size, count, duration
from tests.conftest import SAMPLES
from tests.helpers import run_cli

ALWAYS = str(SAMPLES / "always-restart")
REGRESSION = str(SAMPLES / "fault-phase-regression")
SPLIT = str(SAMPLES / "leader-split-brain")
OVERHEAD = SAMPLES / "overhead"


def _overhead(capsys, case: str, *args: str) -> tuple[int, str, str]:
    files = ["--pod-file", str(OVERHEAD / f"{case}-pod.yaml")]
    files += ["--vmi-file", str(OVERHEAD / f"{case}-vmi.yaml")]
    files += ["--kubevirt-file", str(OVERHEAD / "kubevirt.yaml")]
    return run_cli(capsys, "verify-overhead", *files, *args)


DOCUMENTS = {
    "Timeline": ("timeline", "default/testvm", "-b", ALWAYS),
    "CheckReport": ("check", "-A", "-b", ALWAYS),
    "LeaderStatus": ("leader", "status", "-b", SPLIT),
    "LeaderHistory": ("leader", "history", "-b", SPLIT),
}


@pytest.mark.parametrize("kind", [*DOCUMENTS, "OverheadReport"])
def test_every_document_is_kubectl_shaped(capsys, kind):
    if kind == "OverheadReport":
        _, out, _ = _overhead(capsys, "vm-dedicated", "-o", "json")
    else:
        _, out, _ = run_cli(capsys, *DOCUMENTS[kind], "-o", "json")
    document = json.loads(out)
    assert document["apiVersion"] == "kvtrace.io/v1alpha1" and document["kind"] == kind
    assert document["metadata"]["generator"].startswith("kvtrace ")
    assert "spec" in document and ("status" in document or "items" in document)
    allowed = {"apiVersion", "kind", "metadata", "spec", "status", "items"}
    assert set(document) <= allowed, set(document) - allowed


def test_overhead_document_holds_the_pod_in_spec_and_the_result_in_status(capsys):
    code, out, _ = _overhead(capsys, "vm-dedicated", "-o", "yaml")
    import yaml

    document = yaml.safe_load(out)
    assert code == 0 and document["metadata"]["name"].startswith("virt-launcher-vm-dedicated")
    assert document["spec"]["vmi"]["name"] == "vm-dedicated"
    assert document["status"]["overhead"]["totalBytes"] == 419430401
    assert document["status"]["overhead"]["total"] == "419430401"  # 400Mi + 1 byte: no unit
    assert document["status"]["summary"]["fail"] == 0


# -- CSV -------------------------------------------------------------------------------------


def test_timeline_csv_has_the_row_numbers_verdicts_cite_and_json_booleans(capsys):
    _, table, _ = run_cli(capsys, "timeline", "default/api-server", "-b", REGRESSION, "-o", "json")
    _, out, _ = run_cli(capsys, "timeline", "default/api-server", "-b", REGRESSION, "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    document = json.loads(table)
    assert [r["row"] for r in rows] == [str(i["row"]) for i in document["items"]]
    cited = {n for f in document["status"]["model"]["findings"] for n in f["rows"]}
    by_row = {r["row"]: r for r in rows}
    assert cited and all(str(n) in by_row for n in cited)
    violation = next(
        f for f in document["status"]["model"]["findings"] if f["status"] == "violation"
    )
    assert by_row[str(violation["rows"][0])]["verdict"].startswith("✗ ")
    assert {r["orderUncertain"] for r in rows} <= {"true", "false"}
    assert "False" not in out and "True" not in out


# -- words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "word", "said"),
    [(1, "row", "1 row"), (2, "row", "2 rows"), (1, "VM", "1 VM"), (0, "VM", "0 VMs"),
     (1, "violation", "1 violation"), (3, "log source", "3 log sources")],
)  # fmt: skip
def test_counts_agree_with_their_number(n, word, said):
    assert count(n, word) == said


@pytest.mark.parametrize(
    ("value", "shown"),
    [(400 * 2**20, "400Mi"), (400 * 2**20 + 1, "419430401"), (1536 * 1024, "1536Ki"),
     (8 * 2**30, "8Gi"), (0, "0")],
)  # fmt: skip
def test_sizes_print_as_kubernetes_prints_a_quantity(value, shown):
    assert byte_size(value) == shown


@pytest.mark.parametrize(
    ("seconds", "uncertain", "shown"),
    [(327168.984, False, "3d18h52m"), (195.535, False, "3m15s"), (1.117, False, "1.117s"),
     (1.0, True, "~1s"), (8815.447, False, "2h26m55s"), (60, False, "1m0s")],
)  # fmt: skip
def test_durations_read_as_kubectl_writes_them(seconds, uncertain, shown):
    assert duration(seconds, uncertain) == shown


def test_texts_say_one_in_the_singular(capsys):
    _, out, _ = run_cli(capsys, "check", "-A", "-b", REGRESSION)
    assert out.splitlines()[-1].startswith("1 VM in all namespaces") and "1 violation," in out
    assert "(s)" not in out


def test_overhead_table_has_no_rounded_mebibytes(capsys):
    code, out, _ = _overhead(capsys, "vm-dedicated")
    assert code == 0 and not re.search(r"\d\.\d+Mi", out)
    (total,) = [line.split() for line in out.splitlines() if line.startswith("total")]
    assert total == ["total", "419430401", "419430401"]
    assert "useEmulation=false" in out and "False" not in out


def test_a_lease_renewed_to_the_second_says_so(capsys):
    _, out, _ = run_cli(capsys, "leader", "status", "-b", str(SAMPLES / "leader-endpoints-lock"))
    assert "(~1s before capture" in out


# -- -o name, jsonpath, custom-columns, wide -------------------------------------------------


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("timeline", "default/testvm", "-b", ALWAYS), ["virtualmachine.kubevirt.io/testvm"]),
        (("check", "-A", "-b", ALWAYS), ["virtualmachine.kubevirt.io/other-vm"]),  # findings
        (("check", "default/testvm", "-b", ALWAYS), ["virtualmachine.kubevirt.io/testvm"]),
        (("leader", "status", "-b", SPLIT), ["lease.coordination.k8s.io/virt-controller"]),
        (("leader", "history", "-b", str(SAMPLES / "leader-endpoints-lock")),
         ["endpoints/virt-controller"]),
    ],
)  # fmt: skip
def test_output_name(capsys, args, names):
    _, out, err = run_cli(capsys, *args, "-o", "name")
    assert out.splitlines() == names and err == ""


def test_overhead_name_is_the_pod(capsys):
    _, out, _ = _overhead(capsys, "vm-2cpu-2gi", "-o", "name")
    assert re.fullmatch(r"pod/virt-launcher-vm-2cpu-2gi-\w+\n", out)


def test_jsonpath_reads_the_json_document(capsys):
    args = ("check", "-A", "-b", ALWAYS)
    _, out, _ = run_cli(capsys, *args, "-o", "jsonpath={.items[*].name}")
    assert out == "other-vm testvm"
    _, out, _ = run_cli(capsys, *args, "-o", "jsonpath={.items[0].name} {.kind}")
    assert out == "other-vm CheckReport"
    template = 'jsonpath={range .items[*]}{.namespace}/{.name}={.violations}{"\\n"}{end}'
    _, out, _ = run_cli(capsys, *args, "-o", template)
    assert out == "default/other-vm=0\ndefault/testvm=0\n"
    _, out, _ = run_cli(capsys, "leader", "status", "-b", SPLIT, "-o", "jsonpath={.status.state}")
    assert out == "healthy"


@pytest.mark.parametrize(
    ("template", "named"),
    [("{..name}", "recursive descent"), ("{.items[?(@.violations>0)]}", "filter"),
     ("{.items[0:1]}", "slice"), ("{range .items[*]}{.name}", "never closed")],
)  # fmt: skip
def test_jsonpath_beyond_the_subset_is_a_usage_error_naming_it(capsys, template, named):
    code, out, err = run_cli(capsys, "check", "-A", "-b", ALWAYS, "-o", f"jsonpath={template}")
    assert code == 2 and out == ""
    assert named in err and "{.items[*].x}" in err and "supports" in err


def test_custom_columns_one_row_per_item(capsys):
    spec = "custom-columns=VM:.name,VIOLATIONS:.violations,RULES:.findings[*].rule,X:.missing"
    code, out, _ = run_cli(capsys, "check", "-A", "-b", ALWAYS, "-o", spec)
    lines = [line.split() for line in out.splitlines()]
    assert code == 0 and lines[0] == ["VM", "VIOLATIONS", "RULES", "X"]
    assert lines[1][:2] == ["other-vm", "0"] and lines[1][3] == "<none>"
    assert lines[2] == ["testvm", "0", "<none>", "<none>"]
    _, bare, _ = run_cli(capsys, "check", "-A", "-b", ALWAYS, "-o", spec, "--no-headers")
    assert bare.splitlines() == out.splitlines()[1:]


def test_custom_columns_spec_must_be_pairs(capsys):
    code, _, err = run_cli(capsys, "check", "-A", "-b", ALWAYS, "-o", "custom-columns=VM")
    assert code == 2 and "HEADER:.path" in err


def test_an_output_a_command_lacks_is_a_usage_error_listing_its_outputs(capsys):
    code, _, err = run_cli(capsys, "leader", "status", "-b", SPLIT, "-o", "csv")
    assert code == 2 and "table, wide, json, yaml, name, jsonpath=…" in err


def test_leader_wide_adds_the_message_and_the_evidence(capsys):
    _, table, _ = run_cli(capsys, "leader", "status", "-b", SPLIT)
    _, wide, _ = run_cli(capsys, "leader", "status", "-b", SPLIT, "-o", "wide")
    header = next(line for line in wide.splitlines() if line.startswith("POD "))
    assert header.split()[-1] == "MESSAGE" and "MESSAGE" not in table
    assert "attempting to acquire leader lease" in wide
    _, history, _ = run_cli(capsys, "leader", "history", "-b", SPLIT, "-o", "wide")
    epochs = history.splitlines()[history.splitlines().index("Epochs") + 2]
    assert epochs.split()[-2:] == [
        "logs/kubevirt/virt-controller-9jld4h288r-zm7xx/virt-controller/previous.log:5",
        "logs/kubevirt/virt-controller-9jld4h288r-zm7xx/virt-controller/previous.log:57",
    ]


def test_jsonpath_escapes_the_evidence_not_the_template(tmp_path, capsys):
    from tests.test_render_controls import RAW_CONTROLS, _hostile_sample

    bundle = str(_hostile_sample(tmp_path))
    template = 'jsonpath={range .items[*]}{.what}{"\\t"}{end}'
    code, out, _ = run_cli(capsys, "timeline", "default/testvm", "-b", bundle, "-o", template)
    assert code == 0 and "\t" in out and "=HYPERLINK(1)" in out
    assert not any(c in out for c in RAW_CONTROLS) and "\\x1b]52" in out
    columns = "custom-columns=WHAT:.what"
    _, table, _ = run_cli(capsys, "timeline", "default/testvm", "-b", bundle, "-o", columns)
    assert not any(c in table for c in RAW_CONTROLS) and "\\x1b]52" in table


@pytest.mark.parametrize(
    ("seconds", "shown"), [(5.4, "5s"), (750, "12m30s"), (3720.5, "1h2m0s"), (None, "-")]
)
def test_check_latencies_read_as_durations(seconds, shown):
    from kvtrace.render.check_shape import _seconds

    assert _seconds(seconds) == shown
