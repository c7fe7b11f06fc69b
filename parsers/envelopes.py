"""Log-store exports: the container line inside each record's envelope, with the pod, container
and namespace the envelope names and the time the collector stamped.

Shapes read (the record's keys decide, so one file may mix them):

- Loki ``logcli query --output=jsonl``: ``{"labels": {...}, "line": ..., "timestamp": ...}``, and
  ``--output=default``: ``<RFC 3339> {label="value", ...} <line>`` (``--output=raw`` is the bare
  line: a plain log, no envelope);
- OpenShift Logging (ViaQ) and Vector's ``kubernetes_logs``: ``kubernetes.pod_name``,
  ``kubernetes.container_name``, ``kubernetes.namespace_name`` (Vector: ``pod_namespace``), the
  line in ``message`` or, parsed, in ``structured``; ``@timestamp`` or ``timestamp``;
- Elastic Common Schema (Filebeat, Elastic Agent): ``kubernetes.pod.name``,
  ``kubernetes.container.name``, ``kubernetes.namespace``, ``message``, ``@timestamp``;
- Elasticsearch / OpenSearch: a search response (``hits.hits[]._source``), hits one per line,
  or a ``_bulk`` body (action lines between the sources);
- OTLP JSON (the collector's file exporter): ``resourceLogs[].resource.attributes`` ``k8s.*``,
  ``scopeLogs[].logRecords[]`` with ``body.stringValue`` and ``timeUnixNano``.

Pure: bytes in, :class:`EnvelopeLine` values out; every record that yields no line is counted in
``skips`` by reason, never dropped silently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

LOKI_JSONL, LOKI_TEXT, OPENSHIFT, ECS, ES_SEARCH, OTLP = (
    "loki-jsonl",
    "loki",
    "openshift-logging",
    "ecs",
    "elasticsearch",
    "otlp",
)
# Skip reasons, a closed vocabulary as for log lines.
BAD_JSON = "not valid JSON"
NO_LINE = "no log line in the record (message, line or body missing or empty)"
NOT_A_RECORD = "not a log-store record (no envelope kvtrace knows)"
BULK_ACTION = "an Elasticsearch _bulk action line"
LOGCLI_HEADER = "logcli's query header (its URL, Common labels)"
STRUCTURE = frozenset(
    {BULK_ACTION, LOGCLI_HEADER}
)  # counted so the sums add up; no damage, not reported

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)", re.ASCII)
_LABEL = r'[A-Za-z_][A-Za-z0-9_]*="(?:[^"\\]|\\.)*"'
# ``{}`` or ``{name="value", ...}``: a JSON body (``{"component": …``) can never match it
_LABELS = rf"\{{(?:{_LABEL}(?:, {_LABEL})*)?\}}"
_LOKI_LINE = re.compile(rf"({_TIME.pattern}) ({_LABELS}) *(.*)", re.S)
# what logcli prints before the lines (to stderr; in the file when saved with 2>&1)
_LOGCLI_HEADER = re.compile(rf"^(?:https?://\S+|Common labels: ({_LABELS})|Query: .*)$")
_LOKI_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
_RESTART = re.compile(r"/(\d+)\.log(?:\.[^/]*)?$")
_POD_KEYS = ("pod", "pod_name", "k8s_pod_name", "kubernetes_pod_name")
_CONTAINER_KEYS = ("container", "container_name", "k8s_container_name", "kubernetes_container_name")
_NAMESPACE_KEYS = ("namespace", "namespace_name", "k8s_namespace_name", "kubernetes_namespace_name")
_BULK_ACTIONS = frozenset({"index", "create", "update", "delete"})


@dataclass(frozen=True, slots=True)
class EnvelopeLine:
    """One container line from an export. ``line_no``: the export's line where its record
    starts; ``time``: the collector's stamp, RFC 3339 (as the kubelet's ``--timestamps`` writes
    it); ``restart``: the container's restart count when the envelope says (its file
    ``…/<n>.log``, or ``k8s.container.restart_count``); ``container_id``: the runtime's id of
    the container instance (ViaQ, Vector, ECS), which tells restarts apart without numbering
    them."""

    line_no: int
    text: str
    time: str | None
    pod: str | None
    namespace: str | None
    container: str | None
    restart: int | None = None
    shape: str = ""
    container_id: str | None = None


def sniff_envelope(head: bytes) -> str | None:
    """The shape of an export from its first bytes, or None for anything else (a plain log, a
    manifest). Pretty-printed single documents are told by their top-level keys."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = (line.strip() for line in text.splitlines())
    first = next((line for line in lines if line and not _LOGCLI_HEADER.match(line)), "")
    if _LOKI_LINE.fullmatch(first):
        return LOKI_TEXT
    if first.startswith("["):
        return _sniff_document(text, listed=True)
    if not first.startswith("{"):
        return None
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return _sniff_document(text)
    return _shape_of(record) if isinstance(record, dict) else None


def _sniff_document(text: str, listed: bool = False) -> str | None:
    """A pretty-printed search response or OTLP request: its first keys name it; a JSON array
    (``listed``) of hits or of records: their keys."""
    head = text[:4096]
    if '"apiVersion"' in head:
        return None  # Kubernetes objects, whatever their fields are called
    if listed:
        if re.search(r'"_source"\s*:', head):
            return ES_SEARCH
        return OPENSHIFT if re.search(r'"kubernetes"\s*:', head) else None
    if re.search(r'^\s*"resourceLogs"\s*:', head, re.M):
        return OTLP
    if re.search(r'^\s*"hits"\s*:', head, re.M) or re.search(r'^\s*"took"\s*:', head, re.M):
        return ES_SEARCH
    return None


def _shape_of(record: dict[str, Any]) -> str | None:
    if isinstance(record.get("resourceLogs"), list):
        return OTLP
    if isinstance(record.get("hits"), dict) or isinstance(record.get("_source"), dict):
        return ES_SEARCH
    if _is_bulk_action(record):
        return ES_SEARCH
    if isinstance(record.get("line"), str) and ("labels" in record or "timestamp" in record):
        return LOKI_JSONL
    kubernetes = record.get("kubernetes")
    if isinstance(kubernetes, dict):
        return ECS if isinstance(kubernetes.get("pod"), dict) else OPENSHIFT
    return None


def _is_bulk_action(record: dict[str, Any]) -> bool:
    return len(record) == 1 and next(iter(record)) in _BULK_ACTIONS


def read_lines(lines: Iterable[bytes], skips: Counter[str]) -> Iterator[EnvelopeLine]:
    """Records one per line (NDJSON, or Loki's default text output); lines numbered from 1."""
    common: dict[str, str] = {}  # logcli's "Common labels", which its lines then leave out
    for line_no, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped[:1] != b"{":
            yield from _loki_text(line_no, stripped, skips, common)
            continue
        try:
            record = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            skips[BAD_JSON] += 1
            continue
        yield from records(line_no, record, skips)


def read_document(data: bytes, skips: Counter[str]) -> Iterator[EnvelopeLine]:
    """One JSON document (a search response, an OTLP request, a JSON array of records)."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        skips[BAD_JSON] += 1
        return
    for record in document if isinstance(document, list) else [document]:
        yield from records(1, record, skips)


def records(line_no: int, record: Any, skips: Counter[str]) -> Iterator[EnvelopeLine]:
    """The container lines of one decoded record, whatever its shape."""
    if not isinstance(record, dict):
        skips[NOT_A_RECORD] += 1
        return
    shape = _shape_of(record)
    if shape == OTLP:
        yield from _otlp(line_no, record, skips)
    elif shape == ES_SEARCH:
        yield from _search(line_no, record, skips)
    elif shape == LOKI_JSONL:
        yield from _counted(_loki_jsonl(line_no, record), skips)
    elif shape in (OPENSHIFT, ECS):
        yield from _counted(_kubernetes_record(line_no, record, shape), skips)
    else:
        skips[NOT_A_RECORD] += 1


def _counted(entry: EnvelopeLine | None, skips: Counter[str]) -> Iterator[EnvelopeLine]:
    if entry is None:
        skips[NO_LINE] += 1
    else:
        yield entry


# -- Loki ------------------------------------------------------------------------------------


def _loki_jsonl(line_no: int, record: dict[str, Any]) -> EnvelopeLine | None:
    line = record.get("line")
    if not isinstance(line, str) or not line.strip():
        return None
    labels = record.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    return _labelled(line_no, line, _time_of(record.get("timestamp")), labels, LOKI_JSONL)


def _loki_text(
    line_no: int, raw: bytes, skips: Counter[str], common: dict[str, str]
) -> Iterator[EnvelopeLine]:
    text = raw.decode("utf-8", errors="replace")
    header = _LOGCLI_HEADER.match(text)
    if header is not None:
        common.update(_labels_of(header.group(1) or ""))
        skips[LOGCLI_HEADER] += 1
        return
    match = _LOKI_LINE.fullmatch(text)
    if match is None:
        skips[NOT_A_RECORD] += 1
        return
    labels = {**common, **_labels_of(match.group(2))}
    yield from _counted(
        _labelled(line_no, match.group(3), match.group(1), labels, LOKI_TEXT), skips
    )


def _labels_of(text: str) -> dict[str, str]:
    return {k: _unquote(v) for k, v in _LOKI_LABEL.findall(text)}


def _record_in(line_no: int, line: str) -> EnvelopeLine | None:
    if not line.startswith('{"') or '"kubernetes"' not in line:
        return None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict) or _shape_of(record) not in (OPENSHIFT, ECS):
        return None
    return _kubernetes_record(line_no, record, _shape_of(record) or OPENSHIFT)


def _unquote(value: str) -> str:
    if "\\" not in value:
        return value
    try:
        decoded = orjson.loads(f'"{value}"')
    except orjson.JSONDecodeError:
        return value
    return decoded if isinstance(decoded, str) else value


def _labelled(
    line_no: int, line: str, time: str | None, labels: dict[str, Any], shape: str
) -> EnvelopeLine | None:
    """A Loki entry; when its line is itself a ViaQ or ECS record (a LokiStack of OpenShift
    Logging stores whole records), the record's line, pod and time, the labels filling gaps."""
    if not line.strip():
        return None
    inner = _record_in(line_no, line)
    if inner is not None:
        return EnvelopeLine(
            line_no,
            inner.text,
            inner.time or time,
            inner.pod or _first(labels, _POD_KEYS),
            inner.namespace or _first(labels, _NAMESPACE_KEYS),
            inner.container or _first(labels, _CONTAINER_KEYS),
            inner.restart,
            f"{shape}+{inner.shape}",
            inner.container_id,
        )
    return EnvelopeLine(
        line_no,
        line,
        time,
        _first(labels, _POD_KEYS),
        _first(labels, _NAMESPACE_KEYS),
        _first(labels, _CONTAINER_KEYS),
        _restart_of(_text(labels.get("filename"))),
        shape,
    )


# -- ViaQ, Vector, ECS -----------------------------------------------------------------------


def _kubernetes_record(line_no: int, record: dict[str, Any], shape: str) -> EnvelopeLine | None:
    line = _message(record)
    if line is None:
        return None
    kubernetes = record.get("kubernetes")
    assert isinstance(kubernetes, dict)
    if shape == ECS:
        pod, container = _name(kubernetes.get("pod")), _name(kubernetes.get("container"))
        namespace = _name(kubernetes.get("namespace")) or _text(kubernetes.get("namespace"))
        path = _text(_dig(record, "log", "file", "path"))
        container_id = _text(_dig(record, "container", "id"))
    else:
        pod, container = _text(kubernetes.get("pod_name")), _text(kubernetes.get("container_name"))
        namespace = _text(kubernetes.get("namespace_name")) or _text(
            kubernetes.get("pod_namespace")
        )
        path = _text(record.get("file"))
        container_id = _text(kubernetes.get("container_id"))
    time = _time_of(record.get("@timestamp")) or _time_of(record.get("timestamp"))
    restart = _restart_of(path)
    return EnvelopeLine(
        line_no, line, time, pod, namespace, container, restart, shape, container_id
    )


def _message(record: dict[str, Any]) -> str | None:
    """``message`` as written; else ``structured`` (the JSON line the forwarder parsed) again as
    one JSON line."""
    message = record.get("message")
    if isinstance(message, str) and message.strip():
        return message
    structured = record.get("structured")
    if isinstance(structured, dict) and structured:
        return orjson.dumps(structured).decode()
    return None


def _name(value: Any) -> str | None:
    return _text(value.get("name")) if isinstance(value, dict) else None


# -- Elasticsearch / OpenSearch --------------------------------------------------------------


def _search(line_no: int, record: dict[str, Any], skips: Counter[str]) -> Iterator[EnvelopeLine]:
    if _is_bulk_action(record):
        skips[BULK_ACTION] += 1
        return
    hits = record.get("hits")
    if isinstance(hits, dict):
        for hit in hits.get("hits") or []:
            yield from _search(line_no, hit, skips) if isinstance(hit, dict) else ()
        return
    source = record.get("_source")
    if isinstance(source, dict) and _shape_of(source) in (OPENSHIFT, ECS):
        yield from records(line_no, source, skips)
    else:
        skips[NOT_A_RECORD] += 1


# -- OTLP ------------------------------------------------------------------------------------


def _otlp(line_no: int, request: dict[str, Any], skips: Counter[str]) -> Iterator[EnvelopeLine]:
    for resource_logs in _dicts(request.get("resourceLogs")):
        resource = _attributes(_dig(resource_logs, "resource", "attributes"))
        for scope_logs in _dicts(resource_logs.get("scopeLogs")):
            for log_record in _dicts(scope_logs.get("logRecords")):
                yield from _counted(_otlp_record(line_no, resource, log_record), skips)


def _otlp_record(
    line_no: int, resource: dict[str, Any], log_record: dict[str, Any]
) -> EnvelopeLine | None:
    body = _any_value(log_record.get("body"))
    if isinstance(body, dict):
        body = orjson.dumps(body).decode()
    if not isinstance(body, str) or not body.strip():
        return None
    attributes = {**resource, **_attributes(log_record.get("attributes"))}
    stamp = log_record.get("timeUnixNano") or log_record.get("observedTimeUnixNano")
    restart = _int(attributes.get("k8s.container.restart_count"))
    if restart is None:
        restart = _restart_of(_text(attributes.get("log.file.path")))
    return EnvelopeLine(
        line_no,
        body,
        _from_unix_nanos(stamp),
        _text(attributes.get("k8s.pod.name")),
        _text(attributes.get("k8s.namespace.name")),
        _text(attributes.get("k8s.container.name")),
        restart,
        OTLP,
    )


def _attributes(value: Any) -> dict[str, Any]:
    return {
        item["key"]: _any_value(item.get("value"))
        for item in _dicts(value)
        if isinstance(item.get("key"), str)
    }


def _any_value(value: Any) -> Any:
    """An OTLP AnyValue: ``{"stringValue": …}``, ``{"intValue": "3"}``, a kvlist as a dict."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if key in value:
            return value[key]
    kvlist = value.get("kvlistValue")
    if isinstance(kvlist, dict):
        return _attributes(kvlist.get("values"))
    return None


def _from_unix_nanos(value: Any) -> str | None:
    nanos = _int(value)
    if nanos is None or nanos <= 0:
        return None
    seconds, fraction = divmod(nanos, 1_000_000_000)
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{fraction:09d}Z"


# -- small readers ---------------------------------------------------------------------------


def _time_of(value: Any) -> str | None:
    """An RFC 3339 stamp as the envelope wrote it; epoch milliseconds (Elasticsearch's
    ``epoch_millis``) turned into one."""
    if isinstance(value, str) and _TIME.fullmatch(value.strip()):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return _from_unix_nanos(value * 1_000_000)
    return None


def _restart_of(path: str | None) -> int | None:
    match = _RESTART.search(path or "")
    return int(match.group(1)) if match else None


def _first(labels: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = labels.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _dig(record: dict[str, Any], *keys: str) -> Any:
    value: Any = record
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value
