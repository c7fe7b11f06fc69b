"""The live cluster connection: the only module that imports the ``kubernetes`` client.

Configuration comes from kubeconfig (``--kubeconfig``, else every file in ``$KUBECONFIG``, else
``~/.kube/config``; ``--context``) or, inside a pod, from the service account. Every request goes
through :meth:`Connection.send`, which refuses anything but ``GET`` and never touches Secrets,
``exec``, ``attach``, ``portforward`` or ``proxy`` subresources: it checks the decoded,
normalised path against the reads of docs/collect.md (:func:`check_path`). The server URL's
``user:password@`` is never used or shown, and the library's log lines never reach a terminal
(:mod:`kvtrace.sources.live.library_log`).

The typed API classes of client v37 validate responses with pydantic models and raise on objects
missing fields (KubeVirt CRs are not typed at all), so kvtrace never deserialises through them: it
calls ``ApiClient.call_api`` and reads the raw response (``preload_content=False`` underneath)
itself. urllib3's own retries are off; ``kvtrace/sources/live/api.py`` owns retries and paging.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.kube_config import KubeConfigLoader, KubeConfigMerger

from kvtrace import __version__
from kvtrace.errors import (
    ClusterError,
    NoClusterConfigured,
    ReadOnlyViolation,
    TransientError,
    UnsafeResponse,
    UsageError,
)
from kvtrace.sources.live.deadline import Deadline, sending, watch_pools
from kvtrace.sources.live.library_log import quiet_library_logs
from kvtrace.sources.live.limits import ENV_MAX_RESPONSE_BYTES
from kvtrace.sources.live.names import is_label, is_subdomain, shown
from kvtrace.sources.live.plan import RESOURCES
from kvtrace.sources.live.settings import ClusterSettings

DEFAULT_KUBECONFIG = "~/.kube/config"
SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
# Path segments kvtrace must never request, whatever a caller asks for (read-only, no Secrets).
_REFUSED_SEGMENTS = frozenset({"secrets", "exec", "attach", "portforward", "proxy", "eviction"})
_ERROR_BODY_CAP = 64 * 1024
_READ_STEP = 256 * 1024
_NOT_SHOWN = "kvtrace does not show what it printed: it may hold a token"
_TIMEOUTS = (urllib3.exceptions.TimeoutError, TimeoutError)
_READABLE = {(r.group, v, r.plural): r for r in RESOURCES.values() for v in r.versions}
_USERINFO = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@")


_LIBRARY_LOG = quiet_library_logs()


class RawResponse:
    """One HTTP response, body not yet read. Always :meth:`close` it (returns the connection)."""

    def __init__(self, inner: Any, path: str, deadline: Deadline | None = None) -> None:
        self._inner, self.path = inner, path
        self.status: int = int(inner.status)
        self.headers: Any = inner.headers
        self.deadline = deadline
        self._consumed = False

    def read(self, cap: int) -> bytes:
        """The whole body, at most ``cap`` bytes: past it, :class:`UnsafeResponse` (the rest is
        never read, the connection is closed)."""
        declared = str(self.headers.get("Content-Length") or "")
        if declared.isdigit() and int(declared) > cap:
            raise UnsafeResponse(_too_large(self.path, cap))
        body = bytearray()
        for chunk in self.chunks(_READ_STEP):
            body += chunk
            if len(body) > cap:
                raise UnsafeResponse(_too_large(self.path, cap))
        return bytes(body)

    def error_body(self) -> bytes:
        """The start of an error answer (for its message), within the request's deadline."""
        body = bytearray()
        try:
            for chunk in self.chunks(_ERROR_BODY_CAP):
                body += chunk
                if len(body) >= _ERROR_BODY_CAP:
                    break
        except TransientError:
            pass  # what arrived in time is enough for a message
        return bytes(body[:_ERROR_BODY_CAP])

    def chunks(self, size: int) -> Iterator[bytes]:
        """The body in pieces of at most ``size`` bytes: never the whole body in memory.

        Each piece is what one socket read gave (``read1``), so the request's deadline is checked
        however slowly the server drips its bytes: the socket timeout alone restarts with each.
        """
        while True:
            if self.deadline is not None:
                self.deadline.check(self.path)
            try:
                chunk = self._inner.read1(size, decode_content=True)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise TransientError(f"GET {self.path}: {describe(exc)}") from None
            if not chunk:
                break
            yield bytes(chunk)
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
        # user:password@ in the server URL: never sent that way by the client, never shown
        configuration.host = without_userinfo(str(configuration.host))
        self._api = k8s_client.ApiClient(configuration)
        watch_pools(self._api.rest_client.pool_manager)
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
        check_path(path)
        headers = self._headers()  # may refresh credentials, which resets the host: then the URL
        host = without_userinfo(str(self._configuration.host))
        url = host + path + (f"?{urlencode(query)}" if query else "")
        seconds = self._settings.request_timeout
        deadline = Deadline(seconds) if seconds > 0 else None
        try:
            with sending(deadline):
                response = self._api.call_api(
                    "GET", url, header_params=headers, _request_timeout=self._timeout()
                )
        except ApiException as exc:  # raised by the REST layer for TLS failures only
            raise ClusterError(
                f"TLS with {self.server} failed: {without_userinfo(str(exc.reason))}; check the "
                "cluster's "
                "certificate-authority in the kubeconfig"
            ) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if deadline is not None and deadline.passed:  # the socket timeout or the watchdog
                raise deadline.error(path) from None
            raise TransientError(f"GET {path}: {describe(exc)}") from None
        return RawResponse(response.response, path, deadline)

    def _headers(self) -> urllib3.HTTPHeaderDict:
        headers = urllib3.HTTPHeaderDict(
            {"Accept": "application/json, */*", "User-Agent": f"kvtrace/{__version__}"}
        )
        failures = len(_LIBRARY_LOG.exec_failures)
        for auth in self._configuration.auth_settings().values():  # refreshes an expired token
            headers[auth["key"]] = auth["value"]
        if len(_LIBRARY_LOG.exec_failures) > failures:
            raise ClusterError(
                "the kubeconfig's exec credential plugin failed to refresh the token: "
                f"{_LIBRARY_LOG.exec_failures[-1]}; run its command yourself to see why "
                f"({_NOT_SHOWN})"
            )
        if self._settings.as_user:
            headers["Impersonate-User"] = self._settings.as_user
        for group in self._settings.as_groups:
            headers.add("Impersonate-Group", group)
        if self._settings.as_uid:
            headers["Impersonate-Uid"] = self._settings.as_uid
        return headers

    def _timeout(self) -> tuple[float, float] | None:
        seconds = self._settings.request_timeout
        return (seconds, seconds) if seconds > 0 else None

    def close(self) -> None:
        self._api.close()  # type: ignore[no-untyped-call]


def connect(settings: ClusterSettings) -> Connection:
    """A connection as kubectl would make it: kubeconfig, context, then the flags over them
    (``--cluster``, ``--user``, ``--server``, ``--token``, ``--certificate-authority``,
    ``--insecure-skip-tls-verify``); with no kubeconfig, ``--server`` alone, else the pod's
    in-cluster configuration."""
    configuration = k8s_client.Configuration()
    paths = settings.kubeconfig or os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG
    in_cluster = False
    if _any_file(paths):
        context, namespace = _load_kubeconfig(paths, settings, configuration)
    elif settings.kubeconfig is None and settings.server:
        context, namespace = None, "default"  # kubectl --server URL --token T: no kubeconfig
    elif settings.kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        context, namespace, in_cluster = None, _load_in_cluster(configuration), True
    else:
        raise NoClusterConfigured(_no_cluster_message(settings, paths))
    _apply_flags(settings, configuration)
    return Connection(settings, configuration, context, namespace, in_cluster=in_cluster)


def _apply_flags(settings: ClusterSettings, configuration: Any) -> None:
    """The command line over the kubeconfig, as kubectl's flags override it."""
    if settings.server:
        configuration.host = settings.server.rstrip("/")
    if settings.token:
        configuration.refresh_api_key_hook = None  # the kubeconfig's token never comes back
        configuration.api_key = {"BearerToken": f"Bearer {settings.token}"}
        configuration.api_key_prefix = {}
    if settings.certificate_authority:
        ca = Path(settings.certificate_authority).expanduser()
        if not ca.is_file():
            raise UsageError(f"--certificate-authority {shown(str(ca))}: no such file")
        configuration.ssl_ca_cert = str(ca)
        configuration.verify_ssl = True
    if settings.insecure_skip_tls_verify:
        configuration.verify_ssl = False
        configuration.ssl_ca_cert = None
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # said once, below
        print(
            "warning: --insecure-skip-tls-verify: the API server's certificate is not checked",
            file=sys.stderr,
        )


def _any_file(paths: str) -> bool:
    return any(p and Path(p).expanduser().is_file() for p in paths.split(os.pathsep))


def _no_cluster_message(settings: ClusterSettings, paths: str) -> str:
    if settings.kubeconfig:
        return f"--kubeconfig {paths}: no such file"
    where = "$KUBECONFIG" if os.environ.get("KUBECONFIG") else "~/.kube/config ($KUBECONFIG unset)"
    return f"no kubeconfig at {where} and not running in a pod (or give --server URL --token T)"


def _load_kubeconfig(
    paths: str, settings: ClusterSettings, configuration: Any
) -> tuple[str | None, str]:
    """Every file of ``paths`` merged as kubectl merges them; the context (``--context``, else
    the current one) with ``--cluster`` / ``--user`` in place of its own."""
    failures = len(_LIBRARY_LOG.exec_failures)
    try:
        merged = KubeConfigMerger(paths).config  # type: ignore[no-untyped-call]
        if merged is None:
            raise ConfigException("no configuration found")
        entries = {str(c.value.get("name")): c.value for c in merged.value.get("contexts") or []}
        chosen = _chosen_context(entries, merged.value.get("current-context"), settings, paths)
        _override(chosen, merged.value, settings, paths)
        loader = KubeConfigLoader(  # type: ignore[no-untyped-call]
            config_dict=merged, active_context=chosen["name"], config_base_path=None
        )  # no persister: kvtrace never writes to the user's kubeconfig
        loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
    except ConfigException as exc:
        raise ClusterError(
            f"kubeconfig {paths}: {without_userinfo(str(exc))}; fix the file or pass --kubeconfig"
        ) from None
    if len(_LIBRARY_LOG.exec_failures) > failures:
        raise ClusterError(_exec_failed(paths, chosen, _LIBRARY_LOG.exec_failures[-1]))
    namespace = (chosen.get("context") or {}).get("namespace") or "default"
    return chosen.get("name"), str(namespace)


def _override(
    chosen: dict[str, Any], config: dict[str, Any], settings: ClusterSettings, paths: str
) -> None:
    """``--cluster`` / ``--user``: another entry of the kubeconfig for this run (in memory)."""
    for flag, section, wanted in (
        ("--cluster", "clusters", settings.cluster),
        ("--user", "users", settings.user),
    ):
        if wanted is None:
            continue
        names = sorted(str(entry["name"]) for entry in config.get(section) or [])
        if wanted not in names:
            listed = ", ".join(names) or "none"  # the user's own kubeconfig: shown as written
            raise UsageError(
                f"{flag} {shown(wanted)}: no such {section[:-1]} in kubeconfig {paths} "
                f"({section}: {listed})"
            )
        chosen["context"] = {**(chosen.get("context") or {}), section[:-1]: wanted}


def _exec_failed(paths: str, chosen: dict[str, Any], why: str) -> str:
    user = (chosen.get("context") or {}).get("user") or "of the context"
    return (
        f"kubeconfig {paths}: the exec credential plugin of user {shown(str(user))} failed: {why};"
        f" run its command yourself to see why ({_NOT_SHOWN})"
    )


def _chosen_context(
    contexts: dict[str, dict[str, Any]],
    current: str | None,
    settings: ClusterSettings,
    paths: str,
) -> dict[str, Any]:
    wanted = settings.context or current
    if wanted and wanted in contexts:
        return contexts[wanted]
    if settings.context is None:
        raise ClusterError(f"kubeconfig {paths} has no current-context; pass --context NAME")
    names = ", ".join(sorted(contexts)) or "none"
    raise UsageError(f"no context {settings.context!r} in kubeconfig {paths} (contexts: {names})")


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


def check_path(path: str) -> None:
    """Refuse, before sending, any path that is not one of the reads of docs/collect.md.

    The check is on the percent-decoded, dot-segment-normalised path, as the server will route
    it: ``..`` or an encoded ``%2F`` in a segment would otherwise reach another resource.
    """
    decoded = unquote(path)
    if decoded != path or posixpath.normpath(path) != path or not path.startswith("/"):
        raise ReadOnlyViolation(
            f"refused GET {shown(path)}: encoded characters or dot segments in the path"
        )
    parts = path.strip("/").split("/")
    refused = sorted(set(parts) & _REFUSED_SEGMENTS)
    if refused:
        raise ReadOnlyViolation(f"refused GET {shown(path)}: kvtrace never reads {refused[0]}")
    if not _route_allowed(parts):
        raise ReadOnlyViolation(f"refused GET {shown(path)}: not a resource kvtrace reads")


def _route_allowed(parts: list[str]) -> bool:
    """``/version``, or a list / get / ``pods/<name>/log`` of a kind in :data:`RESOURCES`."""
    if parts == ["version"]:
        return True
    if parts[:2] == ["api", "v1"]:
        group, rest = ("", "v1"), parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, rest = (parts[1], parts[2]), parts[3:]
    else:
        return False
    namespaced = rest[:1] == ["namespaces"] and len(rest) >= 3
    if namespaced and not is_label(rest[1]):
        return False
    rest = rest[2:] if namespaced else rest
    resource = _READABLE.get((*group, rest[0])) if rest else None
    if resource is None or (namespaced and not resource.namespaced) or len(rest) > 3:
        return False
    if len(rest) == 1:
        return True
    return is_subdomain(rest[1]) and (
        len(rest) == 2 or (rest[2], resource.plural) == ("log", "pods")
    )


def without_userinfo(text: str) -> str:
    """``https://user:password@host`` → ``https://host``, in a URL or a message quoting one."""
    return _USERINFO.sub(r"\1", text)


def _server_name(host: str) -> str:
    return urlsplit(without_userinfo(host)).netloc or host


def _too_large(path: str, cap: int) -> str:
    return (
        f"GET {path}: the response is larger than {cap} bytes; if the cluster is that big, raise "
        f"the cap with {ENV_MAX_RESPONSE_BYTES}=<bytes> or narrow the scope with -n or --vm"
    )


def describe(exc: BaseException) -> str:
    """A short reason for a network failure, without URLs' query strings or headers."""
    if isinstance(exc, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
        return "cannot connect to the API server"
    if isinstance(exc, _TIMEOUTS):
        return "timed out waiting for the API server"
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return "connection dropped by the API server"
    return type(exc).__name__
