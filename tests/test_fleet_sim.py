"""A simulated fleet (kvsim): clusters captured on two KubeVirt releases, the later one with a
slower launcher-pod create (kvsim's API latency, ``Cluster.slow``), and the fleet report's
answer to "did the later release get slower across these clusters".

``write_fleet`` is also what ``bench/fleet_bench.py`` checks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kvsim.bundle import write_bundle
from kvsim.cluster import Capture, Cluster
from kvsim.history import T0
from kvsim.kernel import MS, SECOND
from kvtrace.check.report import Selection
from kvtrace.fleet.discover import discover
from kvtrace.fleet.report import FleetReport, fleet_report
from kvtrace.fleet.run import run_fleet
from tests.helpers import run_cli

RELEASES = ("v1.8.0", "v1.9.0")
NAMESPACES = ("web", "db", "batch")
DAY = 86_400 * SECOND


def fleet_capture(
    cluster: str, release: str, day: int, vms: int, slow_pod_create_ms: int, migrations: int
) -> Capture:
    """One cluster's day on ``release``: ``vms`` LiveMigrate VMs started over two minutes, the
    first ``migrations`` of them migrated once, captured after the last migration."""
    start = T0 + day * DAY
    sim = Cluster(f"{cluster}/{release}", start, release=release, live_migration=True)
    if slow_pod_create_ms:
        sim.slow("Pod", "create", slow_pod_create_ms * MS)
    rng = random.Random(f"fleet/{cluster}/{release}")
    for index in range(vms):
        namespace = NAMESPACES[index % len(NAMESPACES)]
        when = start + rng.randint(20, 140) * SECOND
        sim.create_vm(when, f"vm-{index}", namespace=namespace, eviction="LiveMigrate")
    for index in range(min(migrations, vms)):
        namespace = NAMESPACES[index % len(NAMESPACES)]
        sim.migrate(start + (240 + 70 * index) * SECOND, f"vm-{index}", namespace=namespace)
    return sim.capture(start + (240 + 70 * migrations + 180) * SECOND)


def write_fleet(
    root: Path,
    clusters: tuple[str, ...] = ("east", "west"),
    releases: tuple[str, ...] = RELEASES,
    vms: int = 12,
    slow_pod_create_ms: dict[str, int] | None = None,
    migrations: int = 2,
) -> list[Path]:
    """``<root>/<cluster>-<release>``, one kvtrace bundle per cluster and release (the later
    release captured a day after the earlier), each manifest naming its cluster (``cluster``,
    as a collector that knows the kubeconfig's cluster name writes it)."""
    slow = slow_pod_create_ms if slow_pod_create_ms is not None else {releases[-1]: 3_000}
    written = []
    for cluster in clusters:
        for day, release in enumerate(releases):
            capture = fleet_capture(cluster, release, day, vms, slow.get(release, 0), migrations)
            bundle = write_bundle(capture, root / f"{cluster}-{release}")
            manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
            manifest["cluster"] = cluster
            (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
            written.append(bundle)
    return written


def startup_comparison(report: FleetReport) -> dict[str, object]:
    rows = [r for r in report.summaries["release_comparison"] if r["metric"] == "creation→Running"]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture(scope="module")
def slower_fleet(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_fleet(tmp_path_factory.mktemp("slower"))


def test_the_report_says_the_release_with_slower_pod_creates_is_slower(slower_fleet):
    report = fleet_report(
        run_fleet(discover([str(p) for p in slower_fleet]), Selection(None)), Selection(None)
    )
    row = startup_comparison(report)
    assert (row["older"], row["newer"]) == RELEASES
    assert row["n_older"] == row["n_newer"] == 24  # 12 VMs in each of 2 clusters
    # kvsim applies a call half-way through its latency: the pod exists 1.5 s later
    assert row["p50_newer"] - row["p50_older"] >= 1.0
    assert row["verdict"] == "slower"
    assert not report.violations()  # kvsim's clusters do what the code says
    upgrades = report.summaries["cluster_comparison"]
    assert {r["cluster"] for r in upgrades} == {"east", "west"}
    assert all(r["p50_newer"] > r["p50_older"] for r in upgrades)


def test_same_latencies_on_both_releases_are_no_significant_change(tmp_path):
    bundles = write_fleet(tmp_path, vms=12, slow_pod_create_ms={})
    report = fleet_report(
        run_fleet(discover([str(p) for p in bundles]), Selection(None)), Selection(None)
    )
    assert startup_comparison(report)["verdict"] == "no significant change"


def test_every_latency_row_names_its_release_and_cluster(slower_fleet):
    report = fleet_report(
        run_fleet(discover([str(p) for p in slower_fleet]), Selection(None)), Selection(None)
    )
    by_cluster = report.summaries["latency_by_cluster"]
    seen = {(r["cluster"], r["release"]) for r in by_cluster}
    assert seen == {(c, r) for c in ("east", "west") for r in RELEASES}
    migrations = report.summaries["migrations_by_release"]
    assert [m["release"] for m in migrations] == list(RELEASES)
    assert all(m["migrations"] == 4 for m in migrations)  # 2 per cluster


def test_the_table_says_it_in_words(slower_fleet, capsys):
    code, out, err = run_cli(capsys, "check", "-A", "--bundle", str(slower_fleet[0].parent / "*"))
    assert code == 0, err
    assert "v1.9.0 against v1.8.0 over 2 clusters: creation→Running slower, p50 " in out
