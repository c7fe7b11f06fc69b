"""Write a :class:`~kvsim.cluster.Capture` as a kvtrace bundle directory (docs/bundle-format.md):
``manifest.json``, ``objects/<plural>.json|yaml`` and ``logs/<ns>/<pod>/<container>/*.log`` with
the kubelet's ``--timestamps`` prefix."""

from __future__ import annotations

import json
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
        _write(root / rel, log.render())
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
