"""A one-line progress display on stderr for long collections (off when not a TTY or quiet)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

_INTERVAL = 0.1  # seconds between redraws


class Progress:
    """Counts requests and log bytes; redraws ``\\r``-style at most every 0.1 s."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.requests = 0
        self.log_bytes = 0
        self.phase = "connecting"
        self._drawn = 0.0
        self._width = 0
        self._lock = threading.Lock()

    def request(self) -> None:
        with self._lock:
            self.requests += 1
        self._draw()

    def add_bytes(self, count: int) -> None:
        with self._lock:
            self.log_bytes += count
        self._draw()

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self._draw(force=True)

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        with self._lock:
            if not force and now - self._drawn < _INTERVAL:
                return
            self._drawn = now
            text = (
                f"kvtrace collect: {self.phase}: {self.requests} requests, "
                f"{self.log_bytes / 1024 / 1024:.1f} MiB of logs"
            )
            pad = max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
