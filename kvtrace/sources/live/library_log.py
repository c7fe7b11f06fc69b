"""The kubernetes library's log lines, kept off the terminal.

The library logs exec credential plugin failures with the root logger (kube_config.py:
``logging.error(str(e))``), with the plugin's stderr in the message, and that may hold a token.
kvtrace never lets such a line through; it says itself that the plugin failed (client.py), and
how (an exit status), never what the plugin printed.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from pathlib import Path


def _library_dir() -> str:
    """``…/site-packages/kubernetes/``, found without importing it."""
    spec = importlib.util.find_spec("kubernetes")
    origin = spec.origin if spec is not None else None
    return str(Path(origin).resolve().parent) + os.sep if origin else "\0"


_LIBRARY_DIR = _library_dir()


class LibraryLog(logging.Filter):
    """The kubernetes library logs its exec-plugin failures with the root logger (kube_config.py
    ``logging.error(str(e))``), and the message holds the plugin's stderr, which may hold a token.
    On the root logger this filter drops every record logged from inside the library, so nothing
    of it reaches a terminal, and keeps a safe summary of exec failures for kvtrace's own error."""

    def __init__(self) -> None:
        super().__init__()
        self.exec_failures: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.pathname.startswith(_LIBRARY_DIR):
            return True
        if record.funcName == "_load_from_exec_plugin":
            self.exec_failures.append(_exec_summary(record.getMessage()))
        return False


def _exec_summary(message: str) -> str:
    """What went wrong with the plugin, without anything it printed."""
    status = re.match(r"exec: process returned (-?\d+)", message)
    if status:
        return f"it exited with status {status[1]}"
    if message.startswith("exec: missing"):
        return "its output has no token or client certificate"
    return "it could not be run"


def quiet_library_logs() -> LibraryLog:
    """Never a kubernetes library log line on the terminal: its own loggers go nowhere, and its
    root-logger records are dropped by :class:`LibraryLog`."""
    library = logging.getLogger("kubernetes")
    library.addHandler(logging.NullHandler())
    library.propagate = False
    drop = LibraryLog()
    logging.getLogger().addFilter(drop)
    return drop
