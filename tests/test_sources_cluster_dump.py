"""kubectl cluster-info dump --output-directory."""

from __future__ import annotations

from pathlib import Path

import orjson

from kvtrace.evidence import EVENT, NODE, POD, VM
from kvtrace.sources.bundle import open_bundle

LOGS = (
    "==== START logs for container compute of pod shop-prod/virt-launcher-pg-main-x7k2d ====\n"
    '{"component":"virt-launcher","msg":"up"}\n'
    "==== END logs for container compute of pod shop-prod/virt-launcher-pg-main-x7k2d ====\n"
)


def _dump(root: Path, with_kubevirt: bool) -> Path:
    root.mkdir(parents=True)
    (root / "nodes.json").write_bytes(
        orjson.dumps(
            {
                "kind": "NodeList",
                "apiVersion": "v1",
                "items": [{"metadata": {"name": "node-b07", "uid": "n1"}}],
            }
        )
    )
    namespaces = ["shop-prod", "kube-system"] + (["kubevirt"] if with_kubevirt else [])
    for ns in namespaces:
        (root / ns).mkdir()
        pod = "virt-launcher-pg-main-x7k2d" if ns == "shop-prod" else f"virt-controller-{ns}"
        pods = {
            "kind": "PodList",
            "apiVersion": "v1",
            "items": [{"metadata": {"name": pod, "namespace": ns, "uid": f"u-{ns}"}}],
        }
        (root / ns / "pods.json").write_bytes(orjson.dumps(pods, option=orjson.OPT_INDENT_2))
        (root / ns / "services.json").write_text('{"kind":"ServiceList","items":[]}')
        (root / ns / pod).mkdir()
        (root / ns / pod / "logs.txt").write_text(LOGS)
    events = {
        "kind": "EventList",
        "items": [
            {
                "metadata": {"name": "e1", "namespace": "shop-prod", "uid": "e1"},
                "involvedObject": {"kind": "VirtualMachine", "name": "pg-main"},
            }
        ],
    }
    (root / "shop-prod" / "events.json").write_bytes(orjson.dumps(events))
    return root


def test_lists_logs_and_gaps(tmp_path: Path) -> None:
    with open_bundle(_dump(tmp_path / "dump", with_kubevirt=True)) as evidence:
        assert (evidence.layout, evidence.coverage) == ("cluster-info-dump", "low")
        assert [n.name for n in evidence.of_kind(NODE)] == ["node-b07"]
        assert evidence.of_kind(NODE)[0].body["kind"] == "Node"
        assert len(evidence.of_kind(POD)) == 3
        (event,) = evidence.of_kind(EVENT)
        assert event.body["kind"] == "Event"  # inherited from the file name, the list lacks it
        assert evidence.of_kind(VM) == []
        assert sorted((log.info.namespace, log.info.pod) for log in evidence.logs)[0] == (
            "kube-system",
            "virt-controller-kube-system",
        )
        assert all(log.prefixed is False and log.info.container is None for log in evidence.logs)
        assert any("no VirtualMachine" in m for m in evidence.missing)
        assert not any("no virt-controller logs" in m for m in evidence.missing)


def test_dump_without_kubevirt_namespace_says_how_to_fix(tmp_path: Path) -> None:
    root = _dump(tmp_path / "dump", with_kubevirt=False)
    (root / "kube-system" / "virt-controller-kube-system").rename(root / "kube-system" / "coredns")
    with open_bundle(root) as evidence:
        assert any("--namespaces kubevirt" in m for m in evidence.missing)
