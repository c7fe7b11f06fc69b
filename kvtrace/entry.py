"""The console entry point: signals first, then the imports.

SIGTERM is turned into :class:`~kvtrace.errors.Terminated` (a KeyboardInterrupt) before anything
heavy is imported, so that a ``kill`` unwinds like Ctrl-C: context managers remove kvtrace's
temp and staging directories, and the interpreter's exit handlers remove the credential files
the kubernetes client writes for ``*-data`` kubeconfig fields. A Ctrl-C during the start-up
imports ends the process quietly instead of with a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # 128 + SIGTERM


def _terminate(signum: int, frame: FrameType | None) -> None:
    from kvtrace.errors import Terminated

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second kill must not cut the clean-up short
    raise Terminated()


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    try:
        from kvtrace.cli import run

        code = run()
    except KeyboardInterrupt as stop:
        code = _interrupted(stop)
    _quiet_stdout()
    sys.exit(code)


def complete_plugin() -> None:
    """``kubectl_complete-kvtrace``: kubectl (1.26+) runs it to complete ``kubectl kvtrace …``,
    with the words after ``kvtrace`` and the one being typed (docs/completion.md)."""
    try:
        from kvtrace.cli import plugin_completions

        sys.stdout.write(plugin_completions(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    _quiet_stdout()


def _quiet_stdout() -> None:
    """Flush now; if the reader is gone or the disk is full (already reported), point stdout at
    /dev/null so that the interpreter's own flush at exit prints nothing more."""
    try:
        sys.stdout.flush()
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _interrupted(stop: KeyboardInterrupt) -> int:
    from kvtrace.errors import Terminated

    terminated = isinstance(stop, Terminated)
    print("terminated" if terminated else "interrupted", file=sys.stderr)
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
