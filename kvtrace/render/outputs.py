"""Every report kind's outputs: one table from ``-o`` value to serialiser, and one way to write
the result (stdout, or ``--output-file``). Commands name their report kind; nothing else picks
a format.

A serialiser is a shaping function, named ``module:function`` and imported only when used (so
that declaring the ``-o`` choices costs a command's start-up nothing), and a writer that turns
the shaped value into text: ``text`` (already text), ``json``, ``yaml`` or ``csv`` (rows and
field names).
"""

from __future__ import annotations

import errno
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from kvtrace.errors import OutputError
from kvtrace.render.controls import visible_controls


@dataclass(frozen=True)
class Serialiser:
    shape: str  # "module:function", called with the report
    writer: str = "text"
    terminal: bool = True  # text for a terminal: its control characters are made visible

    def function(self) -> Callable[[Any], Any]:
        module, name = self.shape.split(":")
        found: Callable[[Any], Any] = getattr(importlib.import_module(module), name)
        return found


def _structured(module: str, function: str) -> dict[str, Serialiser]:
    shape = f"kvtrace.render.{module}:{function}"
    return {"json": Serialiser(shape, "json"), "yaml": Serialiser(shape, "yaml")}


def _text(module: str, function: str) -> Serialiser:
    return Serialiser(f"kvtrace.render.{module}:{function}")


def _document(module: str, function: str) -> Serialiser:
    """A file format with its own escaping (HTML, Perfetto's JSON), not terminal text."""
    return Serialiser(f"kvtrace.render.{module}:{function}", terminal=False)


OUTPUTS: dict[str, dict[str, Serialiser]] = {
    "timeline": {
        "table": _text("text", "timeline_table"),
        "wide": _text("text", "timeline_wide"),
        **_structured("timeline_shape", "timeline_document"),
        "csv": Serialiser("kvtrace.render.timeline_shape:timeline_csv", "csv"),
        "html": _document("html_timeline", "timeline_html"),
        "perfetto": _document("perfetto", "timeline_perfetto"),
    },
    "check": {
        "table": _text("text", "check_table"),
        **_structured("check_shape", "document"),
        "csv": Serialiser("kvtrace.render.check_shape:csv_table", "csv"),
        "html": _document("html_check", "render_html_check"),
        "perfetto": _document("perfetto", "check_perfetto"),
    },
    "overhead": {
        "table": _text("text", "overhead_table"),
        **_structured("overhead_shape", "document"),
    },
    "leader-status": {
        "table": _text("text", "leader_status_table"),
        **_structured("leader_shape", "status_document"),
    },
    "leader-history": {
        "table": _text("text", "leader_history_table"),
        **_structured("leader_shape", "history_document"),
    },
    "rules": {
        "table": _text("text", "rules_table"),
        **_structured("rules_shape", "rules_document"),
        "markdown": _text("text", "rules_markdown"),
    },
}

# Outputs that need every VM's timeline kept by the check (they draw them).
DRAWS_TIMELINES = frozenset({"html", "perfetto"})


def formats(kind: str) -> list[str]:
    """The ``-o`` choices of a report kind, in the order help lists them."""
    return list(OUTPUTS[kind])


def render(kind: str, report: object, output: str) -> str:
    serialiser = OUTPUTS[kind][output]
    shaped = serialiser.function()(report)
    text = _WRITERS[serialiser.writer](shaped)
    return visible_controls(text) if serialiser.writer == "text" and serialiser.terminal else text


def _as_text(shaped: Any) -> str:
    return str(shaped)


def _as_json(shaped: Any) -> str:
    from kvtrace.render.structured import to_json

    return to_json(shaped)


def _as_yaml(shaped: Any) -> str:
    from kvtrace.render.structured import to_yaml

    return to_yaml(shaped)


def _as_csv(shaped: Any) -> str:
    from kvtrace.render.structured import to_csv

    rows, fields = shaped
    return to_csv(rows, fields)


_WRITERS: dict[str, Callable[[Any], str]] = {
    "text": _as_text,
    "json": _as_json,
    "yaml": _as_yaml,
    "csv": _as_csv,
}


def emit(text: str, output_file: str | None) -> None:
    """Print, or write the whole output to ``output_file`` (UTF-8, as printed)."""
    if output_file is None:
        try:
            click.echo(text, nl=False)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise OutputError(f"cannot write the output to stdout: {_why(err)}") from None
        return
    try:
        with open(output_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise OutputError(f"cannot write --output-file {output_file}: {_why(err)}") from None


_HINTS = {
    errno.ENOENT: "its directory does not exist; create it or choose another path",
    errno.ENOSPC: "no space left on the device; free some or write elsewhere",
    errno.EACCES: "permission denied; choose a path you can write",
    errno.EISDIR: "it is a directory; name a file",
    errno.EROFS: "the file system is read-only; write elsewhere",
}


def _why(err: OSError) -> str:
    return _HINTS.get(err.errno or 0, err.strerror or str(err))


def write(kind: str, report: object, output: str, output_file: str | None = None) -> None:
    """Render ``report`` as ``output`` and print it or write it to ``output_file``."""
    emit(render(kind, report, output), output_file)
