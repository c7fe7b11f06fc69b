"""The statistics of a fleet check, with pandas — the one module that imports it.

The per-bundle results become five tables, each row naming its bundle (bundle, cluster,
captured_at, release): ``bundles``, ``vms``, ``findings``, ``phases`` (seconds from a VMI's
creation to each start-up phase) and ``migrations``. From them: violations by rule, release,
cluster and namespace; latency distributions (count, p50, p95, p99, max) per release and per
cluster; the slowest VM start-ups; and, for each pair of releases, whether the later one is
slower. Other modules see plain records (lists of dicts), never a DataFrame.

Percentiles are pandas' linear interpolation between order statistics. "Slower" is decided by a
one-sided Mann-Whitney U test (normal approximation with the tie correction): the later
release's samples tend to be larger with p < :data:`SIGNIFICANCE`, and its median is larger;
with fewer than :data:`MIN_SAMPLES` samples on a side the verdict is "too few samples".
Kubernetes stamps have 1 s resolution, so sub-second changes are not seen.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from kvtrace.errors import OutputError, UsageError
from kvtrace.fleet.results import TaskResult
from kvtrace.render.structured import to_csv

IDENTITY = ("bundle", "cluster", "captured_at", "release")
QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}
SIGNIFICANCE = 0.01
MIN_SAMPLES = 10  # per side: below it the normal approximation decides nothing
STARTUP = "creation→Running"
METRICS = ("creation→Scheduling", "creation→Scheduled", STARTUP, "migration")
TABLES = ("bundles", "vms", "findings", "phases", "migrations")
Records = list[dict[str, Any]]


def tables(results: Sequence[TaskResult]) -> dict[str, Records]:
    """The five tables of the fleet, as records."""
    out: dict[str, Records] = {name: [] for name in TABLES}
    for result in results:
        who = {k: getattr(result.identity, k) for k in IDENTITY}
        out["bundles"].append(_bundle_row(result))
        out["vms"].extend({**who, **asdict(v)} for v in result.vms)
        out["findings"].extend(
            {**who, **asdict(f), "evidence": "; ".join(f.evidence)} for f in result.findings
        )
        out["phases"].extend({**who, **asdict(p)} for p in result.phases)
        out["migrations"].extend({**who, **asdict(m)} for m in result.migrations)
    return out


def _bundle_row(result: TaskResult) -> dict[str, Any]:
    return {
        **asdict(result.identity),
        "vms": len(result.vms),
        "violations": sum(1 for f in result.findings if f.status == "violation"),
        "unverifiable": sum(1 for f in result.findings if f.status != "violation"),
        "lines": result.lines,
        "partitions": result.partitions,
        "dropped_samples": result.dropped_samples,
        "error": result.error,
    }


def _frame(records: Records, name: str) -> pd.DataFrame:
    """A table as a DataFrame; an empty one still has its columns."""
    if records:
        return pd.DataFrame.from_records(records)
    return pd.DataFrame(columns=list(_COLUMNS[name]))


_COLUMNS = {
    "bundles": (*IDENTITY, "vms", "violations", "unverifiable", "error"),
    "vms": (*IDENTITY, "namespace", "vm", "violations", "unverifiable"),
    "findings": (*IDENTITY, "namespace", "vm", "rule", "severity", "status", "why", "evidence"),
    "phases": (*IDENTITY, "namespace", "vm", "vmi_uid", "node", "phase", "seconds"),
    "migrations": (*IDENTITY, "namespace", "vm", "migration", "outcome", "seconds"),
}


# --- summaries ---------------------------------------------------------------------------------
def summaries(tabled: dict[str, Records], slowest: int = 10) -> dict[str, Records]:
    """Every summary the fleet report shows, as records."""
    samples = _samples(tabled)
    started = samples[samples["metric"] != "migration"]  # a migration has two nodes
    return {
        "violations_by": violations_by(tabled["findings"]),
        "latency_by_release": distribution(samples, ["release"]),
        "latency_by_cluster": distribution(samples, ["cluster", "release"]),
        "latency_by_namespace": distribution(samples, ["namespace", "release"]),
        "latency_by_node": distribution(started, ["cluster", "node", "release"]),
        "migrations_by_release": migration_outcomes(tabled["migrations"], ["release"]),
        "migrations_by_cluster": migration_outcomes(tabled["migrations"], ["cluster", "release"]),
        "release_comparison": compare_releases(samples),
        "cluster_comparison": compare_within_clusters(samples),
        "slowest": slowest_startups(tabled["phases"], slowest),
    }


def violations_by(findings: Records) -> Records:
    frame = _frame(findings, "findings")
    frame = frame[frame["status"] == "violation"]
    keys = ["rule", "release", "cluster", "namespace"]
    if frame.empty:
        return []
    counted = frame.groupby(keys, sort=True).agg(
        violations=("vm", "size"), vms=("vm", "nunique"), bundles=("bundle", "nunique")
    )
    return _records(counted.reset_index())


def _samples(tabled: dict[str, Records]) -> pd.DataFrame:
    """Every latency sample as (identity, namespace, vm, node, metric, seconds)."""
    phases = _frame(tabled["phases"], "phases").rename(columns={"phase": "metric"})
    phases["metric"] = "creation→" + phases["metric"].astype(str)
    moved = _frame(tabled["migrations"], "migrations")
    moved = moved[moved["seconds"].notna()].assign(metric="migration", node="")
    columns = [*IDENTITY, "namespace", "vm", "node", "metric", "seconds"]
    both = pd.concat([phases[columns], moved[columns]], ignore_index=True)
    both["seconds"] = both["seconds"].astype(float)
    return both


def distribution(samples: pd.DataFrame, by: list[str]) -> Records:
    """count, p50, p95, p99 and max of every metric, per group."""
    if samples.empty:
        return []
    grouped = samples.groupby([*by, "metric"], sort=True)["seconds"]
    frame = grouped.agg(["count", "max"])
    for name, q in QUANTILES.items():
        frame[name] = grouped.quantile(q)
    frame = frame[["count", *QUANTILES, "max"]].reset_index()
    frame["metric"] = pd.Categorical(frame["metric"], categories=list(METRICS), ordered=True)
    order = by if by != ["release"] else []
    frame = _by_release(frame, order, extra=["metric"])
    return _records(frame)


def migration_outcomes(migrations: Records, by: list[str]) -> Records:
    frame = _frame(migrations, "migrations")
    if frame.empty:
        return []
    frame = frame.assign(
        failed=frame["outcome"] == "Failed", seconds=frame["seconds"].astype(float)
    )
    grouped = frame.groupby(by, sort=True)
    out = grouped.agg(migrations=("migration", "size"), failed=("failed", "sum"))
    for name, q in QUANTILES.items():
        out[name] = grouped["seconds"].quantile(q)
    out["failed_share"] = out["failed"] / out["migrations"]
    return _records(_by_release(out.reset_index(), [k for k in by if k != "release"]))


def slowest_startups(phases: Records, count: int) -> Records:
    """The ``count`` slowest VM start-ups (creation → Running) of the fleet."""
    frame = _frame(phases, "phases")
    frame = frame[frame["phase"] == "Running"]
    if frame.empty:
        return []
    keys = [*IDENTITY, "namespace", "vm", "vmi_uid", "node", "seconds"]
    frame = frame[keys].sort_values(
        ["seconds", "bundle", "namespace", "vm", "vmi_uid"],
        ascending=[False, True, True, True, True],
    )
    return _records(frame.head(count))


# --- is a release slower? ----------------------------------------------------------------------
def compare_releases(samples: pd.DataFrame) -> Records:
    """Each later release against the one before it, metric by metric, across every cluster."""
    releases = release_order(samples["release"].unique().tolist())
    rows = []
    for older, newer in itertools.pairwise(releases):
        for metric in METRICS:
            a = samples[(samples["release"] == older) & (samples["metric"] == metric)]
            b = samples[(samples["release"] == newer) & (samples["metric"] == metric)]
            if len(a) and len(b):
                rows.append(_comparison(older, newer, metric, a["seconds"], b["seconds"]))
    return rows


def compare_within_clusters(samples: pd.DataFrame) -> Records:
    """Start-up p50 before and after, for each cluster with bundles of two releases (an upgrade
    seen from both sides)."""
    rows = []
    started = samples[samples["metric"] == STARTUP]
    for cluster, group in started.groupby("cluster", sort=True):
        releases = release_order(group["release"].unique().tolist())
        for older, newer in itertools.pairwise(releases):
            a = group[group["release"] == older]["seconds"]
            b = group[group["release"] == newer]["seconds"]
            rows.append({"cluster": cluster, **_comparison(older, newer, STARTUP, a, b)})
    return rows


def _comparison(older: str, newer: str, metric: str, a: pd.Series, b: pd.Series) -> dict[str, Any]:
    p_slower = mann_whitney_greater(b.tolist(), a.tolist())
    p_faster = mann_whitney_greater(a.tolist(), b.tolist())
    row: dict[str, Any] = {"metric": metric, "older": older, "newer": newer}
    row.update({"n_older": len(a), "n_newer": len(b)})
    for name, q in QUANTILES.items():
        row[f"{name}_older"], row[f"{name}_newer"] = float(a.quantile(q)), float(b.quantile(q))
    before, after = row["p50_older"], row["p50_newer"]
    row["p50_change"] = (after - before) / before if before else None
    row["p_slower"], row["p_faster"] = p_slower, p_faster
    enough = min(len(a), len(b)) >= MIN_SAMPLES
    row["verdict"] = _verdict(after - before, p_slower, p_faster) if enough else "too few samples"
    return row


def _verdict(median_change: float, p_slower: float, p_faster: float) -> str:
    if median_change > 0 and p_slower < SIGNIFICANCE:
        return "slower"
    if median_change < 0 and p_faster < SIGNIFICANCE:
        return "faster"
    return "no significant change"


def mann_whitney_greater(x: list[float], y: list[float]) -> float:
    """One-sided p-value that samples of ``x`` tend to be larger than those of ``y``."""
    n1, n2 = len(x), len(y)
    if not n1 or not n2:
        return 1.0
    ranks = pd.Series([*x, *y]).rank(method="average")
    u = float(ranks.iloc[:n1].sum()) - n1 * (n1 + 1) / 2
    n = n1 + n2
    ties = pd.Series([*x, *y]).value_counts()
    tie_term = float(((ties**3) - ties).sum()) / (n * (n - 1)) if n > 1 else 0.0
    variance = n1 * n2 / 12 * ((n + 1) - tie_term)
    if variance <= 0:
        return 1.0
    z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


def release_order(releases: list[str]) -> list[str]:
    """Releases oldest first (v0.59.0 < v1.2.0 < v1.10.0); names that are no version last."""
    return sorted(releases, key=_release_key)


def _release_key(release: str) -> tuple[int, tuple[int, ...], str]:
    parts = release.lstrip("v").split("-")[0].split(".")
    if all(p.isdigit() for p in parts) and len(parts) >= 2:
        return 0, tuple(int(p) for p in parts), release
    return 1, (), release


def _by_release(frame: pd.DataFrame, first: list[str], extra: Sequence[str] = ()) -> pd.DataFrame:
    """Rows ordered by ``first``, then by release as versions order, then ``extra``."""
    if frame.empty:
        return frame
    rank = {r: i for i, r in enumerate(release_order(frame["release"].unique().tolist()))}
    frame = frame.assign(_rank=frame["release"].map(rank))
    frame = frame.sort_values([*first, "_rank", *extra], kind="stable")
    return frame.drop(columns="_rank")


def _records(frame: pd.DataFrame) -> Records:
    """Plain records: numpy scalars as Python numbers, NaN as None, categories as text."""
    out = []
    for row in frame.astype(object).to_dict(orient="records"):
        out.append({str(k): _plain(v) for k, v in row.items()})
    return out


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# --- writing tables ----------------------------------------------------------------------------
def write_tables(named: dict[str, Records], fmt: str, directory: Path) -> list[Path]:
    """One ``<table>.csv`` or ``<table>.parquet`` per table into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, records in named.items():
        path = directory / f"{name}.{fmt}"
        write_table(records, name, fmt, path)
        written.append(path)
    return written


def write_table(records: Records, name: str, fmt: str, path: Path) -> None:
    try:
        if fmt == "parquet":
            _parquet(_frame(records, name) if name in _COLUMNS else pd.DataFrame(records), path)
        else:
            path.write_text(csv_text(records, name), encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def csv_text(records: Records, name: str) -> str:
    """CSV as ``check -o csv`` writes it: formulas neutralised, controls made visible."""
    fields = list(records[0]) if records else list(_COLUMNS.get(name, ()))
    return to_csv(records, fields)


def _parquet(frame: pd.DataFrame, path: Path) -> None:
    if importlib.util.find_spec("pyarrow") is None:  # pandas' parquet engine
        raise UsageError("-o parquet needs pyarrow: pip install 'kvtrace[fleet]'")
    frame.to_parquet(path, index=False, engine="pyarrow")
