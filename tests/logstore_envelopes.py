"""A kvsim bundle's container logs as log stores export them: the lines are kvsim's, untouched;
only the envelopes around them are those of the third-party tools (Loki's ``logcli``, OpenShift
Logging's ViaQ records, Elasticsearch/OpenSearch search results and ``_bulk`` bodies with ViaQ or
ECS sources, Vector's ``kubernetes_logs``, the OpenTelemetry collector's OTLP file exporter)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class ContainerLine:
    """One line of a bundle's container log: the kubelet's stamp and the line as written."""

    time: str
    text: str
    namespace: str
    pod: str
    container: str
    restart: int
    pod_uid: str
    node: str


def container_lines(bundle: Path) -> list[ContainerLine]:
    """Every line of ``logs/<ns>/<pod>/<container>/{previous,current}.log``, in time order (the
    previous instance is restart 0, the current one restart 1 when there was a previous)."""
    pods = _pods(bundle)
    found = []
    for log in sorted((bundle / "logs").glob("*/*/*/*.log")):
        namespace, pod, container = log.parts[-4:-1]
        had_previous = (log.parent / "previous.log").exists()
        restart = 0 if log.stem == "previous" or not had_previous else 1
        uid, node = pods.get((namespace, pod), (_uid(pod), "node-a"))
        for raw in log.read_text(encoding="utf-8").splitlines():
            time, text = raw.split(" ", 1)
            found.append(ContainerLine(time, text, namespace, pod, container, restart, uid, node))
    return sorted(found, key=lambda line: _instant(line.time))


def _pods(bundle: Path) -> dict[tuple[str, str], tuple[str, str]]:
    path = bundle / "objects" / "pods.yaml"
    if not path.exists():
        return {}
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["items"]
    return {
        (p["metadata"]["namespace"], p["metadata"]["name"]): (
            p["metadata"].get("uid") or _uid(p["metadata"]["name"]),
            p.get("spec", {}).get("nodeName") or "node-a",
        )
        for p in items
    }


def _uid(name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _instant(time: str) -> tuple[datetime, str]:
    head, _, fraction = time.rstrip("Z").partition(".")
    return datetime.fromisoformat(head), fraction.ljust(9, "0")


def _container_id(line: ContainerLine) -> str:
    return hashlib.sha256(f"{line.pod}/{line.container}/{line.restart}".encode()).hexdigest()


def _pods_file(line: ContainerLine) -> str:
    directory = f"/var/log/pods/{line.namespace}_{line.pod}_{line.pod_uid}"
    return f"{directory}/{line.container}/{line.restart}.log"


def _nanos(time: str) -> int:
    moment, fraction = _instant(time)
    seconds = int(moment.replace(tzinfo=UTC).timestamp())
    return seconds * 1_000_000_000 + int(fraction)


def _millis(time: str) -> str:
    head, _, fraction = time.rstrip("Z").partition(".")
    return f"{head}.{fraction.ljust(9, '0')[:3]}Z"


def _go_json(value: Any) -> str:
    """Go's encoding/json: keys sorted, ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- Loki ------------------------------------------------------------------------------------


def _loki_labels(line: ContainerLine) -> dict[str, str]:
    """The labels promtail's Kubernetes discovery gives a container's stream."""
    return {
        "app": line.container,
        "container": line.container,
        "filename": _pods_file(line),
        "job": f"{line.namespace}/{line.container}",
        "namespace": line.namespace,
        "node_name": line.node,
        "pod": line.pod,
        "stream": "stderr",
    }


def loki_jsonl(lines: list[ContainerLine]) -> str:
    """``logcli query --output=jsonl`` (newest first: logcli's default ``--direction=backward``)."""
    return "".join(
        _go_json({"labels": _loki_labels(line), "line": line.text, "timestamp": line.time}) + "\n"
        for line in reversed(lines)
    )


def lokistack_jsonl(lines: list[ContainerLine]) -> str:
    """``logcli --output=jsonl`` from an OpenShift Logging LokiStack: each Loki line is a whole
    ViaQ record, the stream labels the LokiStack's ``kubernetes_*`` ones."""
    return "".join(
        _go_json(
            {
                "labels": {
                    "kubernetes_container_name": line.container,
                    "kubernetes_host": line.node,
                    "kubernetes_namespace_name": line.namespace,
                    "kubernetes_pod_name": line.pod,
                    "log_type": "infrastructure",
                },
                "line": json.dumps(viaq_record(line), separators=(",", ":")),
                "timestamp": line.time,
            }
        )
        + "\n"
        for line in reversed(lines)
    )


def loki_default(lines: list[ContainerLine], header: bool = False) -> str:
    """``logcli query --output=default`` to a file: second-resolution stamps, the labels that
    are not common to every stream (the common ones go to stderr, or first in the file with
    ``2>&1``: ``header``), padded to one width."""
    common = set.intersection(*(set(_loki_labels(line).items()) for line in lines))
    shared = ", ".join(f'{k}="{v}"' for k, v in sorted(common))
    top = (
        "http://localhost:3100/loki/api/v1/query_range?direction=BACKWARD&limit=0&query=%7B%7D\n"
        f"Common labels: {{{shared}}}\n"
        if header
        else ""
    )
    labels = [
        "{"
        + ", ".join(
            f'{k}="{v}"' for k, v in sorted(_loki_labels(line).items()) if (k, v) not in common
        )
        + "}"
        for line in lines
    ]
    width = max(len(text) for text in labels)
    return top + "".join(
        f"{line.time.split('.')[0].rstrip('Z')}Z {label.ljust(width)} {line.text.strip()}\n"
        for line, label in zip(reversed(lines), reversed(labels), strict=True)
    )


# -- OpenShift Logging (ViaQ), Vector, ECS ----------------------------------------------------


def viaq_record(line: ContainerLine, structured: bool = False) -> dict[str, Any]:
    """An OpenShift Logging record of a container line (the ViaQ data model)."""
    record: dict[str, Any] = {
        "@timestamp": line.time,
        "hostname": line.node,
        "kubernetes": {
            "container_id": f"cri-o://{_container_id(line)}",
            "container_image": f"quay.io/kubevirt/{line.container}:v1.9.0",
            "container_name": line.container,
            "labels": {"kubevirt.io": line.container},
            "namespace_name": line.namespace,
            "pod_id": line.pod_uid,
            "pod_name": line.pod,
        },
        "level": json.loads(line.text).get("level", "unknown") if line.text[:1] == "{" else "info",
        "log_type": "infrastructure" if line.namespace == "kubevirt" else "application",
        "openshift": {"cluster_id": "5f2c4e0a-2f8e-4a4e-9d1d-7c9b0c5e1a11", "sequence": 1},
    }
    if structured and line.text[:1] == "{":
        record["structured"] = json.loads(line.text)
    else:
        record["message"] = line.text
    return record


def ecs_record(line: ContainerLine) -> dict[str, Any]:
    """A Filebeat / Elastic Agent document (Elastic Common Schema), millisecond ``@timestamp``."""
    file = f"/var/log/containers/{line.pod}_{line.namespace}_{line.container}-{_container_id(line)}.log"
    return {
        "@timestamp": _millis(line.time),
        "container": {"id": _container_id(line), "runtime": "containerd"},
        "ecs": {"version": "8.0.0"},
        "input": {"type": "container"},
        "kubernetes": {
            "container": {"name": line.container},
            "labels": {"kubevirt_io": line.container},
            "namespace": line.namespace,
            "node": {"name": line.node},
            "pod": {"name": line.pod, "uid": line.pod_uid},
        },
        "log": {"file": {"path": file}, "offset": 0},
        "message": line.text,
        "stream": "stderr",
    }


def vector_record(line: ContainerLine) -> dict[str, Any]:
    """Vector's ``kubernetes_logs`` source event, as its ``file`` sink writes it (JSON)."""
    return {
        "file": _pods_file(line),
        "kubernetes": {
            "container_id": f"containerd://{_container_id(line)}",
            "container_image": f"quay.io/kubevirt/{line.container}:v1.9.0",
            "container_name": line.container,
            "pod_labels": {"kubevirt.io": line.container},
            "pod_name": line.pod,
            "pod_namespace": line.namespace,
            "pod_node_name": line.node,
            "pod_uid": line.pod_uid,
        },
        "message": line.text,
        "source_type": "kubernetes_logs",
        "stream": "stderr",
        "timestamp": line.time,
    }


def ndjson(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)


def viaq_ndjson(lines: list[ContainerLine], structured: bool = False) -> str:
    return ndjson([viaq_record(line, structured) for line in lines])


def vector_ndjson(lines: list[ContainerLine]) -> str:
    return ndjson([vector_record(line) for line in lines])


# -- Elasticsearch / OpenSearch --------------------------------------------------------------


def _hit(index: int, source: dict[str, Any], index_name: str) -> dict[str, Any]:
    return {"_id": f"{index:020d}", "_index": index_name, "_score": 1.0, "_source": source}


def es_search_response(lines: list[ContainerLine], source: Callable[..., dict[str, Any]]) -> str:
    """``GET <index>/_search`` saved pretty-printed (as Kibana's Inspect or curl ?pretty)."""
    hits = [_hit(i, source(line), "infra-000001") for i, line in enumerate(lines)]
    random.Random(17).shuffle(hits)  # no sort asked: hits come in any order
    response = {
        "took": 12,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": 1.0, "hits": hits},
    }
    return json.dumps(response, indent=2) + "\n"


def es_hits_ndjson(lines: list[ContainerLine], source: Callable[..., dict[str, Any]]) -> str:
    """One hit per line, as ``elasticdump --type=data`` writes them."""
    return ndjson([_hit(i, source(line), "logs-kubevirt") for i, line in enumerate(lines)])


def es_bulk(lines: list[ContainerLine], source: Callable[..., dict[str, Any]]) -> str:
    """A ``_bulk`` body: an action line before each source."""
    body: list[dict[str, Any]] = []
    for index, line in enumerate(lines):
        body += [{"index": {"_index": "logs-kubevirt", "_id": f"{index:020d}"}}, source(line)]
    return ndjson(body)


# -- OTLP ------------------------------------------------------------------------------------


def _attribute(key: str, value: str | int) -> dict[str, Any]:
    typed = {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}
    return {"key": key, "value": typed}


def otlp_ndjson(lines: list[ContainerLine], batch: int = 40) -> str:
    """The OpenTelemetry collector's ``file`` exporter (JSON): one ExportLogsServiceRequest per
    line, a resource per container instance (filelog receiver + k8sattributes processor)."""
    requests = []
    for start in range(0, len(lines), batch):
        resources: dict[tuple[str, str, str, int], list[ContainerLine]] = {}
        for line in lines[start : start + batch]:
            key = (line.namespace, line.pod, line.container, line.restart)
            resources.setdefault(key, []).append(line)
        requests.append({"resourceLogs": [_resource_logs(group) for group in resources.values()]})
    return ndjson(requests)


def _resource_logs(group: list[ContainerLine]) -> dict[str, Any]:
    first = group[0]
    attributes = [
        _attribute("k8s.container.name", first.container),
        _attribute("k8s.container.restart_count", first.restart),
        _attribute("k8s.namespace.name", first.namespace),
        _attribute("k8s.node.name", first.node),
        _attribute("k8s.pod.name", first.pod),
        _attribute("k8s.pod.uid", first.pod_uid),
    ]
    records = [
        {
            "attributes": [
                _attribute("log.file.path", _pods_file(line)),
                _attribute("log.iostream", "stderr"),
            ],
            "body": {"stringValue": line.text},
            "observedTimeUnixNano": str(_nanos(line.time) + 1_500_000),
            "timeUnixNano": str(_nanos(line.time)),
        }
        for line in group
    ]
    return {
        "resource": {"attributes": attributes},
        "scopeLogs": [{"scope": {}, "logRecords": records}],
    }


ENVELOPES: dict[str, Callable[[list[ContainerLine]], str]] = {
    "loki.jsonl": loki_jsonl,
    "loki-default.txt": loki_default,
    "lokistack-viaq.jsonl": lokistack_jsonl,
    "viaq.ndjson": viaq_ndjson,
    "viaq-structured.ndjson": lambda lines: viaq_ndjson(lines, structured=True),
    "es-search-viaq.json": lambda lines: es_search_response(lines, viaq_record),
    "es-hits-ecs.ndjson": lambda lines: es_hits_ndjson(lines, ecs_record),
    "es-bulk-ecs.ndjson": lambda lines: es_bulk(lines, ecs_record),
    "vector.ndjson": vector_ndjson,
    "otlp.ndjson": otlp_ndjson,
}
