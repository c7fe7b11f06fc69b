"""What the reader's screen can take: its width and whether it shows colour.

A text output is a list of :class:`Line`, each with a style saying what the line is (a header, a
violation, an open question, an explained step). Styles become SGR colour only on a terminal
that wants colour: ``--color always`` forces it, ``--color never`` and a non-empty ``NO_COLOR``
(https://no-color.org) turn it off, and ``auto`` colours a terminal, never a pipe or a file.
Only a terminal has a width: piped, a table keeps every value whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

from kvtrace.render.controls import visible_controls

COLOR_CHOICES = ("auto", "always", "never")

HEADER = "header"
BAD = "bad"  # ✗: a violation, a failed check
OPEN = "open"  # ?: unverifiable, not checked
GOOD = "good"  # ✓: explained, passed
QUIET = "quiet"  # context: dim

_SGR = {HEADER: "1", BAD: "31", OPEN: "33", GOOD: "32", QUIET: "2"}


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""


@dataclass(frozen=True)
class View:
    """How a text output is laid out: ``width`` None never truncates; ``headers`` False drops
    table headers (``--no-headers``); ``color`` paints styled lines."""

    width: int | None = None
    headers: bool = True
    color: bool = False


PIPED = View()


def detect(color: str = "auto", headers: bool = True, stream: TextIO | None = None) -> View:
    """The view of ``stream`` (stdout): its width and colour if it is a terminal."""
    stream = stream if stream is not None else _stdout()
    tty = _isatty(stream)
    width = _columns() if tty else None
    return View(width=width, headers=headers, color=wants_color(color, tty))


def _columns() -> int:
    import shutil  # here, not at the top: a command's --help never needs it (start-up time)

    return shutil.get_terminal_size().columns


def wants_color(color: str, tty: bool) -> bool:
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR"):
        return False
    return tty


def _stdout() -> TextIO:
    import sys

    return sys.stdout


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream is no terminal
        return False


def paint(line: Line, color: bool) -> str:
    """The line made safe for a terminal, in its colour when ``color``."""
    text = visible_controls(line.text)
    code = _SGR.get(line.style) if color else None
    return f"\x1b[{code}m{text}\x1b[0m" if code and text else text


def as_text(lines: Iterable[Line], color: bool) -> str:
    return "".join(paint(line, color) + "\n" for line in lines)


def plain(lines: Sequence[str], style: str = "") -> list[Line]:
    return [Line(text, style) for text in lines]
