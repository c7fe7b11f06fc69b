"""``kvtrace check`` over many bundles: the same findings as one check per bundle, the same
result whether a big bundle is one task or many partitions, and on Dask (a LocalCluster of
worker processes) the same result as here."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kvtrace.check.report import Selection
from kvtrace.fleet.discover import discover
from kvtrace.fleet.html import fleet_html
from kvtrace.fleet.plan import plan_tasks
from kvtrace.fleet.report import fleet_report
from kvtrace.fleet.run import run_fleet
from tests.conftest import ROOT
from tests.helpers import run_cli
from tests.simulated import check_bundle
from tests.test_fleet_sim import write_fleet

SAMPLES = ROOT / "sample-logs"
FAULTS = sorted(p for p in SAMPLES.glob("fault-*") if p.is_dir())
ALL = Selection(None)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two clusters on two releases, 6 VMs each: small, so the Dask test stays short."""
    return write_fleet(tmp_path_factory.mktemp("fleet"), vms=6)


def _findings(bundle: Path) -> list[tuple[str, str, str]]:
    report = check_bundle(bundle)
    assert report is not None
    return [(f"{vm.key[0]}/{vm.key[1]}", v.rule, v.why) for vm, v in report.violations()]


def test_each_bundle_has_the_findings_of_its_own_check():
    results = run_fleet(discover([str(p) for p in FAULTS]), ALL)
    assert [r.identity.bundle for r in results] == [str(p) for p in FAULTS]
    for result, bundle in zip(results, FAULTS, strict=True):
        found = [
            (f"{f.namespace}/{f.vm}", f.rule, f.why)
            for f in result.findings
            if f.status == "violation"
        ]
        assert found == _findings(bundle), bundle.name


def test_partitions_of_a_bundle_give_the_result_of_the_whole(fleet):
    """Each partition parses only its own lines, yet together they find what the whole does —
    the same verdicts on the same evidence lines — for the simulated fleet and for bundles with
    violations (the fault samples and the split-brain one)."""
    bundles = [*fleet, *FAULTS, SAMPLES / "leader-split-brain", SAMPLES / "live-migration"]
    sources = discover([str(p) for p in bundles])
    assert len(plan_tasks(sources, ALL, partition_bytes=1 << 40)) == len(bundles)
    split = plan_tasks(sources, ALL, partition_bytes=4096)
    assert all(t.partitions > 1 for t in split)
    whole = run_fleet(sources, ALL)
    parts = run_fleet(sources, ALL, partition_bytes=4096)
    split_tables, whole_tables = fleet_report(parts, ALL).tables, fleet_report(whole, ALL).tables
    assert {b.pop("partitions") for b in whole_tables["bundles"]} == {1}
    assert all(b.pop("partitions") > 1 for b in split_tables["bundles"])
    assert split_tables == whole_tables
    assert sum(len(r.vms) for r in whole[:4]) == 24
    assert any(f["evidence"] for f in whole_tables["findings"] if f["status"] == "violation")


DASK_BUDGET_S = 240  # the LocalCluster's start, 2 workers, 5 small bundles: seconds, not minutes


def test_dask_gives_the_local_result(fleet):
    """Bundles of two releases (each split in 2 partitions) and a bundle with violations (whole),
    on a LocalCluster of two worker processes: the same tables and statistics as here."""
    pytest.importorskip("distributed")
    sources = discover([*map(str, fleet), str(SAMPLES / "fault-duplicate-create")])
    tasks = plan_tasks(sources, ALL, partition_bytes=200_000)
    assert [t.partitions for t in tasks] == [2] * 8 + [1]
    local = fleet_report(run_fleet(sources, ALL, partition_bytes=200_000), ALL)
    with ThreadPoolExecutor(1) as budget:  # a hung cluster fails the test instead of CI
        running = budget.submit(run_fleet, sources, ALL, dask="local:2", partition_bytes=200_000)
        on_dask = fleet_report(running.result(timeout=DASK_BUDGET_S), ALL)
    assert on_dask.tables == local.tables
    assert on_dask.summaries == local.summaries
    assert {b["release"] for b in local.tables["bundles"]} == {"v1.8.0", "v1.9.0"}
    assert len(local.violations()) == 14  # fault-duplicate-create's
    assert local.summaries["release_comparison"]  # v1.8.0 against v1.9.0, the same on Dask


def test_cli_names_the_bundle_of_every_finding(capsys):
    bundles = [str(SAMPLES / "fault-duplicate-create"), str(SAMPLES / "fault-phase-regression")]
    code, out, err = run_cli(
        capsys, "check", "-A", "--bundle", bundles[0], "--bundle", bundles[1], "-o", "json"
    )
    assert code == 3, err
    status = json.loads(out)["status"]
    assert {b["cluster"] for b in status["bundles"]} == {
        "fault-duplicate-create",
        "fault-phase-regression",
    }
    named = {
        (f["cluster"], f["captured_at"], f["release"], f["rule"])
        for f in status["findings"]
        if f["status"] == "violation"
    }
    assert ("fault-phase-regression", "2026-12-05T08:34:00Z", "v1.9.0", "KV-PH-01") in named
    assert ("fault-duplicate-create", "2026-12-02T09:07:00Z", "v1.9.0", "KV-EX-01") in named


def test_cli_glob_and_parquet_tables(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "tables"
    code, _, err = run_cli(
        capsys,
        "check",
        "-A",
        "--bundle",
        str(SAMPLES / "fault-*"),
        "-o",
        "parquet",
        "--output-file",
        f"{out}/",
    )
    assert code == 3, err
    findings = pd.read_parquet(out / "findings.parquet")
    assert set(findings["cluster"]) >= {p.name for p in FAULTS if _findings(p)}
    vms = pd.read_parquet(out / "vms.parquet")
    assert len(vms) == len(FAULTS)
    code, csv, err = run_cli(
        capsys, "check", "-A", "--bundle", str(SAMPLES / "fault-*"), "-o", "csv"
    )
    assert code == 3, err
    assert csv.count("\n") == len(FAULTS) + 1  # the header and one row per VM


def test_a_pattern_matching_nothing_is_an_error_naming_it(capsys):
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(SAMPLES / "no-such-*"))
    assert code == 1 and not out
    assert "no-such-*" in err and "matches no file" in err


def test_an_unreadable_bundle_is_reported_and_the_others_are_checked(tmp_path, capsys):
    broken = tmp_path / "gone.tar.gz"  # listed, then deleted before the check reads it
    good = SAMPLES / "fault-phase-regression"
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(broken), "--bundle", str(good))
    assert code == 3, err
    assert "not read:" in out and "KV-PH-01" in out
    assert "2 bundles (1 not read)" in out


def test_html_into_a_directory_links_the_slowest_vms_to_their_timeline_pages(
    fleet, tmp_path, capsys
):
    site = tmp_path / "site"
    code, _, err = run_cli(
        capsys,
        "check",
        "-A",
        "--bundle",
        str(fleet[0]),
        "--bundle",
        str(fleet[1]),
        "-o",
        "html",
        "--output-file",
        f"{site}/",
    )
    assert code == 0, err
    index = (site / "index.html").read_text(encoding="utf-8")
    report = fleet_report(run_fleet(discover([str(fleet[0]), str(fleet[1])]), ALL), ALL)
    slowest = report.summaries["slowest"]
    assert len(slowest) == 10
    for number, row in enumerate(slowest, 1):
        link = f"timelines/{number:02d}.html"
        assert f"<a href='{link}'>{row['namespace']}/{row['vm']}</a>" in index
        page = (site / link).read_text(encoding="utf-8")
        assert f"{row['namespace']}/{row['vm']}" in page
    assert "Release comparison" in index and "v1.8.0" in index and "v1.9.0" in index


def test_a_directory_of_bundles_is_every_bundle_in_it(capsys):
    """``check -A --bundle sample-logs``: every sample, each with the findings of its own check."""
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(SAMPLES), "-o", "json")
    assert code == 3, err
    bundles = json.loads(out)["status"]["bundles"]
    names = {b["bundle"].split("#", 1)[1].split("/")[0] for b in bundles}
    samples = {p.parent.name for p in SAMPLES.glob("*/manifest.json")} | {
        "must-gather-always-restart"
    }
    assert names == samples
    findings = json.loads(out)["status"]["findings"]
    for bundle in FAULTS:
        found = [
            (f"{f['namespace']}/{f['vm']}", f["rule"], f["why"])
            for f in findings
            if f["status"] == "violation" and f["cluster"] == bundle.name
        ]
        assert found == _findings(bundle), bundle.name


def test_every_bundle_of_an_archive_is_checked(tmp_path, capsys):
    archive = tmp_path / "two.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("fault-phase-regression", "fault-wrong-revision-name"):
            tar.add(SAMPLES / name, arcname=f"case/{name}")
    other = SAMPLES / "live-migration"
    code, out, err = run_cli(
        capsys, "check", "-A", "--bundle", str(archive), "--bundle", str(other), "-o", "json"
    )
    assert code == 3, err
    status = json.loads(out)["status"]
    assert [b["bundle"] for b in status["bundles"]] == [
        f"{archive}#case/fault-phase-regression",
        f"{archive}#case/fault-wrong-revision-name",
        str(other),
    ]
    rules = {(f["cluster"], f["rule"]) for f in status["findings"] if f["status"] == "violation"}
    assert rules == {
        ("fault-phase-regression", "KV-PH-01"),
        ("fault-wrong-revision-name", "KV-SV-01"),
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dask", "local:0"], "--dask local:0: write local, local:N"),
        (["--log", "x.log"], "--log adds to one bundle"),
        (["-o", "wide"], "-o wide over many bundles"),
    ],
)
def test_fleet_usage_errors_name_the_flag(capsys, extra, message):
    bundles = ["--bundle", str(FAULTS[0]), "--bundle", str(FAULTS[1])]
    code, out, err = run_cli(capsys, "check", "-A", *bundles, *extra)
    assert code == 2 and not out
    assert message in err


def test_parquet_needs_a_file_and_one_file_is_the_vm_table(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    bundle = str(SAMPLES / "live-migration")
    code, _, err = run_cli(capsys, "check", "-A", "--bundle", bundle, "-o", "parquet")
    assert code == 2 and "--output-file" in err
    target = tmp_path / "vms.parquet"
    code, _, err = run_cli(
        capsys, "check", "-A", "--bundle", bundle, "-o", "parquet", "--output-file", str(target)
    )
    assert code == 0, err
    vms = pd.read_parquet(target)
    assert sorted(vms["vm"]) == ["db-primary", "web-cache"]
    assert set(vms["cluster"]) == {"live-migration"}


def test_bundles_at_fsspec_urls_are_read_where_they_are():
    """A glob of URLs (fsspec's in-memory file system standing in for a bucket): each bundle
    copied into temp space and read as a local one, with the same findings."""
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    for bundle in FAULTS[:2]:
        memory.put(str(bundle), f"/fleet-test/{bundle.name}", recursive=True)
    try:
        results = run_fleet(discover(["memory://fleet-test/*"]), ALL)
    finally:
        memory.rm("/fleet-test", recursive=True)
    names = [r.identity.bundle for r in results]  # memory:///fleet-test/…, as fsspec writes it
    assert [n.removeprefix("memory://").lstrip("/") for n in names] == [
        f"fleet-test/{b.name}" for b in FAULTS[:2]
    ]
    for result, bundle in zip(results, FAULTS[:2], strict=True):
        assert not result.error
        assert result.identity.cluster == bundle.name
        found = [
            (f"{f.namespace}/{f.vm}", f.rule, f.why)
            for f in result.findings
            if f.status == "violation"
        ]
        assert found == _findings(bundle)


def test_one_bundle_imports_no_pandas_nor_dask():
    """The single-bundle check is as before: the fleet's heavy libraries stay unloaded."""
    script = (
        "import sys; from kvtrace.cli import run; "
        f"run(['check', '-A', '--bundle', {str(SAMPLES / 'live-migration')!r}]); "
        "print(sorted(m for m in ('pandas', 'distributed', 'fsspec', 'pyarrow') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_html_page_escapes_what_the_evidence_wrote(fleet):
    report = fleet_report(run_fleet(discover([str(fleet[0])]), ALL), ALL)
    hostile = "<script>alert(1)</script>"
    for row in report.tables["bundles"] + report.summaries["slowest"]:
        row["cluster"] = hostile
    page = fleet_html(report)
    assert hostile not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_label_selector_applies_to_every_bundle(fleet, capsys):
    """-l over many bundles as over one: kvsim's VMs carry no metadata.labels (only their
    templates do), so app!=web keeps every VM and app=vm-0 none."""
    bundles = ["--bundle", str(fleet[0]), "--bundle", str(SAMPLES / "always-restart")]

    def vms(*selector: str) -> set[tuple[str, str]]:
        code, out, err = run_cli(capsys, "check", "-A", *bundles, *selector, "-o", "json")
        assert code == 0, err
        return {(v["cluster"], v["vm"]) for v in json.loads(out)["status"]["vms"]}

    every = vms()
    assert len(every) == 8  # 6 + 2
    assert vms("-l", "app!=web") == every
    assert vms("-l", "app=vm-0") == set()


def test_since_is_refused_over_many_bundles(capsys):
    code, out, err = run_cli(
        capsys,
        "check",
        "-A",
        "--bundle",
        str(FAULTS[0]),
        "--bundle",
        str(FAULTS[1]),
        "--since",
        "1h",
    )
    assert code == 2 and not out and "--since reads one bundle" in err


def test_one_archive_of_two_bundles_is_both_and_of_one_is_the_single_report(tmp_path, capsys):
    two, one = tmp_path / "two.tar.gz", tmp_path / "one.tar.gz"
    with tarfile.open(two, "w:gz") as tar:
        for name in ("fault-phase-regression", "fault-wrong-revision-name"):
            tar.add(SAMPLES / name, arcname=name)
    with tarfile.open(one, "w:gz") as tar:
        tar.add(SAMPLES / "fault-phase-regression", arcname="fault-phase-regression")
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(two))
    assert code == 3, err
    assert "2 bundles (0 not read), 2 VMs, 2 violations" in out
    code, single, err = run_cli(capsys, "check", "-A", "--bundle", str(one))
    code_dir, from_dir, _ = run_cli(
        capsys, "check", "-A", "--bundle", str(SAMPLES / "fault-phase-regression")
    )
    assert code == code_dir == 3
    assert single.replace(str(one), "B") == from_dir.replace(
        str(SAMPLES / "fault-phase-regression"), "B"
    )
