"""HTTP handling of the test API server: authentication, RBAC, faults, routes, paging, logs."""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tests.apiserver import hostile
from tests.apiserver.faults import Fault, Recorded
from tests.apiserver.selectors import field_matches, label_matches
from tests.apiserver.store import RESOURCES, served_versions

if TYPE_CHECKING:
    from tests.apiserver.server import ApiHTTPServer

CHUNK = 64 * 1024
VERSION = {"major": "1", "minor": "31", "gitVersion": "v1.31.2", "platform": "linux/amd64"}
GROUPS = {
    "apps": "v1",
    "coordination.k8s.io": "v1",
    "kubevirt.io": "v1",
    "pool.kubevirt.io": "v1beta1",
    "snapshot.kubevirt.io": "v1beta1",
}
_NO_RESOURCE = "the server could not find the requested resource"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # bounded: a silent client never holds a thread for long
    server: ApiHTTPServer
    drop_midway = False
    drip = 0.0
    continue_token: str | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def _refuse_method(self) -> None:
        self._arrive()
        self._answer(405, _status(405, "MethodNotAllowed", "the test server is read-only"))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _refuse_method

    # --- request flow ---------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        # A connection is kept alive across requests: a fault's mode holds for one answer only.
        self.drop_midway, self.drip, self.continue_token = False, 0.0, None
        url = urlsplit(self.path)
        self.url_path, self.query = url.path, parse_qs(url.query, keep_blank_values=True)
        self._arrive()
        if not _bearer_matches(self.headers.get("Authorization"), self.server.token):
            return self._answer(401, _status(401, "Unauthorized", "Unauthorized"))
        fault = next((f for f in self.server.faults if f.take(self.url_path, self.query)), None)
        if fault is not None and self._apply(fault):
            return None
        return self._route()

    def _apply(self, fault: Fault) -> bool:
        """True when the fault answered the request (or dropped it)."""
        if fault.delay:
            time.sleep(fault.delay)
        if fault.drop == "before":
            self._drop()
            return True
        if fault.status is not None:
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            reason = {410: "Expired", 429: "TooManyRequests"}.get(fault.status, "InternalError")
            self._answer(fault.status, _status(fault.status, reason, "injected fault"), headers)
            return True
        if fault.body_bytes is not None:
            hostile.huge_list(self, fault.body_bytes, fault.declare_length)
            return True
        if fault.drip_head:
            hostile.drip_answer(self, fault.drip_head)
            return True
        if fault.log_bytes is not None:
            hostile.endless_log(self, fault.log_bytes)
            return True
        self.drop_midway = fault.drop == "midway"
        self.drip, self.continue_token = fault.drip, fault.continue_token
        return False

    def _route(self) -> None:
        path = self.url_path
        if path == "/version":
            return self._answer(200, VERSION)
        if path in ("/api", "/apis") or path.startswith(("/api/", "/apis/")):
            discovery = _discovery(path)
            if discovery is not None:
                return self._answer(200, discovery)
            route = _resource_route(path)
            if route is not None:
                return self._resource(*route)
        return self._answer(404, _status(404, "NotFound", _NO_RESOURCE))

    def _served(self, group: str, version: str) -> bool:
        """A group/version this server serves: none of a group it was told not to serve (its
        CRDs not installed), nor a version it was told is too new for it."""
        unserved = self.server.unserved
        return version in served_versions(group) and not (
            {(group, None), (group, version)} & unserved
        )

    def _resource(
        self,
        group: str,
        version: str,
        plural: str,
        namespace: str | None,
        name: str | None,
        sub: str | None,
    ) -> None:
        known = RESOURCES.get(plural)
        if (
            known is None
            or known[0] != group
            or not self._served(group, version)
            or (sub not in (None, "log"))
            or (sub and plural != "pods")
        ):
            return self._answer(404, _status(404, "NotFound", _NO_RESOURCE))
        verb = "get" if name else ("watch" if self._param("watch") == "true" else "list")
        resource = f"{plural}/{sub}" if sub else plural
        if not self.server.authorizer.allows(verb, group, resource, namespace, name):
            return self._answer(
                403, _status(403, "Forbidden", _forbidden(verb, group, resource, namespace))
            )
        if sub == "log":
            return self._log(namespace or "", name or "")
        if name:
            return self._get(group, version, plural, namespace, name)
        return self._list(version, plural, namespace)

    # --- objects ---------------------------------------------------------------------------

    def _get(self, group: str, version: str, plural: str, namespace: str | None, name: str) -> None:
        item = self.server.store.get(plural, namespace, name)
        if item is None:
            noun = f"{plural}.{group}" if group else plural
            return self._answer(404, _status(404, "NotFound", f'{noun} "{name}" not found'))
        return self._answer(200, _with_type(item, plural, version))

    def _list(self, version: str, plural: str, namespace: str | None) -> None:
        items = self.server.store.items(plural, namespace)
        items = [i for i in items if label_matches(i, self._param("labelSelector"))]
        fields = self._param("fieldSelector")
        if fields and any(
            f.split("=")[0].rstrip("!") not in ("metadata.name", "metadata.namespace")
            for f in fields.split(",")
        ):
            return self._answer(
                400, _status(400, "BadRequest", f'"{fields}" is not a known field selector')
            )
        items = [i for i in items if field_matches(i, fields)]
        key = f"{self.url_path}?{self._param('labelSelector')}&{fields}"
        offset = 0 if self.continue_token else _offset(self._param("continue"), key)
        if offset is None:
            return self._answer(400, _status(400, "BadRequest", "invalid continue token"))
        limit = int(self._param("limit") or 0) or len(items) or 1
        page, rest = items[offset : offset + limit], items[offset + limit :]
        group, _, kind, _ = RESOURCES[plural]
        metadata: dict[str, Any] = {"resourceVersion": self.server.store.resource_version}
        if rest:
            metadata["continue"] = _token(offset + limit, key)
            metadata["remainingItemCount"] = len(rest)
        if self.continue_token:
            metadata["continue"] = self.continue_token  # a server that pages forever
        body = {
            "kind": f"{kind}List",
            "apiVersion": f"{group}/{version}" if group else version,
            "metadata": metadata,
            "items": [_as_list_item(i, group, version) for i in page],
        }
        return self._answer(200, body)

    # --- logs --------------------------------------------------------------------------------

    def _log(self, namespace: str, pod_name: str) -> None:
        pod = self.server.store.get("pods", namespace, pod_name)
        if pod is None:
            return self._answer(404, _status(404, "NotFound", f'pods "{pod_name}" not found'))
        names = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
        container = self._param("container") or (names[0] if len(names) == 1 else None)
        if container not in names:
            message = (
                f"container {container} is not valid for pod {pod_name}"
                if container
                else (
                    f"a container name must be specified for pod {pod_name}, choose one of: {names}"
                )
            )
            return self._answer(400, _status(400, "BadRequest", message))
        previous = self._param("previous") == "true"
        path = self.server.store.logs.get(
            (namespace, pod_name, container, "previous" if previous else "current")
        )
        if path is None and previous:
            message = f'previous terminated container "{container}" in pod "{pod_name}" not found'
            return self._answer(400, _status(400, "BadRequest", message))
        self.recorded.status = 200
        self._stream(self._log_chunks(path.open("rb") if path else None))

    def _log_chunks(self, handle: Any) -> Iterator[bytes]:
        if handle is None:
            return
        with handle:
            since = self._since()
            timestamps = self._param("timestamps") == "true"
            if since is None and timestamps:
                while chunk := handle.read(CHUNK):
                    yield chunk
                return
            for line in handle:
                stamp, _, body = line.partition(b" ")
                if since is not None and _line_time(stamp) < since:
                    continue
                yield line if timestamps else body

    def _since(self) -> datetime | None:
        if self._param("sinceTime"):
            return datetime.fromisoformat(str(self._param("sinceTime")).replace("Z", "+00:00"))
        if self._param("sinceSeconds"):
            now = self.server.now or datetime.now(timezone.utc)
            return now - timedelta(seconds=int(str(self._param("sinceSeconds"))))
        return None

    # --- answers -----------------------------------------------------------------------------

    def _param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def _arrive(self) -> None:
        headers: dict[str, list[str]] = {}
        for key, value in self.headers.items():
            shown = "<redacted>" if key.lower() == "authorization" else value
            headers.setdefault(key.lower(), []).append(shown)
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        self.recorded = Recorded(self.command, url.path, query, 0, headers)
        with self.server.lock:
            self.server.requests.append(self.recorded)

    def _answer(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.recorded.status = status
        self._json(status, body, headers)

    def _json(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.drop_midway:
            self.wfile.write(raw[: len(raw) // 2])
            return self._drop()
        if self.drip:
            return hostile.drip(self, raw, self.drip)
        self.wfile.write(raw)

    def _stream(self, chunks: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        for chunk in chunks:
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
                if self.drop_midway and sent >= CHUNK // 8:
                    return self._drop()
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _bearer_matches(header: str | None, token: str) -> bool:
    """As kube-apiserver's bearer-token authenticator: the scheme is case-insensitive (the
    client's in-cluster loader sends ``bearer …``), the token must match exactly."""
    scheme, _, value = (header or "").strip().partition(" ")
    return scheme.lower() == "bearer" and value.strip() == token


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _forbidden(verb: str, group: str, resource: str, namespace: str | None) -> str:
    plural, _, sub = resource.partition("/")
    where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    sub_text = f' "{sub}"' if sub else ""
    return (
        f'{plural} is forbidden: User "kvtrace-reader" cannot {verb} resource "{plural}"'
        f'{" subresource" + sub_text if sub else ""} in API group "{group}"{where}'
    )


def _discovery(path: str) -> dict[str, Any] | None:
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
    if path == "/apis":
        groups = [
            {
                "name": g,
                "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v},
            }
            for g, v in GROUPS.items()
        ]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        return _resource_list("v1", "")
    if parts[0] == "apis" and len(parts) == 3 and GROUPS.get(parts[1]) == parts[2]:
        return _resource_list(f"{parts[1]}/{parts[2]}", parts[1])
    return None


def _resource_list(group_version: str, group: str) -> dict[str, Any]:
    resources = [
        {"name": plural, "namespaced": namespaced, "kind": kind, "verbs": ["get", "list", "watch"]}
        for plural, (g, _, kind, namespaced) in RESOURCES.items()
        if g == group
    ]
    if group == "":
        resources.append({"name": "pods/log", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


def _resource_route(
    path: str,
) -> tuple[str, str, str, str | None, str | None, str | None] | None:
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        return None
    return (
        group,
        version,
        rest[0],
        namespace,
        (rest[1] if len(rest) > 1 else None),
        (rest[2] if len(rest) > 2 else None),
    )


def _with_type(item: dict[str, Any], plural: str, version: str) -> dict[str, Any]:
    group, _, kind, _ = RESOURCES[plural]
    return {**item, "apiVersion": f"{group}/{version}" if group else version, "kind": kind}


def _as_list_item(item: dict[str, Any], group: str, version: str) -> dict[str, Any]:
    """Built-in kinds come without kind/apiVersion in typed lists, as the real server sends them;
    a custom resource comes at the version asked for (the server converts it)."""
    if group.endswith("kubevirt.io"):
        return {**item, "apiVersion": f"{group}/{version}"}
    return {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}


def _token(offset: int, key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "k": key}).encode()).decode()


def _offset(token: str | None, key: str) -> int | None:
    if not token:
        return 0
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError):
        return None
    return int(decoded["o"]) if decoded.get("k") == key else None


def _line_time(stamp: bytes) -> datetime:
    try:
        return datetime.strptime(stamp[:19].decode(), "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=timezone.utc
        )
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
