"""Plain-text tables: the only module that imports tabulate."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return tabulate(rows, headers=list(headers), tablefmt="plain", disable_numparse=True)
