"""Plain-text tables: the only module that imports tabulate.

A table is laid out for its :class:`~kvtrace.render.terminal.View`: on a terminal narrower than
the table, only the free-text column (``shrink``: a log message, a why) is cut, with ``…``; the
columns an operator looks evidence up by (time, source, position, evidence) are never cut. Piped,
every value is whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from kvtrace.render.controls import visible_controls
from kvtrace.render.terminal import HEADER, PIPED, Line, View

_GAP = 2  # tabulate "plain": two spaces between columns, headers padded by two
SHRUNK_MIN = 16  # a free-text column is never cut narrower than this


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The whole table as text (no view: every value whole, headers shown)."""
    return "\n".join(line.text for line in table_lines(headers, rows))


def table_lines(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    view: View = PIPED,
    styles: Sequence[str] | None = None,
    shrink: int | Sequence[int] | None = None,
) -> list[Line]:
    """One :class:`Line` per row (``styles[i]`` its style), the header line first unless the
    view drops headers; the ``shrink`` column (or columns, the first cut first) is cut to fit
    ``view.width``."""
    cells = [[_cell(c) for c in row] for row in rows]
    if shrink is not None and view.width is not None and cells:
        for column in [shrink] if isinstance(shrink, int) else shrink:
            _fit(list(headers), cells, column, view.width)
    text = tabulate(cells, headers=list(headers), tablefmt="plain", disable_numparse=True)
    header, *body = text.split("\n")
    row_styles = list(styles) if styles is not None else [""] * len(body)
    lines = [Line(line, style) for line, style in zip(body, row_styles, strict=True)]
    return [Line(header, HEADER), *lines] if view.headers else lines


def _cell(value: str) -> str:
    """A cell on one line, its controls visible (a newline in a log message would break the
    row in two)."""
    return visible_controls(value).replace("\n", "\\n")


def _widths(headers: list[str], cells: list[list[str]]) -> list[int]:
    return [max(len(h) + _GAP, *(len(row[i]) for row in cells)) for i, h in enumerate(headers)]


def _fit(headers: list[str], cells: list[list[str]], shrink: int, width: int) -> None:
    widths = _widths(headers, cells)
    total = sum(widths) + _GAP * (len(widths) - 1)
    if total <= width:
        return
    room = max(SHRUNK_MIN, len(headers[shrink]) + _GAP, widths[shrink] - (total - width))
    for row in cells:
        if len(row[shrink]) > room:
            row[shrink] = row[shrink][: room - 1] + "…"
