"""Plain directories, single files and --log FILE / stdin."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvtrace.errors import InputError
from kvtrace.evidence import EVENT, POD, VMI
from kvtrace.sources.bundle import NO_OBJECTS, open_bundle, open_logs
from kvtrace.sources.layouts.plain import sniff
from kvtrace.sources.objects import NO_UID

VMI_PASTE = """user@bastion:~$ oc get vmi pg-main -o yaml
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: pg-main
  namespace: shop-prod
  creationTimestamp: 2025-03-07T09:14:06Z
...
status:
  phase: Running
"""
KLOG = "I0307 09:13:58.100214       1 leaderelection.go:257] attempting to acquire leader lease\n"
JSON_LOG = '{"component":"virt-controller","kind":"","level":"info","msg":"x"}\n' * 2
CRI = '2025-03-07T09:14:05.4125Z stderr F {"msg":"x"}\n'


def _plain(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "vmi.txt").write_text(VMI_PASTE)
    (root / "pods.json").write_text('{"items":[{"metadata":{"name":"p","uid":"u"}}]}')
    (root / "controller.log").write_text(KLOG)
    (root / "app.jsonl").write_text(JSON_LOG)
    pod_dir = "kubevirt_virt-handler-r7t5k_02e7bf08-8e0b-4331-babe-517634d9abae/virt-handler"
    (root / "sub" / pod_dir).mkdir(parents=True)
    (root / "sub" / pod_dir / "0.log.gz").write_bytes(gzip.compress(CRI.encode()))
    (root / "describe.txt").write_text("Name:         pg-main\nNamespace:    shop-prod\n")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    (root / "empty.log").write_text("")
    (root / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n")
    return root


def test_plain_directory_is_sniffed_by_content(tmp_path: Path) -> None:
    with open_bundle(_plain(tmp_path / "p")) as evidence:
        assert (evidence.layout, evidence.coverage) == ("plain", "low")
        (vmi,) = evidence.of_kind(VMI)
        assert vmi.body["metadata"]["creationTimestamp"] == "2025-03-07T09:14:06Z"
        assert NO_UID in vmi.flags and vmi.seen_in == ["vmi.txt"]
        assert [p.body["kind"] for p in evidence.of_kind(POD)] == ["Pod"]  # kind from file name
        sources = {log.info.source_id: log.info for log in evidence.logs}
        assert set(sources) == {
            "app.jsonl",
            "controller.log",
            "sub/kubevirt_virt-handler-r7t5k_02e7bf08-8e0b-4331-babe-517634d9abae/virt-handler/0.log.gz",
        }
        handler = next(i for s, i in sources.items() if s.endswith(".gz"))
        assert (handler.namespace, handler.pod, handler.container) == (
            "kubevirt",
            "virt-handler-r7t5k",
            "virt-handler",
        )
        reasons = dict(evidence.skipped)
        assert "kubectl get -o yaml" in reasons["describe.txt"]
        assert "binary" in reasons["blob.bin"] and reasons["empty.log"] == "empty file"
        assert reasons["broken.yaml"].startswith("not a readable manifest (line 4, column 1)")
        assert any("Lease" in m for m in evidence.missing)


def test_no_uid_objects_with_different_creation_are_two_incarnations(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.yaml").write_text(VMI_PASTE)
    (root / "b.yaml").write_text(VMI_PASTE.replace("09:14:06Z", "10:00:00Z"))
    (root / "c.yaml").write_text(VMI_PASTE)
    with open_bundle(root) as evidence:
        vmis = evidence.of_kind(VMI)
        assert [v.seen_in for v in vmis] == [["a.yaml", "c.yaml"], ["b.yaml"]]


def test_single_events_table_file_without_collection_time(tmp_path: Path) -> None:
    table = tmp_path / "events.txt"
    table.write_text(
        f"{'LAST SEEN':<12}{'TYPE':<9}{'REASON':<10}{'OBJECT':<18}MESSAGE\n"
        f"{'45s':<12}{'Normal':<9}{'Started':<10}{'pod/virt-launch':<18}Started\n"
    )
    with open_bundle(table) as evidence:
        (event,) = evidence.of_kind(EVENT)
        assert event.body["x-kvtrace"]["lastSeen"] is None
        assert any("no collection time" in m for m in evidence.missing)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"", "empty"),
        (b"\n\n", "empty"),
        (b"\x00abc", "binary"),
        (KLOG.encode(), "log"),
        (JSON_LOG.encode(), "log"),
        (CRI.encode(), "log"),
        (b'{\n  "kind": "PodList"', "manifest"),
        (b'[{"kind":"Pod"}]', "manifest"),
        (b'{"apiVersion":"v1","kind":"Pod","metadata":{}}\n', "manifest"),
        (b'[pod/virt-controller-1/virt-controller] {"msg":1}\n', "log"),
        (VMI_PASTE.encode(), "manifest"),
        (b"---\nkind: Pod\n", "manifest"),
        (b"<!DOCTYPE html><html>", "html"),
    ],
)
def test_sniff(head: bytes, expected: str) -> None:
    assert sniff(head) == expected


def test_open_logs_files_gz_and_stdin(tmp_path: Path) -> None:
    plain_log = tmp_path / "controller.log"
    plain_log.write_text(KLOG)
    packed = tmp_path / "old.log.gz"
    packed.write_bytes(gzip.compress(KLOG.encode()))
    before = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("kvtrace-")}
    stdin = io.BytesIO(gzip.compress(JSON_LOG.encode()))
    with open_logs([str(plain_log), str(packed), "-"], stdin=stdin) as evidence:
        assert (evidence.layout, evidence.coverage, evidence.missing) == (
            "logs",
            "low",
            [NO_OBJECTS],
        )
        by_id = {log.info.source_id: log for log in evidence.logs}
        assert set(by_id) == {str(plain_log), str(packed), "stdin"}
        for log, text in ((by_id[str(packed)], KLOG), (by_id["stdin"], JSON_LOG)):
            with log.open() as stream:
                assert stream.read().decode() == text
        with by_id["stdin"].open() as again:  # stdin was spooled: it can be read twice
            assert again.read().decode() == JSON_LOG
    after = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("kvtrace-")}
    assert after == before


def test_open_logs_missing_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.log"
    with pytest.raises(InputError, match=r"nope\.log: no such log file"), open_logs([str(missing)]):
        pass


def test_open_bundle_missing_path_names_it_and_the_fix(tmp_path: Path) -> None:
    absent = tmp_path / "absent"
    with pytest.raises(InputError, match="absent: no such file"), open_bundle(absent):
        pass


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_sniff_never_raises(head: bytes) -> None:
    assert sniff(head) in {"manifest", "log", "events", "binary", "empty", "describe", "html"}


def test_same_kind_from_another_api_group_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "vms.yaml").write_text(
        "apiVersion: vmoperator.vmware.com/v1alpha1\nkind: VirtualMachine\nmetadata: {name: a}\n"
        "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: b, uid: u}\n"
        "---\napiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: e}\n"
    )
    with open_bundle(root) as evidence:
        assert [vm.name for vm in evidence.of_kind("VirtualMachine")] == ["b"]
        assert evidence.of_kind(EVENT) == []
