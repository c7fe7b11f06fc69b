"""Shared command-line options: each flag declared once here, reused by every command that takes
it, so the same flag reads and behaves the same everywhere."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem

from kvtrace.commands.completion import (
    complete_context,
    complete_file,
    complete_namespace,
)
from kvtrace.errors import UsageError
from kvtrace.render.outputs import formats
from kvtrace.render.terminal import COLOR_CHOICES
from kvtrace.sources.live.settings import (
    ClusterSettings,
    check_connection_flags,
    parse_request_timeout,
)

F = TypeVar("F", bound=Callable[..., Any])


def evidence_options(func: F) -> F:
    """``--bundle`` and ``--log``: where the evidence comes from."""
    func = click.option(
        "--log",
        "logs",
        multiple=True,
        metavar="FILE",
        shell_complete=complete_file,
        callback=_stdin_on_a_terminal,
        help="A virt-controller log file (any shape; .gz ok); '-' reads stdin. Repeatable.",
    )(func)
    func = click.option(
        "--bundle",
        "-b",
        metavar="PATH",
        shell_complete=complete_file,
        help="A kvtrace bundle, must-gather, cluster-info dump or log directory (dir or .tar.gz).",
    )(func)
    return func


def _stdin_on_a_terminal(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    """``--log -`` with stdin a terminal: say that kvtrace waits for the log to be typed or
    pasted (ended by Ctrl-D), so a forgotten pipe does not look like a hang."""
    import sys

    if "-" in value and not ctx.resilient_parsing and sys.stdin is not None and sys.stdin.isatty():
        click.echo(
            "kvtrace: reading the log from the terminal (--log -): paste it and end with Ctrl-D, "
            "or pipe it in: kubectl logs -n kubevirt POD | kvtrace ... --log -",
            err=True,
        )
    return value


def bundles_options(func: F) -> F:
    """``--bundle`` repeatable (each a bundle, a glob, or a directory of bundles) and ``--log``:
    ``kvtrace check`` over many bundles (the command receives ``bundles``, a tuple)."""
    func = evidence_options(func)
    for param in getattr(func, "__click_params__", []):
        if param.name == "bundle":
            param.name, param.multiple, param.default = "bundles", True, ()
            param.help = "A bundle (as above); repeat it, or give a glob or a directory of "
            param.help += "bundles, for one report over all of them."
    return func


def since_option(
    help_text: str = "Only rows from TIME on (RFC 3339, or a duration such as 15m back from "
    "capture).",
) -> Callable[[F], F]:
    return click.option("--since", metavar="TIME", help=help_text)


def window_options(func: F) -> F:
    """``--since`` and ``--until``: the window of rows shown."""
    func = click.option(
        "--until",
        metavar="TIME",
        help="Only rows up to TIME (RFC 3339 or a duration back from capture).",
    )(func)
    return since_option()(func)


class OutputFormat(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2
    """``-o``: one of the kind's formats, or ``jsonpath=…`` / ``custom-columns=…``."""

    name = "output"

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(formats(self.kind)) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from kvtrace.render.outputs import check_output

        try:
            return check_output(self.kind, str(value))
        except UsageError as err:
            self.fail(str(err), param, ctx)

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        """The named formats (``jsonpath=`` and ``custom-columns=`` with their ``=``)."""
        names = [f.rstrip("…") for f in formats(self.kind)]
        return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def output_option(kind: str) -> Callable[[F], F]:
    """``-o`` (the formats the report kind has in :data:`kvtrace.render.outputs.OUTPUTS`),
    ``--no-headers`` and ``--color``; the last two reach the renderer through click's context,
    so the command receives only ``output``."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from kvtrace.render.outputs import VIEW_KEY

            view = (kwargs.pop("color"), not kwargs.pop("no_headers"))
            click.get_current_context().meta[VIEW_KEY] = view
            return func(*args, **kwargs)

        for option in reversed(_output_options(kind)):
            wrapper = option(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def _output_options(kind: str) -> list[Callable[[F], F]]:
    return [
        click.option(
            "-o",
            "--output",
            type=OutputFormat(kind),
            default="table",
            show_default=True,
            help="Output format; jsonpath=TEMPLATE and custom-columns=NAME:.path,… read the "
            "-o json document.",
        ),
        click.option("--no-headers", is_flag=True, help="Tables without their header line."),
        click.option(
            "--color",
            type=click.Choice(COLOR_CHOICES),
            default="auto",
            show_default=True,
            help="Colour: auto (a terminal without NO_COLOR), always or never.",
        ),
    ]


def output_file_option(directory_help: str = "") -> Callable[[F], F]:
    """``--output-file``: write the output to a file instead of stdout (handy for html)."""
    return click.option(
        "--output-file",
        metavar="PATH",
        type=click.Path(dir_okay=bool(directory_help), writable=True),
        help="Write the output to PATH instead of stdout" + (directory_help or "."),
    )


def namespace_option(help_text: str) -> Callable[[F], F]:
    """``-n/--namespace``; what it selects is the command's to say."""
    return click.option(
        "-n", "--namespace", metavar="NS", shell_complete=complete_namespace, help=help_text
    )


def selector_option(help_text: str) -> Callable[[F], F]:
    """``-l/--selector``: a label selector on VMs (``app=web,tier!=db``), parsed at once so that
    a bad one is a usage error before any evidence is read."""
    return click.option(
        "-l", "--selector", metavar="SELECTOR", callback=_parsed_selector, help=help_text
    )


def _parsed_selector(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from kvtrace.sources.selectors import parse_selector

    try:
        return parse_selector(value)
    except UsageError as err:
        raise click.BadParameter(str(err), ctx, param) from None


def all_namespaces_option(func: F) -> F:
    return click.option("-A", "--all-namespaces", is_flag=True, help="VMs in every namespace.")(
        func
    )


def kubevirt_version_option(func: F) -> F:
    return click.option(
        "--kubevirt-version",
        metavar="VERSION",
        callback=_known_release,
        help="The KubeVirt release that wrote the evidence, e.g. v1.9.0 or v1.7 (else read "
        "from the evidence).",
    )(func)


def _known_release(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A release of the call-site catalog, or a minor line it has releases of."""
    if value is None:
        return None
    from kvtrace.timeline.callsites import catalog

    known = catalog()
    if known.named(value):
        return value if value.startswith("v") else f"v{value}"
    releases = known.releases
    minors = sorted({".".join(r.split(".")[:2]) for r in releases}, key=_release_order)
    raise click.BadParameter(
        f"{value!r} names no KubeVirt release kvtrace knows; accepted: a release "
        f"{releases[0]} … {releases[-1]} (e.g. {releases[-1]}), or a minor line "
        f"{', '.join(minors)} (its newest release kvtrace knows); a newer release is added "
        "with tools/callsites.py",
        ctx,
        param,
    )


def _release_order(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.lstrip("v").split(".") if part.isdigit())


def split_key(text: str, bare: str | None = None) -> tuple[str, str]:
    """``NS/NAME`` → (ns, name); a bare NAME is in namespace ``bare`` (live: the context's),
    else ``default``."""
    parts = text.split("/")
    if len(parts) == 1 and parts[0]:
        return bare or "default", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise UsageError(f"cannot read {text!r} as NAMESPACE/NAME (for example default/testvm)")


def object_key(text: str, namespace: str | None, what: str) -> tuple[str, str]:
    """``NS/NAME``, or ``-n NS NAME`` as kubectl reads it; both at once is a usage error."""
    if namespace and "/" in text:
        raise UsageError(f"give NAMESPACE/{what} or -n NAMESPACE {what}, not both")
    return split_key(text, namespace)


_LIVE_OPTIONS = [
    click.option(
        "--kubeconfig",
        metavar="PATH",
        shell_complete=complete_file,
        help="Kubeconfig file (default: every file in $KUBECONFIG, else ~/.kube/config).",
    ),
    click.option(
        "--context",
        metavar="NAME",
        shell_complete=complete_context,
        help="Kubeconfig context (default: current).",
    ),
    click.option(
        "--cluster", metavar="NAME", help="The kubeconfig cluster to use, not the context's."
    ),
    click.option("--user", metavar="NAME", help="The kubeconfig user to use, not the context's."),
    click.option(
        "--server", "-s", metavar="URL", help="The API server's URL, not the kubeconfig's."
    ),
    click.option(
        "--token", metavar="TOKEN", help="Bearer token for the API server (never shown or written)."
    ),
    click.option(
        "--certificate-authority",
        metavar="PATH",
        shell_complete=complete_file,
        help="A CA certificate file for the server's certificate.",
    ),
    click.option(
        "--insecure-skip-tls-verify",
        is_flag=True,
        help="Do not check the server's certificate (the connection can be intercepted).",
    ),
    click.option(
        "--request-timeout",
        metavar="DURATION",
        default="30s",
        show_default=True,
        help="Give up on a connect or read after this long (then retry); 0 waits forever.",
    ),
    click.option("--as", "as_user", metavar="USER", help="Impersonate this user (read-only)."),
    click.option(
        "--as-group",
        "as_groups",
        multiple=True,
        metavar="GROUP",
        help="Impersonate a group (with --as). Repeatable.",
    ),
    click.option("--as-uid", metavar="UID", help="Impersonate this UID (with --as)."),
    click.option(
        "--kubevirt-namespace",
        metavar="NS",
        help="Where KubeVirt runs (default: found from the KubeVirt CR or virt-controller pods).",
    ),
    click.option("--quiet", "-q", is_flag=True, help="No progress display while collecting."),
    click.option(
        "--verbose", "-v", is_flag=True, help="Print every request (never headers) to stderr."
    ),
]
_LIVE_NAMES: Sequence[str] = (
    "kubeconfig",
    "context",
    "cluster",
    "user",
    "server",
    "token",
    "certificate_authority",
    "insecure_skip_tls_verify",
    "request_timeout",
    "as_user",
    "as_groups",
    "as_uid",
    "kubevirt_namespace",
    "quiet",
    "verbose",
)


def live_options(func: F) -> F:
    """Cluster flags for live mode (used when neither --bundle nor --log is given).

    The command receives them as one ``cluster: ClusterSettings`` argument.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _LIVE_NAMES}
        given["request_timeout"] = parse_request_timeout(given["request_timeout"])
        given["as_groups"] = tuple(given["as_groups"])
        cluster = ClusterSettings(**given)
        check_connection_flags(cluster)
        return func(*args, cluster=cluster, **kwargs)

    for option in reversed(_LIVE_OPTIONS):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]
