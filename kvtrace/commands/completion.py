"""Shell completion of kvtrace's values: paths, kubeconfig contexts, namespaces and VM names.

click drives completion (``_KVTRACE_COMPLETE``, docs/completion.md); these are the callbacks of
the options and arguments that name something. A completion must never be slow and never fail:
each lookup runs in a daemon thread for at most :data:`COMPLETION_SECONDS` and any error gives no
candidates. VM names and namespaces come from a ``--bundle`` directory already on the line, or,
with neither ``--bundle`` nor ``--log``, from the cluster of the kubeconfig (one GET of the VM
list, one attempt, a short timeout). Archives are not unpacked to complete a name.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem

COMPLETION_SECONDS = 1.5
ENV_COMPLETION_SECONDS = "KVTRACE_COMPLETE_SECONDS"  # a slower machine may allow more
LIVE_TIMEOUT = "1s"
T = TypeVar("T")
_NO_KEYS: set[tuple[str, str]] = set()


def complete_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Let the shell complete a path (files and directories)."""
    return [CompletionItem(incomplete, type="file")]


def complete_dir(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    return [CompletionItem(incomplete, type="dir")]


def complete_context(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """The context names of the kubeconfig (``--kubeconfig`` on the line, else the default)."""
    none: list[str] = []
    names = bounded(lambda: _context_names(ctx.params.get("kubeconfig")), none)
    return [CompletionItem(n) for n in sorted(names) if n.startswith(incomplete)]


def complete_namespace(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    keys = bounded(lambda: _vm_keys(ctx), _NO_KEYS)
    namespaces = sorted({ns for ns, _ in keys})
    return [CompletionItem(ns) for ns in namespaces if ns.startswith(incomplete)]


def complete_vm(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """``NS/NAME`` of every VM, or the bare names of ``-n``'s namespace."""
    keys = bounded(lambda: _vm_keys(ctx), _NO_KEYS)
    namespace = ctx.params.get("namespace")
    if namespace and "/" not in incomplete:
        shown = sorted(name for ns, name in keys if ns == namespace)
    else:
        shown = sorted(f"{ns}/{name}" for ns, name in keys)
    return [CompletionItem(v) for v in shown if v.startswith(incomplete)]


def bounded(lookup: Callable[[], T], fallback: T, seconds: float | None = None) -> T:
    """``lookup()`` if it answers within ``seconds`` (default :data:`COMPLETION_SECONDS`, or
    ``$KVTRACE_COMPLETE_SECONDS``) without raising, else ``fallback``."""
    if seconds is None:
        seconds = _allowed_seconds()
    answer: list[T] = []

    def work() -> None:
        try:
            answer.append(lookup())
        except BaseException:  # a completion never fails: no candidates instead
            return

    worker = threading.Thread(target=work, name="kvtrace-complete", daemon=True)
    worker.start()
    worker.join(seconds)
    return answer[0] if answer else fallback


def _allowed_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_COMPLETION_SECONDS, COMPLETION_SECONDS)))
    except ValueError:
        return COMPLETION_SECONDS


def _context_names(kubeconfig: str | None) -> list[str]:
    configs = _kubeconfigs(kubeconfig)
    return [str(e["name"]) for c in configs for e in c.get("contexts") or [] if e.get("name")]


def _kubeconfigs(kubeconfig: str | None) -> list[dict[str, Any]]:
    import yaml

    paths = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    found = []
    for path in paths.split(os.pathsep):
        file = Path(path).expanduser()
        if path and file.is_file():
            loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
            found.append(loaded if isinstance(loaded, dict) else {})
    return found


def _static_credentials(kubeconfig: str | None, context: str | None) -> bool:
    """True when the context's user holds its credentials (a token or a client certificate):
    an exec or auth-provider plugin may prompt, open a browser or take seconds."""
    configs = _kubeconfigs(kubeconfig)
    current = [c["current-context"] for c in configs if c.get("current-context")]
    wanted = context or (current[0] if current else None)
    entries = [e for c in configs for e in c.get("contexts") or [] if e.get("name") == wanted]
    if not entries:
        return False
    user_name = (entries[0].get("context") or {}).get("user")
    users = [u for c in configs for u in c.get("users") or [] if u.get("name") == user_name]
    user = (users[0].get("user") or {}) if users else {}
    return not ({"exec", "auth-provider"} & set(user))


def _vm_keys(ctx: click.Context) -> set[tuple[str, str]]:
    bundles = ctx.params.get("bundles") or ()  # check takes several
    bundle, logs = ctx.params.get("bundle") or next(iter(bundles), None), ctx.params.get("logs")
    if bundle:
        return _bundle_vm_keys(Path(bundle))
    if logs:
        return set()  # log lines name VMs only after parsing: too slow for a completion
    return _live_vm_keys(ctx.params)


def _bundle_vm_keys(bundle: Path) -> set[tuple[str, str]]:
    if not bundle.is_dir():
        return set()  # an archive would have to be unpacked
    from kvtrace.evidence import VM
    from kvtrace.sources.bundle import open_bundle

    with open_bundle(bundle) as evidence:
        return {(o.namespace or "default", o.name) for o in evidence.of_kind(VM)}


def _live_vm_keys(params: dict[str, Any]) -> set[tuple[str, str]]:
    from kvtrace.evidence import VM
    from kvtrace.sources.live.api import ApiReader, RetryPolicy
    from kvtrace.sources.live.client import connect
    from kvtrace.sources.live.plan import RESOURCES
    from kvtrace.sources.live.settings import ClusterSettings, parse_request_timeout

    settings = ClusterSettings(
        kubeconfig=params.get("kubeconfig"),
        context=params.get("context"),
        request_timeout=parse_request_timeout(LIVE_TIMEOUT),
    )
    if not _static_credentials(settings.kubeconfig, settings.context):
        return set()
    connection = connect(settings)
    try:
        namespace = params.get("namespace") or connection.default_namespace
        path = RESOURCES[VM].path(None if params.get("all_namespaces") else namespace)
        reader = ApiReader(connection, RetryPolicy(attempts=1))
        items = reader.list_items(path).items
    finally:
        connection.close()
    keys = set()
    for item in items:
        meta = item.get("metadata") or {}
        if meta.get("name"):
            keys.add((str(meta.get("namespace") or "default"), str(meta["name"])))
    return keys
