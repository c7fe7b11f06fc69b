"""Every report kind's outputs: one table from ``-o`` value to serialiser, and one way to write
the result (stdout, or ``--output-file``). Commands name their report kind; nothing else picks
a format.

A serialiser is a shaping function, named ``module:function`` and imported only when used (so
that declaring the ``-o`` choices costs a command's start-up nothing), and a writer that turns
the shaped value into text: ``text`` (already text, or :class:`~kvtrace.render.terminal.Line` s
laid out for the reader's :class:`~kvtrace.render.terminal.View`), ``json``, ``yaml`` or ``csv``
(rows and field names).

Every kind with a JSON document also takes ``-o jsonpath=TEMPLATE`` and
``-o custom-columns=SPEC`` over that document (:mod:`kvtrace.render.jsonpath`).
"""

from __future__ import annotations

import errno
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from kvtrace.errors import OutputError, UsageError
from kvtrace.render.controls import visible_controls
from kvtrace.render.terminal import PIPED, View


@dataclass(frozen=True)
class Serialiser:
    shape: str  # "module:function", called with the report
    writer: str = "text"
    terminal: bool = True  # text for a terminal: its control characters are made visible
    laid_out: bool = False  # called with the View too; returns Lines (a table) or text

    def function(self) -> Callable[..., Any]:
        module, name = self.shape.split(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
        return found


def _structured(module: str, function: str) -> dict[str, Serialiser]:
    shape = f"kvtrace.render.{module}:{function}"
    return {"json": Serialiser(shape, "json"), "yaml": Serialiser(shape, "yaml")}


def _text(module: str, function: str) -> Serialiser:
    return Serialiser(f"kvtrace.render.{module}:{function}", laid_out=True)


def _name(function: str) -> Serialiser:
    return Serialiser(f"kvtrace.render.names:{function}")


def _document(module: str, function: str) -> Serialiser:
    """A file format with its own escaping (HTML, Perfetto's JSON), not terminal text."""
    return Serialiser(f"kvtrace.render.{module}:{function}", terminal=False)


OUTPUTS: dict[str, dict[str, Serialiser]] = {
    "timeline": {
        "table": _text("text", "timeline_table"),
        "wide": _text("text", "timeline_wide"),
        **_structured("timeline_shape", "timeline_document"),
        "name": _name("timeline_names"),
        "csv": Serialiser("kvtrace.render.timeline_shape:timeline_csv", "csv"),
        "html": _document("html_timeline", "timeline_html"),
        "perfetto": _document("perfetto", "timeline_perfetto"),
    },
    "check": {
        "table": _text("text", "check_table"),
        "wide": _text("text", "check_wide"),
        **_structured("check_shape", "document"),
        "name": _name("check_names"),
        "csv": Serialiser("kvtrace.render.check_shape:csv_table", "csv"),
        "html": _document("html_check", "render_html_check"),
        "perfetto": _document("perfetto", "check_perfetto"),
    },
    "overhead": {
        "table": _text("text", "overhead_table"),
        **_structured("overhead_shape", "document"),
        "name": _name("overhead_names"),
    },
    "leader-status": {
        "table": _text("text", "leader_status_table"),
        "wide": _text("text", "leader_status_wide"),
        **_structured("leader_shape", "status_document"),
        "name": _name("leader_status_names"),
    },
    "leader-history": {
        "table": _text("text", "leader_history_table"),
        "wide": _text("text", "leader_history_wide"),
        **_structured("leader_shape", "history_document"),
        "name": _name("leader_history_names"),
    },
    "rules": {
        "table": _text("text", "rules_table"),
        **_structured("rules_shape", "rules_document"),
        "markdown": _text("text", "rules_markdown"),
    },
}

# Outputs that need every VM's timeline kept by the check (they draw them).
DRAWS_TIMELINES = frozenset({"html", "perfetto"})

# Outputs a command writes itself, with no serialiser here: check's parquet (kvtrace.fleet).
WRITTEN_BY_COMMAND = {"check": ("parquet",)}


# ``-o NAME=ARGUMENT`` formats, over the kind's JSON document.
TEMPLATED = ("jsonpath", "custom-columns")


def formats(kind: str) -> list[str]:
    """The ``-o`` choices of a report kind, in the order help lists them."""
    templated = [f"{t}=…" for t in TEMPLATED] if "json" in OUTPUTS[kind] else []
    return [*OUTPUTS[kind], *WRITTEN_BY_COMMAND.get(kind, ()), *templated]


def check_output(kind: str, output: str) -> str:
    """``output`` if the kind has it (a template is parsed now, so a bad one is a usage error
    before any evidence is read), else a usage error listing the choices."""
    name, equals, argument = output.partition("=")
    if equals and name in TEMPLATED and "json" in OUTPUTS[kind]:
        _templated(name, argument, view=PIPED)  # parses; nothing is rendered
        return output
    if not equals and output in [*OUTPUTS[kind], *WRITTEN_BY_COMMAND.get(kind, ())]:
        return output
    raise UsageError(f"-o {output} is not an output of this command: {', '.join(formats(kind))}")


def _templated(name: str, argument: str, view: View) -> Callable[[Any], str]:
    from kvtrace.render import jsonpath

    if name == "jsonpath":
        nodes = jsonpath.parse_template(argument)
        return lambda document: jsonpath.evaluate(nodes, document, escape=visible_controls)
    columns = jsonpath.parse_columns(argument)

    def table(document: Any) -> str:
        from kvtrace.render.table import table_lines
        from kvtrace.render.terminal import as_text

        rows = jsonpath.column_rows(columns, document)
        return as_text(table_lines([c.header for c in columns], rows, view), color=False)

    return table


def render(kind: str, report: object, output: str, view: View = PIPED) -> str:
    """``report`` as ``output`` for ``view`` (the default: piped, every value whole)."""
    name, equals, argument = output.partition("=")
    if equals:
        check_output(kind, output)
        document = OUTPUTS[kind]["json"].function()(report)
        return _templated(name, argument, view)(document)  # each escapes the evidence it prints
    serialiser = OUTPUTS[kind][output]
    function = serialiser.function()
    if serialiser.writer != "text":
        return _WRITERS[serialiser.writer](function(report))
    shaped = function(report, view) if serialiser.laid_out else function(report)
    if isinstance(shaped, list):
        from kvtrace.render.terminal import as_text

        return as_text(shaped, view.color)
    return visible_controls(shaped) if serialiser.terminal else str(shaped)


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


def emit(text: str, output_file: str | None, color: bool = False) -> None:
    """Print, or write the whole output to ``output_file`` (UTF-8, as printed); ``color``
    keeps the colour click would strip from a pipe (``--color always``)."""
    if output_file is None:
        try:
            click.echo(text, nl=False, color=color or None)
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
    """Render ``report`` as ``output`` for stdout (or ``output_file``) and write it there."""
    view = _view(output_file)
    emit(render(kind, report, output, view), output_file, view.color)


VIEW_KEY = "kvtrace.view"  # click's context meta: (color, headers) of ``--color``/``--no-headers``


def _view(output_file: str | None) -> View:
    """stdout's view with the command's ``--color`` and ``--no-headers``; a file is piped."""
    ctx = click.get_current_context(silent=True)
    color, headers = ctx.meta.get(VIEW_KEY, ("auto", True)) if ctx else ("auto", True)
    if output_file is not None:
        return View(headers=headers)
    from kvtrace.render.terminal import detect

    return detect(color, headers)
