"""kvtrace's typed errors and their one mapping to exit codes.

0 ok, 1 error, 2 usage, 3 findings present. Every message names the object and the fix.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3


class KvtraceError(Exception):
    """Base class: a problem the user can act on. Never shown as a traceback."""

    exit_code = EXIT_ERROR


class UsageError(KvtraceError):
    """The command line is wrong (bad flag value, bad NS/NAME)."""

    exit_code = EXIT_USAGE


class InputError(KvtraceError):
    """A bundle, file or stream cannot be read as evidence."""


class UnsafeBundleError(InputError):
    """A bundle tries to leave its directory, or exceeds a decompression bound."""


class NotFoundError(KvtraceError):
    """The object asked for does not exist in the evidence."""
