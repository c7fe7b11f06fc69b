"""The one pipeline every command runs: sources → parsers → records → timeline → render."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from kvtrace.errors import UsageError
from kvtrace.sources.model import Evidence


@contextmanager
def open_evidence(bundle: str | None, logs: Sequence[str]) -> Iterator[Evidence]:
    """Open a bundle and/or log files as one Evidence (temp space removed on exit)."""
    from kvtrace.sources.bundle import open_bundle, open_logs

    if not bundle and not logs:
        raise UsageError(
            "no evidence given: use --bundle PATH (a kvtrace bundle, must-gather or log dir) "
            "or --log FILE (repeatable; '-' for stdin). "
            "Reading a live cluster is not available yet."
        )
    with ExitStack() as stack:
        evidence = stack.enter_context(open_bundle(Path(bundle))) if bundle else None
        extra = stack.enter_context(open_logs(list(logs))) if logs else None
        yield _merge(evidence, extra)


def _merge(bundle: Evidence | None, logs: Evidence | None) -> Evidence:
    if bundle is None:
        assert logs is not None
        return logs
    if logs is not None:
        bundle.logs = [*bundle.logs, *logs.logs]
    return bundle
