"""Evidence from a live cluster: collect into kvtrace's temp space, then read it as a bundle.

Live and offline runs share one pipeline: ``kvtrace collect``'s code writes a kvtrace bundle into a
private ``kvtrace-*`` directory and the kvtrace bundle reader turns it into the same
:class:`Evidence` a saved bundle gives, so every command (``timeline``, ``check``, and any command
that opens evidence through ``kvtrace.sources.opener.open_evidence``) works live unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kvtrace.evidence import Evidence
from kvtrace.sources.live.settings import ClusterSettings, CollectScope


@contextmanager
def open_live(settings: ClusterSettings, scope: CollectScope) -> Iterator[Evidence]:
    """Collect ``scope`` read-only; the temp bundle is removed when the context exits."""
    from kvtrace.sources.bundle import open_bundle
    from kvtrace.sources.live.client import connect
    from kvtrace.sources.live.collect import collect_bundle
    from kvtrace.sources.live.progress import Progress
    from kvtrace.sources.safety import temp_space

    connection = connect(settings)
    try:
        with temp_space() as scratch:
            progress = Progress(enabled=not (settings.quiet or settings.verbose))
            try:
                collect_bundle(connection, scope, settings, scratch / "bundle", progress)
            finally:
                progress.close()
            with open_bundle(scratch / "bundle") as evidence:
                evidence.origin = f"live cluster {connection.context or connection.server}"
                yield evidence
    finally:
        connection.close()


def default_namespace(settings: ClusterSettings) -> str:
    """The kubeconfig context's namespace (or the pod's), as ``-n`` would default in kubectl."""
    from kvtrace.sources.live.client import connect

    connection = connect(settings)
    try:
        return connection.default_namespace
    finally:
        connection.close()
