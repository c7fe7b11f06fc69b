"""Write a :class:`~kvsim.cluster.Capture` as a kvtrace bundle directory (docs/bundle-format.md):
``manifest.json``, ``objects/<plural>.json|yaml`` and ``logs/<ns>/<pod>/<container>/*.log`` with
the kubelet's ``--timestamps`` prefix."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from kvsim import timefmt
from kvsim.cluster import Capture

PLURALS = {
    "VirtualMachine": "virtualmachines",
    "VirtualMachineInstance": "virtualmachineinstances",
    "Pod": "pods",
    "ControllerRevision": "controllerrevisions",
    "Event": "events",
    "Lease": "leases",
    "KubeVirt": "kubevirts",
    "Node": "nodes",
    "Endpoints": "endpoints",
    "VirtualMachineInstanceMigration": "virtualmachineinstancemigrations",
    "VirtualMachinePool": "virtualmachinepools",
    "VirtualMachineInstanceReplicaSet": "virtualmachineinstancereplicasets",
    "VirtualMachineSnapshot": "virtualmachinesnapshots",
    "VirtualMachineSnapshotContent": "virtualmachinesnapshotcontents",
    "VirtualMachineRestore": "virtualmachinerestores",
}


class KubeDumper(yaml.SafeDumper):
    """Like kubectl -o yaml: sorted keys, ambiguous strings double-quoted."""


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    tag = dumper.resolve(yaml.ScalarNode, data, (True, False))  # type: ignore[no-untyped-call]
    if data == "" or tag != "tag:yaml.org,2002:str":
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


KubeDumper.add_representer(str, _str)


def to_yaml(document: Any) -> str:
    return yaml.dump(
        document,
        Dumper=KubeDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=80,
    )


def write_bundle(
    capture: Capture, root: Path, fmt: str = "json", readme: str | None = None
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    collected = []
    for kind, items in capture.objects.items():
        rel = f"objects/{PLURALS[kind]}.{fmt}"
        document = {
            "apiVersion": "v1",
            "items": items,
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        }
        text = (
            to_yaml(document)
            if fmt == "yaml"
            else json.dumps(document, indent=1, sort_keys=True) + "\n"
        )
        _write(root / rel, text)
        collected.append({"kind": kind, "file": rel, "count": len(items)})
    entries = []
    for log, instance in capture.logs:
        rel = f"logs/{log.namespace}/{log.pod}/{log.container}/{instance}.log"
        _write_lines(root / rel, log.rendered())
        entries.append(
            {
                "namespace": log.namespace,
                "pod": log.pod,
                "container": log.container,
                "instance": instance,
                "file": rel,
                "timestamps": True,
            }
        )
    manifest = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": timefmt.micro(capture.captured_at),
        "kvtraceVersion": "kvsim",
        "serverVersion": "v1.31.2",
        "kubevirtVersion": capture.kubevirt_version,
        "kubevirtNamespace": "kubevirt",
        "scope": {"allNamespaces": True, "namespaces": [], "vms": []},
        "collected": collected,
        "logs": entries,
        "missing": [],
    }
    _write(root / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    if readme is not None:
        _write(root / "README.md", readme)
    return root


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write a log in slices, never holding the whole text (a bench log is a GiB)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = iter(lines)
    with open(path, "w", encoding="utf-8") as sink:
        while batch := "".join(itertools.islice(lines, 20_000)):
            sink.write(batch)


def go_time(us: int, mono_ns: int) -> str:
    """Go's ``time.Time.String()`` with its monotonic reading, as must-gather's timestamp file
    holds it."""
    moment = timefmt.to_datetime(us)
    fraction = moment.microsecond * 1000 + (us * 7) % 1000
    return f"{moment:%Y-%m-%d %H:%M:%S}.{fraction:09d} +0000 UTC m=+{mono_ns / 1e9:.9f}"


def write_must_gather(capture: Capture, root: Path, seed: str, readme: str | None = None) -> Path:
    """KubeVirt's must-gather layout (its gather scripts): logs of the current containers, one
    YAML per object under the image directory, a ``timestamp`` file, no Lease."""
    rng = random.Random(seed)
    wrapper = root / f"must-gather.local.{rng.randint(10**18, 10**19 - 1)}"
    image = wrapper / (
        "quay-io-kubevirt-must-gather-sha256-"
        + "".join(rng.choice("0123456789abcdef") for _ in range(64))
    )
    _write(
        wrapper / "timestamp",
        go_time(capture.captured_at - 1_800_000, 81_622_945)
        + "\n"
        + go_time(capture.captured_at + 48_512_330, 50_393_114_020)
        + "\n",
    )
    _write(image / "version", "kubevirt/must-gather\nUnknown\n")
    for log, instance in capture.logs:
        if instance == "current":
            pod = f"namespaces/{log.namespace}/pods/{log.pod}"
            rel = f"{pod}/{log.container}/{log.container}/logs/current.log"
            _write(image / rel, log.render())
    for kind, items in capture.objects.items():
        for obj in items:
            for rel, document in _must_gather_files(kind, obj):
                _write(image / rel, to_yaml(document))
    for kind in ("Pod", "Event"):
        by_namespace: dict[str, list[Any]] = {}
        for obj in capture.objects.get(kind, []):
            by_namespace.setdefault(obj["metadata"].get("namespace", ""), []).append(obj)
        for namespace, items in by_namespace.items():
            name = "pods" if kind == "Pod" else "events"
            document = {
                "apiVersion": "v1",
                "items": items,
                "kind": "List",
                "metadata": {"resourceVersion": ""},
            }
            _write(image / f"namespaces/{namespace}/core/{name}.yaml", to_yaml(document))
    if readme is not None:
        _write(root / "README.md", readme)
    return root


def _must_gather_files(kind: str, obj: Any) -> list[tuple[str, Any]]:
    meta = obj["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    if kind == "VirtualMachine":
        return [(f"namespaces/{namespace}/kubevirt.io/virtualmachines/custom/{name}.yaml", obj)]
    if kind == "VirtualMachineInstance":
        return [
            (f"namespaces/{namespace}/crs/virtualmachineinstances.kubevirt.io/{name}.yaml", obj)
        ]
    if kind == "ControllerRevision":
        return [(f"namespaces/{namespace}/apps/controllerrevisions/{name}.yaml", obj)]
    if kind == "KubeVirt":
        return [(f"namespaces/{namespace}/crs/kubevirts.kubevirt.io/{name}.yaml", obj)]
    if kind == "VirtualMachineInstanceMigration":
        plural = "virtualmachineinstancemigrations.kubevirt.io"
        return [(f"namespaces/{namespace}/crs/{plural}/{name}.yaml", obj)]
    if kind == "Node":
        return [(f"cluster-scoped-resources/core/nodes/{name}.yaml", obj)]
    if kind == "Pod" and obj.get("status", {}).get("phase") == "Running":
        return [(f"namespaces/{namespace}/pods/{name}/{name}.yaml", obj)]
    return []
