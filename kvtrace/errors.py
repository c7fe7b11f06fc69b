"""kvtrace's typed errors, each carrying its exit code: the one home of every exception kvtrace
raises on purpose, and of the one mapping to exit codes.

0 ok, 1 error, 2 usage, 3 findings present. Every message names the object and the fix. The
entry point (:mod:`kvtrace.cli`) prints a :class:`KvtraceError` as one line and exits with its
``exit_code``; :class:`FindingsPresent` is how every command says "the output shows findings".
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3


class KvtraceError(Exception):
    """Base class: a problem the user can act on. Never shown as a traceback."""

    exit_code = EXIT_ERROR


class FindingsPresent(KvtraceError):
    """The command ran and its output reports findings (a violation, an unhealthy lease, a
    mismatch, something not collected). Nothing more is printed: the output said it."""

    exit_code = EXIT_FINDINGS


class UsageError(KvtraceError):
    """The command line is wrong (bad flag value, bad NS/NAME)."""

    exit_code = EXIT_USAGE


class InputError(KvtraceError):
    """A bundle, file or stream cannot be read as evidence."""


class UnsafeBundleError(InputError):
    """A bundle tries to leave its directory, or exceeds a decompression bound."""


class SizeCapExceeded(UnsafeBundleError):
    """A decompressed stream grew past its cap (for example a gzip bomb)."""


class OutputError(KvtraceError):
    """The result cannot be written (a missing directory, a full disk, a closed terminal)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every temp directory, staging directory and
    the kubernetes client's credential files are removed as on Ctrl-C (exit 143)."""


class NotFoundError(KvtraceError):
    """The object asked for does not exist in the evidence."""


# --- the live cluster -------------------------------------------------------------------------


class ClusterError(KvtraceError):
    """The cluster cannot be reached or refuses us (kubeconfig, TLS, credentials, RBAC)."""


class NoClusterConfigured(UsageError):
    """Neither a kubeconfig nor an in-cluster service account is available."""


class ReadOnlyViolation(ClusterError):
    """A code path tried a non-GET request or a refused resource: a kvtrace bug, never sent."""


class TransientError(ClusterError):
    """The request did not complete (timeout, reset, refused connection): worth retrying."""


class ApiError(ClusterError):
    """The API server answered a request with an error status."""

    def __init__(self, status: int, path: str, message: str) -> None:
        super().__init__(f"GET {path}: {status} {message}")
        self.status, self.path, self.message = status, path, message

    @property
    def reason(self) -> str:
        """Words for the manifest's ``missing[].reason``."""
        word = {403: "forbidden", 404: "not found", 410: "gone"}.get(self.status, str(self.status))
        return f"{word}: {self.message}" if self.message else word


class Cancelled(ClusterError):
    """Collection was interrupted (Ctrl-C): streams stop at the next chunk."""


class UnsafeResponse(ClusterError):
    """The API server sent what kvtrace refuses to use: a body or log past its cap, a list that
    never stops paging, a name that is not a Kubernetes name (never put in a path or a URL)."""
