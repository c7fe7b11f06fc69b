"""A total deadline per request (``--request-timeout``), however slowly a server answers.

A socket timeout restarts with every byte received, so a server sending one byte a second
never trips it. The deadline is checked before each socket read of the body
(:meth:`RawResponse.chunks` reads with ``read1``); while the status line and headers are being
read, and while connecting (a TLS handshake can be dripped too), a watchdog timer shuts the
socket down when the deadline passes (:func:`watch_pools` makes urllib3's pools use
:class:`_Watched` connections).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from kvtrace.errors import TransientError

_current = threading.local()  # the deadline of the request this thread is sending


class Deadline:
    """The total time one request may take, body included."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    @property
    def passed(self) -> bool:
        return time.monotonic() > self.ends

    def check(self, path: str) -> None:
        if self.passed:
            raise self.error(path)

    def error(self, path: str) -> TransientError:
        return TransientError(
            f"GET {path}: timed out waiting for the API server (the whole response took more "
            f"than {self.seconds:g}s)"
        )


@contextmanager
def sending(deadline: Deadline | None) -> Iterator[None]:
    """Requests sent on this thread inside the block are watched against ``deadline``."""
    _current.deadline = deadline
    try:
        yield
    finally:
        _current.deadline = None


class _Watched:
    """Connects (TCP and TLS handshake) and reads the status line and headers under a watchdog
    that shuts the socket down at the deadline."""

    sock: Any

    def connect(self) -> None:
        with self._watchdog():
            super().connect()  # type: ignore[misc]

    def getresponse(self) -> Any:
        with self._watchdog():
            return super().getresponse()  # type: ignore[misc]

    @contextmanager
    def _watchdog(self) -> Iterator[None]:
        deadline: Deadline | None = getattr(_current, "deadline", None)
        if deadline is None:
            yield
            return
        timer = threading.Timer(max(0.0, deadline.ends - time.monotonic()), self._cut)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _cut(self) -> None:
        # connect() sets ``sock`` to the TCP socket before the TLS handshake, so a dripped
        # handshake is cut too
        with contextlib.suppress(OSError, AttributeError):
            self.sock.shutdown(socket.SHUT_RDWR)


class _WatchedHTTP(_Watched, HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTP


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPS


def watch_pools(pool_manager: urllib3.PoolManager) -> None:
    """Make every pool of ``pool_manager`` use watched connections."""
    pool_manager.pool_classes_by_scheme = {
        "http": _WatchedHTTPPool,
        "https": _WatchedHTTPSPool,
    }
