"""One line of progress on stderr while ``kvtrace check`` reads and checks large logs.

Drawn only when stderr is a terminal and ``-q`` was not given: piped or redirected output never
carries it, and the line is erased before the report is written.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_INTERVAL = 0.2  # seconds between redraws


class CheckProgress:
    """``kvtrace check: <phase> <done>/<total>``, redrawn in place at most every 0.2 s."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and _is_terminal(self.stream)
        self.phase, self.done, self.total = "", 0, 0
        self._drawn = 0.0
        self._width = 0

    def start(self, phase: str, total: int) -> None:
        self.phase, self.done, self.total = phase, 0, total
        self._draw(force=True)

    def step(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._drawn < _INTERVAL:
            return
        self._drawn = now
        text = f"kvtrace check: {self.phase} {self.done}/{self.total}"
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
