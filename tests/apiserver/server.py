"""A Kubernetes API server for tests: real HTTPS, bearer token, RBAC, faults, request log.

It serves a kvtrace bundle's objects and logs to the real ``kubernetes`` client over TLS on
127.0.0.1 (an ephemeral port), one thread per connection, and stops on ``stop()`` or after
``max_lifetime`` seconds, whichever comes first.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import ssl
import threading
from datetime import datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from tests.apiserver.certs import make_tls
from tests.apiserver.faults import Fault, Recorded
from tests.apiserver.handler import Handler
from tests.apiserver.rbac import ALLOW_ALL, Authorizer
from tests.apiserver.store import Store, load_bundle


class ApiHTTPServer(ThreadingHTTPServer):
    """Threading HTTP server; TLS is set up per connection, in the connection's thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, tls: ssl.SSLContext, store: Store, token: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.tls, self.store, self.token = tls, store, token
        self.authorizer: Authorizer = ALLOW_ALL
        self.faults: list[Fault] = []
        self.requests: list[Recorded] = []
        self.now: datetime | None = None
        self.unserved: set[tuple[str, str | None]] = set()  # (group, version or every one)
        self.lock = threading.Lock()

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            request.settimeout(10)
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        # The client went away, or a fault dropped the connection: nothing to answer.
        with contextlib.suppress(TimeoutError, ConnectionError, ssl.SSLError):
            self.RequestHandlerClass(wrapped, client_address, self)


class ApiServer:
    """Start with ``with ApiServer(bundle, workdir) as server:``; ``server.kubeconfig`` is ready."""

    def __init__(self, bundle: Path, workdir: Path, max_lifetime: float = 120.0) -> None:
        self.workdir = workdir
        self.token = "kvt-" + secrets.token_hex(16)
        files = make_tls(workdir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(files.cert, files.key)
        self.ca = files.ca
        self.http = ApiHTTPServer(context, load_bundle(bundle), self.token)
        self.port = self.http.server_address[1]
        self.kubeconfig = self._write_kubeconfig()
        self._thread = threading.Thread(
            target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._timer = threading.Timer(max_lifetime, self.stop)
        self._timer.daemon = True
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def store(self) -> Store:
        return self.http.store

    @property
    def requests(self) -> list[Recorded]:
        with self.http.lock:
            return list(self.http.requests)

    def fault(self, path: str, **kwargs: Any) -> Fault:
        fault = Fault(path, **kwargs)
        self.http.faults.append(fault)
        return fault

    def restrict(self, authorizer: Authorizer) -> None:
        self.http.authorizer = authorizer

    def unserve(self, group: str, version: str | None = None) -> None:
        """Answer 404 for ``group`` (at ``version``, else at every version), as a cluster
        without those CRDs, or with an older release of them, does."""
        self.http.unserved.add((group, version))

    def set_now(self, now: datetime) -> None:
        self.http.now = now

    def start(self) -> ApiServer:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._timer.cancel()
        self.http.shutdown()
        self.http.server_close()

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _write_kubeconfig(self, namespace: str = "default") -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "test",
                    "cluster": {"server": self.url, "certificate-authority": str(self.ca)},
                }
            ],
            "users": [{"name": "kvtrace-reader", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": "test",
                    "context": {
                        "cluster": "test",
                        "user": "kvtrace-reader",
                        "namespace": namespace,
                    },
                }
            ],
            "current-context": "test",
        }
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path
