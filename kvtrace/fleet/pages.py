"""Timeline pages for the slowest VMs of a fleet report (``-o html --output-file DIR/``): each
VM's timeline built again from its own bundle, where the command runs, for the few VMs the
report links — the tasks never send timelines back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kvtrace.errors import KvtraceError, OutputError
from kvtrace.fleet.remote import open_source
from kvtrace.fleet.results import BundleSource
from kvtrace.model.engine import assess
from kvtrace.model.version import detect
from kvtrace.render.html_timeline import render_html_timeline
from kvtrace.timeline.build import build_timeline


def timeline_page(source: BundleSource, namespace: str, name: str, version_flag: str | None) -> str:
    """The HTML timeline of one VM, as ``kvtrace timeline NS/VM --bundle B -o html`` draws it."""
    with open_source(source) as evidence:
        timeline = build_timeline(evidence, namespace, name)
        version = detect(evidence, version_flag)
    timeline.notes.extend(version.notes())
    return render_html_timeline(timeline, assess(timeline, version=version))


def write_pages(
    rows: Sequence[dict[str, Any]],
    sources: Sequence[BundleSource],
    directory: Path,
    version_flag: str | None,
) -> tuple[dict[int, str], list[str]]:
    """``timelines/NN.html`` for each row; returns row index → relative link, and why a page
    could not be built (its row keeps the command instead)."""
    by_name = {source.name: source for source in sources}
    (directory / "timelines").mkdir(parents=True, exist_ok=True)
    links: dict[int, str] = {}
    problems = []
    for index, row in enumerate(rows):
        link = f"timelines/{index + 1:02d}.html"
        key = f"{row['namespace']}/{row['vm']}"
        try:
            page = timeline_page(by_name[row["bundle"]], row["namespace"], row["vm"], version_flag)
        except KvtraceError as exc:
            problems.append(f"no timeline page for {key} of {row['bundle']}: {exc}")
            continue
        _write(directory / link, page)
        links[index] = link
    return links, problems


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
