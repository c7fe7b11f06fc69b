"""Where every command gets its evidence: a bundle, log files, both, or the live cluster."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from kvtrace.errors import NoClusterConfigured, UsageError
from kvtrace.evidence import Evidence
from kvtrace.sources.live.settings import ClusterSettings, CollectScope


@contextmanager
def open_evidence(
    bundle: str | None,
    logs: Sequence[str],
    cluster: ClusterSettings | None = None,
    scope: CollectScope | None = None,
    only: tuple[str, str] | None = None,
) -> Iterator[Evidence]:
    """Open a bundle and/or log files as one Evidence (temp space removed on exit).

    With neither, read the live cluster (``cluster`` flags, ``scope`` to collect; defaults:
    the kubeconfig's current context and namespace) through the same bundle reader.
    ``only`` (namespace, name): a hint that one VM's timeline is all that is wanted, so a
    bundle's objects of other VMs need not be decoded.
    """
    from kvtrace.sources.bundle import open_bundle
    from kvtrace.sources.logfiles import open_logs

    if not bundle and not logs:
        with _open_live(cluster or ClusterSettings(), scope or CollectScope()) as live:
            yield live
        return
    with ExitStack() as stack:
        evidence = stack.enter_context(open_bundle(Path(bundle), only=only)) if bundle else None
        extra = stack.enter_context(open_logs(list(logs))) if logs else None
        yield _merge(evidence, extra)


def _merge(bundle: Evidence | None, logs: Evidence | None) -> Evidence:
    if bundle is None:
        assert logs is not None
        return logs
    if logs is not None:
        bundle.logs = [*bundle.logs, *logs.logs]
    return bundle


@contextmanager
def _open_live(cluster: ClusterSettings, scope: CollectScope) -> Iterator[Evidence]:
    from kvtrace.sources.live.evidence import open_live

    with ExitStack() as stack:
        try:
            evidence = stack.enter_context(open_live(cluster, scope))
        except NoClusterConfigured as exc:
            raise UsageError(
                "no evidence given: use --bundle PATH (a kvtrace bundle, must-gather or log dir) "
                "or --log FILE (repeatable; '-' for stdin), or give access to a cluster "
                f"(--kubeconfig, $KUBECONFIG): {exc}"
            ) from None
        yield evidence


def live_namespace(bundle: str | None, logs: Sequence[str], cluster: ClusterSettings) -> str | None:
    """In live mode, the namespace ``-n`` defaults to (the context's); None offline."""
    if bundle or logs:
        return None
    from kvtrace.sources.live.evidence import default_namespace

    try:
        return default_namespace(cluster)
    except NoClusterConfigured:
        return None  # open_evidence reports it, with the offline alternatives
