"""Shared command-line options: one definition per flag, reused by every command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kvtrace.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


def evidence_options(func: F) -> F:
    """``--bundle`` and ``--log``: where the evidence comes from."""
    func = click.option(
        "--log",
        "logs",
        multiple=True,
        metavar="FILE",
        help="A virt-controller log file (any shape; .gz ok); '-' reads stdin. Repeatable.",
    )(func)
    func = click.option(
        "--bundle",
        "-b",
        metavar="PATH",
        help="A kvtrace bundle, must-gather, cluster-info dump or log directory (dir or .tar.gz).",
    )(func)
    return func


def window_options(func: F) -> F:
    func = click.option(
        "--until",
        metavar="TIME",
        help="Only rows up to TIME (RFC 3339 or a duration back from capture).",
    )(func)
    func = click.option(
        "--since",
        metavar="TIME",
        help="Only rows from TIME on (RFC 3339, or a duration such as 15m back from capture).",
    )(func)
    return func


def output_option(choices: list[str], default: str = "table") -> Callable[[F], F]:
    return click.option(
        "-o",
        "--output",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="Output format.",
    )


def split_key(text: str) -> tuple[str, str]:
    """``NS/NAME`` → (ns, name); a bare NAME means namespace ``default``."""
    parts = text.split("/")
    if len(parts) == 1 and parts[0]:
        return "default", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise UsageError(f"cannot read {text!r} as NAMESPACE/NAME (for example default/testvm)")
