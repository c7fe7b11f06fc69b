"""Reading the Kubernetes API: retries, paging and typed errors over :meth:`Connection.send`.

- 429 Too Many Requests: wait ``Retry-After`` (capped at 10 s), then retry.
- 5xx, timeouts, dropped connections: retry with exponential backoff and a cap on attempts;
  all requests of a collection share one budget of retries (``KVTRACE_MAX_RETRIES``).
- 401: the credentials are rejected; nothing else will work, so collection stops.
- any other 4xx (403, 404, 410, …): an :class:`ApiError` for the caller, which records it as
  ``missing`` and carries on with the next kind.
- Lists are paged with ``limit``/``continue``; a ``410 Gone`` on a continue token (the token
  expired, the apiserver compacted) restarts that list from the beginning, a few times at most.
  A repeated continue token, more pages than ``KVTRACE_MAX_LIST_PAGES`` or more bytes than
  ``KVTRACE_MAX_LIST_BYTES`` end the list as incomplete (:class:`UnsafeResponse`).
- Bodies are capped (``KVTRACE_MAX_RESPONSE_BYTES``); a log stream is cut at
  ``KVTRACE_MAX_LOG_STREAM_BYTES`` and what was read is kept (``kvtrace/sources/live/limits.py``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from kvtrace.errors import ApiError, Cancelled, ClusterError, TransientError, UnsafeResponse
from kvtrace.sources.live.limits import (
    ENV_MAX_LIST_BYTES,
    ENV_MAX_LIST_PAGES,
    ENV_MAX_RETRIES,
    LiveLimits,
)

if TYPE_CHECKING:
    from kvtrace.sources.live.client import Connection, RawResponse

Query = Sequence[tuple[str, str]]
PAGE_SIZE = 500
MAX_LIST_RESTARTS = 3
CHUNK = 256 * 1024
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_sleep = time.sleep  # one name for every wait, so tests can observe the delays


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one request. Delays in seconds."""

    attempts: int = 5
    base_delay: float = 0.2
    max_delay: float = 5.0
    max_retry_after: float = 10.0  # a server asking for more is not waited for longer

    def backoff(self, attempt: int) -> float:
        return float(min(self.max_delay, self.base_delay * 2**attempt))


@dataclass(frozen=True)
class Streamed:
    """A log written to disk: its size, and whether the cap cut it short."""

    size: int
    truncated: bool


@dataclass
class ListResult:
    items: list[dict[str, Any]]
    kind: str  # the list's kind, e.g. ``PodList``
    api_version: str


class ApiReader:
    """Every GET kvtrace makes, with retries; safe to share between worker threads."""

    def __init__(
        self,
        connection: Connection,
        policy: RetryPolicy | None = None,
        verbose: bool = False,
        on_request: Callable[[], None] | None = None,
        limits: LiveLimits | None = None,
    ) -> None:
        self.connection = connection
        self.policy = policy or RetryPolicy()
        self.limits = limits or LiveLimits()
        self.retries_left = self.limits.max_retries
        self.verbose = verbose
        self.on_request = on_request
        self.cancelled = threading.Event()
        self.requests = 0
        self._lock = threading.Lock()

    def get_json(self, path: str, query: Query = ()) -> dict[str, Any]:
        """One object (or one page), parsed with orjson from the raw body."""
        return self._sized_json(path, query)[0]

    def _sized_json(self, path: str, query: Query) -> tuple[dict[str, Any], int]:
        """The parsed body and its size in bytes."""
        response = self._send(path, query)
        try:
            body = response.read(self.limits.max_response_bytes)
        finally:
            response.close()
        try:
            loaded = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ApiError(response.status, path, "the response is not JSON") from None
        if not isinstance(loaded, dict):
            raise ApiError(response.status, path, "the response is not a JSON object")
        return loaded, len(body)

    def list_items(
        self, path: str, query: Query = (), keep: Callable[[dict[str, Any]], bool] | None = None
    ) -> ListResult:
        """Every item of a list, page by page; ``keep`` filters each page as it arrives."""
        for _ in range(MAX_LIST_RESTARTS):
            result = self._list_once(path, query, keep)
            if result is not None:
                return result
        raise ApiError(410, path, "the list expired while paging, again and again; retry later")

    def _list_once(
        self, path: str, query: Query, keep: Callable[[dict[str, Any]], bool] | None
    ) -> ListResult | None:
        items: list[dict[str, Any]] = []
        token, received = "", 0
        seen: set[str] = set()
        for _ in range(self.limits.max_list_pages):
            paging = [("limit", str(PAGE_SIZE))] + ([("continue", token)] if token else [])
            try:
                page, size = self._sized_json(path, [*query, *paging])
            except ApiError as exc:
                if exc.status == 410 and token:
                    return None  # continue token expired: start the list again
                raise
            received += size
            if received > self.limits.max_list_bytes:
                raise UnsafeResponse(
                    f"GET {path}: incomplete list: its pages add up to more than "
                    f"{self.limits.max_list_bytes} bytes; narrow the scope with -n or --vm, or "
                    f"raise {ENV_MAX_LIST_BYTES}"
                )
            found = [i for i in page.get("items") or [] if isinstance(i, dict)]
            items.extend(i for i in found if keep is None or keep(i))
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                return ListResult(items, str(page.get("kind") or "List"), _version(page))
            if token in seen:
                raise UnsafeResponse(
                    f"GET {path}: incomplete list: the server sent the same continue token "
                    f"twice (after {len(seen) + 1} pages), so paging would never end"
                )
            seen.add(token)
        raise UnsafeResponse(
            f"GET {path}: incomplete list: more than {self.limits.max_list_pages} pages; narrow "
            f"the scope with -n or --vm, or raise {ENV_MAX_LIST_PAGES}"
        )

    def stream_to(
        self, path: str, query: Query, dest: Path, on_bytes: Callable[[int], None]
    ) -> Streamed:
        """Write a (log) body to ``dest`` chunk by chunk, at most the log cap (the rest is not
        read); a dropped stream is fetched again."""
        for attempt in range(self.policy.attempts):
            response = self._send(path, query)
            try:
                with dest.open("wb") as out:
                    return self._copy(response, out, on_bytes)
            except TransientError:
                if attempt + 1 >= self.policy.attempts or not self._spend_retry():
                    raise
                _sleep(self.policy.backoff(attempt))
            finally:
                response.close()
        raise AssertionError("unreachable")

    def _copy(
        self, response: RawResponse, out: BinaryIO, on_bytes: Callable[[int], None]
    ) -> Streamed:
        written, cap = 0, self.limits.max_log_stream_bytes
        for chunk in response.chunks(CHUNK):
            if self.cancelled.is_set():
                raise Cancelled("collection interrupted")
            kept = chunk[: cap - written]
            out.write(kept)
            written += len(kept)
            on_bytes(len(kept))
            if len(kept) < len(chunk):
                return Streamed(written, truncated=True)  # closing drops the rest unread
        return Streamed(written, truncated=False)

    def _send(self, path: str, query: Query) -> RawResponse:
        """One successful (2xx) response, after the retries the policy allows."""
        for attempt in range(self.policy.attempts):
            if self.cancelled.is_set():
                raise Cancelled("collection interrupted")
            last = attempt + 1 >= self.policy.attempts
            try:
                response = self._timed_send(path, query)
            except TransientError:
                if last or not self._spend_retry():
                    raise
                _sleep(self.policy.backoff(attempt))
                continue
            if 200 <= response.status < 300:
                return response
            error = _error_of(response, path, self.connection.in_cluster)
            if response.status not in _RETRY_STATUSES or last:
                raise _final(error, attempt + 1)
            if not self._spend_retry():
                raise _final(error, attempt + 1, budget_spent=True)
            _sleep(self._delay(response, attempt))
        raise AssertionError("unreachable")

    def _spend_retry(self) -> bool:
        """One retry from the collection's budget; False when it is spent."""
        with self._lock:
            if self.retries_left <= 0:
                return False
            self.retries_left -= 1
            return True

    def _timed_send(self, path: str, query: Query) -> RawResponse:
        started = time.monotonic()
        with self._lock:
            self.requests += 1
        try:
            response = self.connection.send("GET", path, query)
        except TransientError as exc:
            self._trace(path, query, str(exc).rsplit(": ", 1)[-1], started)
            raise
        self._trace(path, query, str(response.status), started)
        if self.on_request is not None:
            self.on_request()
        return response

    def _trace(self, path: str, query: Query, outcome: str, started: float) -> None:
        """``-v``: method, path, query and outcome; never headers (they carry the token)."""
        if self.verbose:
            shown = "&".join(f"{k}={v}" for k, v in query if k != "continue")
            elapsed = (time.monotonic() - started) * 1000
            print(
                f"GET {path}{'?' if shown else ''}{shown} {outcome} ({elapsed:.0f} ms)",
                file=sys.stderr,
            )

    def _delay(self, response: RawResponse, attempt: int) -> float:
        retry_after = _retry_after(response.headers.get("Retry-After"))
        if retry_after is not None:
            return min(retry_after, self.policy.max_retry_after)
        return self.policy.backoff(attempt)


def _error_of(response: RawResponse, path: str, in_cluster: bool) -> ApiError:
    """The error a non-2xx answer means; 401 stops everything (no other request can work)."""
    body = response.error_body()
    response.close()
    if response.status == 401:
        raise ClusterError(
            f"the API server rejected the credentials (401 Unauthorized) for GET {path}; "
            + (
                "check the pod's service account token (mounted, not expired)"
                if in_cluster
                else "log in again or check the user in the kubeconfig"
            )
        )
    return ApiError(response.status, path, _status_message(body))


def _final(error: ApiError, attempts: int, budget_spent: bool = False) -> ApiError:
    if budget_spent:
        return ApiError(
            error.status,
            error.path,
            f"{error.message} (no retries left for this collection: {ENV_MAX_RETRIES})",
        )
    if error.status in _RETRY_STATUSES and attempts > 1:
        return ApiError(error.status, error.path, f"{error.message} (after {attempts} attempts)")
    return error


def _status_message(body: bytes) -> str:
    """The ``message`` of a ``Status`` body, else the first line of the body."""
    try:
        loaded = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode("utf-8", "replace").strip().splitlines()[0][:300] if body.strip() else ""
    message = loaded.get("message") if isinstance(loaded, dict) else None
    return str(message)[:300] if message else ""


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds form; dates are not used by k8s)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _version(page: dict[str, Any]) -> str:
    return str(page.get("apiVersion") or "v1")
