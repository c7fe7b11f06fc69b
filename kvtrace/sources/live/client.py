"""The live cluster connection: the only module that imports the ``kubernetes`` client.

Configuration comes from kubeconfig (``--kubeconfig``, else every file in ``$KUBECONFIG``, else
``~/.kube/config``; ``--context``) or, inside a pod, from the service account. Every request goes
through :meth:`Connection.send`, which refuses anything but ``GET`` and never touches Secrets,
``exec``, ``attach``, ``portforward`` or ``proxy`` subresources.

The typed API classes of client v37 validate responses with pydantic models and raise on objects
missing fields (KubeVirt CRs are not typed at all), so kvtrace never deserialises through them: it
calls ``ApiClient.call_api`` and reads the raw response (``preload_content=False`` underneath)
itself. urllib3's own retries are off; ``kvtrace/sources/live/api.py`` owns retries and paging.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from kvtrace import __version__
from kvtrace.errors import (
    ClusterError,
    NoClusterConfigured,
    ReadOnlyViolation,
    TransientError,
    UsageError,
)
from kvtrace.sources.live.settings import ClusterSettings

DEFAULT_KUBECONFIG = "~/.kube/config"
SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
# Path segments kvtrace must never request, whatever a caller asks for (read-only, no Secrets).
_REFUSED_SEGMENTS = frozenset({"secrets", "exec", "attach", "portforward", "proxy", "eviction"})
_ERROR_BODY_CAP = 64 * 1024


class RawResponse:
    """One HTTP response, body not yet read. Always :meth:`close` it (returns the connection)."""

    def __init__(self, inner: Any, path: str) -> None:
        self._inner, self.path = inner, path
        self.status: int = int(inner.status)
        self.headers: Any = inner.headers
        self._consumed = False

    def read(self) -> bytes:
        try:
            body = bytes(self._inner.read())
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientError(f"GET {self.path}: {describe(exc)}") from None
        self._consumed = True
        return body

    def error_body(self) -> bytes:
        try:
            return bytes(self._inner.read(_ERROR_BODY_CAP))
        except (urllib3.exceptions.HTTPError, OSError):
            return b""

    def chunks(self, size: int) -> Iterator[bytes]:
        """The body in pieces of at most ``size`` bytes: never the whole body in memory."""
        try:
            yield from self._inner.stream(size, decode_content=True)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientError(f"GET {self.path}: {describe(exc)}") from None
        self._consumed = True

    def close(self) -> None:
        """Return the connection to the pool, or close it when the body was not read to the end
        (an error body, an interrupted stream): a half-read connection is never reused."""
        if not self._consumed:
            self._inner.close()
        self._inner.release_conn()


class Connection:
    """An authenticated, read-only connection to one API server."""

    def __init__(
        self,
        settings: ClusterSettings,
        configuration: Any,
        context: str | None,
        namespace: str,
        in_cluster: bool = False,
    ) -> None:
        configuration.retries = False  # live/api.py decides what to retry, and how often
        configuration.debug = False  # the client's debug log prints headers: never
        self._api = k8s_client.ApiClient(configuration)
        self._configuration = configuration
        self._settings = settings
        self.context = context
        self.default_namespace = namespace
        self.server = _server_name(str(configuration.host))
        self.in_cluster = in_cluster  # credentials from the pod's service account

    def send(self, method: str, path: str, query: Sequence[tuple[str, str]] = ()) -> RawResponse:
        """The one place a request leaves kvtrace. GET only, refused paths never sent."""
        if method != "GET":
            raise ReadOnlyViolation(f"refused {method} {path}: kvtrace only reads (GET)")
        _refuse_unsafe(path)
        url = self._configuration.host + path + (f"?{urlencode(query)}" if query else "")
        try:
            response = self._api.call_api(
                "GET", url, header_params=self._headers(), _request_timeout=self._timeout()
            )
        except ApiException as exc:  # raised by the REST layer for TLS failures only
            raise ClusterError(
                f"TLS with {self.server} failed: {exc.reason}; check the cluster's "
                "certificate-authority in the kubeconfig"
            ) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientError(f"GET {path}: {describe(exc)}") from None
        return RawResponse(response.response, path)

    def _headers(self) -> urllib3.HTTPHeaderDict:
        headers = urllib3.HTTPHeaderDict(
            {"Accept": "application/json, */*", "User-Agent": f"kvtrace/{__version__}"}
        )
        for auth in self._configuration.auth_settings().values():
            headers[auth["key"]] = auth["value"]
        if self._settings.as_user:
            headers["Impersonate-User"] = self._settings.as_user
        for group in self._settings.as_groups:
            headers.add("Impersonate-Group", group)
        return headers

    def _timeout(self) -> tuple[float, float] | None:
        seconds = self._settings.request_timeout
        return (seconds, seconds) if seconds > 0 else None

    def close(self) -> None:
        self._api.close()  # type: ignore[no-untyped-call]


def connect(settings: ClusterSettings) -> Connection:
    """A connection as kubectl would make it: kubeconfig and context, else in-cluster config."""
    configuration = k8s_client.Configuration()
    paths = settings.kubeconfig or os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG
    if _any_file(paths):
        context, namespace = _load_kubeconfig(paths, settings.context, configuration)
        return Connection(settings, configuration, context, namespace)
    if settings.kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        namespace = _load_in_cluster(configuration)
        return Connection(settings, configuration, None, namespace, in_cluster=True)
    raise NoClusterConfigured(_no_cluster_message(settings, paths))


def _any_file(paths: str) -> bool:
    return any(p and Path(p).expanduser().is_file() for p in paths.split(os.pathsep))


def _no_cluster_message(settings: ClusterSettings, paths: str) -> str:
    if settings.kubeconfig:
        return f"--kubeconfig {paths}: no such file"
    where = "$KUBECONFIG" if os.environ.get("KUBECONFIG") else "~/.kube/config ($KUBECONFIG unset)"
    return f"no kubeconfig at {where} and not running in a pod"


def _load_kubeconfig(paths: str, context: str | None, configuration: Any) -> tuple[str | None, str]:
    try:
        contexts, current = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=paths
        )
        chosen = _chosen_context(contexts, current, context, paths)
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=paths,
            context=context,
            client_configuration=configuration,
            persist_config=False,  # never write to the user's kubeconfig
        )
    except ConfigException as exc:
        raise ClusterError(
            f"kubeconfig {paths}: {exc}; fix the file or pass --kubeconfig"
        ) from None
    namespace = (chosen.get("context") or {}).get("namespace") or "default"
    return chosen.get("name"), str(namespace)


def _chosen_context(
    contexts: list[dict[str, Any]], current: dict[str, Any] | None, wanted: str | None, paths: str
) -> dict[str, Any]:
    if wanted is None:
        if not current:
            raise ClusterError(f"kubeconfig {paths} has no current-context; pass --context NAME")
        return current
    for candidate in contexts:
        if candidate.get("name") == wanted:
            return candidate
    names = ", ".join(sorted(str(c.get("name")) for c in contexts)) or "none"
    raise UsageError(f"no context {wanted!r} in kubeconfig {paths} (contexts: {names})")


def _load_in_cluster(configuration: Any) -> str:
    try:
        k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
            client_configuration=configuration
        )
    except ConfigException as exc:
        raise ClusterError(f"in-cluster configuration: {exc}") from None
    try:
        return SA_NAMESPACE.read_text().strip() or "default"
    except OSError:
        return "default"


def _refuse_unsafe(path: str) -> None:
    segments = set(urlsplit(path).path.split("/"))
    refused = segments & _REFUSED_SEGMENTS
    if refused:
        raise ReadOnlyViolation(f"refused GET {path}: kvtrace never reads {sorted(refused)[0]}")


def _server_name(host: str) -> str:
    return urlsplit(host).netloc or host


def describe(exc: BaseException) -> str:
    """A short reason for a network failure, without URLs' query strings or headers."""
    if isinstance(exc, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
        return "cannot connect to the API server"
    if isinstance(exc, urllib3.exceptions.TimeoutError | TimeoutError):
        return "timed out waiting for the API server"
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return "connection dropped by the API server"
    return type(exc).__name__
