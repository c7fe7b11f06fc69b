"""What ``kvtrace check`` does over many bundles (or on Dask, or for ``-o parquet``): discover the
bundles, run the tasks, build the fleet report, write it. The command only parses options."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from kvtrace.check.report import Selection
from kvtrace.errors import FindingsPresent, UsageError
from kvtrace.fleet.discover import discover
from kvtrace.fleet.report import FleetReport, document, fleet_report, fleet_table
from kvtrace.fleet.results import BundleSource
from kvtrace.fleet.run import run_fleet
from kvtrace.render.outputs import emit

# -o values a fleet report has; ``parquet`` exists only here (pandas writes it)
FLEET_OUTPUTS = ("table", "json", "yaml", "csv", "html", "parquet")
ONE_FILE_TABLE = "vms"  # what -o csv|parquet writes to one file: one row per VM, as check -o csv


def fleet_check(
    bundles: Sequence[str],
    logs: Sequence[str],
    selection: Selection,
    version_flag: str | None,
    dask: str | None,
    output: str,
    output_file: str | None,
    fail_on: str,
) -> None:
    if logs:
        raise UsageError("--log adds to one bundle; over many bundles, give each its logs inside")
    if output not in FLEET_OUTPUTS:
        raise UsageError(f"-o {output} over many bundles: use one of {', '.join(FLEET_OUTPUTS)}")
    sources = discover(bundles)
    report = fleet_report(run_fleet(sources, selection, version_flag, dask), selection)
    write_fleet(report, sources, output, output_file, version_flag)
    if report.violations(fail_on):
        raise FindingsPresent()


def write_fleet(
    report: FleetReport,
    sources: Sequence[BundleSource],
    output: str,
    output_file: str | None,
    version_flag: str | None = None,
) -> None:
    if output in ("csv", "parquet"):
        _write_tables(report, output, output_file)
    elif output == "html":
        _write_html(report, sources, output_file, version_flag)
    elif output in ("json", "yaml"):
        from kvtrace.render.structured import to_json, to_yaml

        shaped = document(report)
        emit(to_json(shaped) if output == "json" else to_yaml(shaped), output_file)
    else:
        emit(fleet_table(report), output_file)


def _is_directory(output_file: str | None) -> bool:
    return bool(output_file) and (Path(str(output_file)).is_dir() or str(output_file).endswith("/"))


def _write_html(
    report: FleetReport,
    sources: Sequence[BundleSource],
    output_file: str | None,
    version_flag: str | None,
) -> None:
    """One page; into a directory, ``index.html`` and a timeline page per slowest VM."""
    from kvtrace.fleet.html import fleet_html

    if not (output_file and _is_directory(output_file)):
        emit(fleet_html(report), output_file)
        return
    from kvtrace.fleet.pages import write_pages

    directory = Path(output_file)
    slowest = report.summaries["slowest"]
    links, problems = write_pages(slowest, sources, directory, version_flag)
    report.notes.extend(problems)
    emit(fleet_html(report, links), str(directory / "index.html"))
    click.echo(f"wrote {1 + len(links)} files; open {directory / 'index.html'}", err=True)


def _write_tables(report: FleetReport, fmt: str, output_file: str | None) -> None:
    """A directory gets every table and summary, one file each; a file or stdout gets the VM
    table."""
    from kvtrace.fleet import frames

    if output_file and _is_directory(output_file):
        named = {**report.tables, **report.summaries}
        written = frames.write_tables(named, fmt, Path(output_file))
        click.echo(f"wrote {len(written)} files to {output_file}", err=True)
        return
    if fmt == "csv":
        emit(frames.csv_text(report.tables[ONE_FILE_TABLE], ONE_FILE_TABLE), output_file)
        return
    if not output_file:
        raise UsageError("-o parquet writes a file: add --output-file FILE.parquet (or DIR/)")
    frames.write_table(report.tables[ONE_FILE_TABLE], ONE_FILE_TABLE, "parquet", Path(output_file))
