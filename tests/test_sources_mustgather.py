"""KubeVirt must-gather and plain inspect trees: layouts, object de-duplication, what is missing."""

from __future__ import annotations

import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from kvtrace.evidence import POD, REVISION, VM, VMI, Evidence
from kvtrace.sources.bundle import open_bundle

NS, INSTALL = "shop-prod", "kubevirt"
VMI_UID = "afde60bc-ef93-48b9-bf25-b4ca5b005407"
VM_UID_OLD, VM_UID_NEW = (
    "940dbef6-7c4e-47dd-8335-331151d9fd89",
    "5a1c0f42-1111-4e4e-9a9a-0123456789ab",
)
IMAGE = "quay-io-kubevirt-must-gather-sha256-0123"
OTHER_IMAGE = "quay-io-openshift-must-gather-sha256-4567"
PREFIXED = '2025-03-07T09:14:05.412530871Z {"component":"virt-controller","msg":"x"}\n'


def _vmi(resource_version: str, phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": "pg-main",
            "namespace": NS,
            "uid": VMI_UID,
            "resourceVersion": resource_version,
        },
        "status": {"phase": phase},
    }


def _vm(uid: str, created: str) -> str:
    return (
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n"
        f"  name: pg-main\n  namespace: {NS}\n  uid: {uid}\n  creationTimestamp: {created}\n"
        "  resourceVersion: '10'\nspec:\n  runStrategy: Always\n"
    )


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _image_root(root: Path) -> None:
    _write(root, "version", "kubevirt/must-gather\nv1.9.0\n")
    ns = f"namespaces/{NS}"
    vmi_list = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceList",
        "items": [{k: v for k, v in _vmi("100", "Scheduled").items() if k != "kind"}],
    }
    _write(root, f"{ns}/kubevirt.io/virtualmachineinstances.yaml", orjson.dumps(vmi_list).decode())
    _write(
        root,
        f"{ns}/crs/virtualmachineinstances.kubevirt.io/pg-main.yaml",
        orjson.dumps(_vmi("300", "Running")).decode(),
    )  # a .yaml file holding JSON
    _write(
        root,
        f"{ns}/kubevirt.io/virtualmachineinstances/pg-main.yaml",
        orjson.dumps(_vmi("200", "Scheduling")).decode(),
    )
    _write(
        root,
        f"{ns}/kubevirt.io/virtualmachines/custom/pg-main.yaml",
        _vm(VM_UID_NEW, "2025-03-07T09:00:00Z"),
    )
    _write(
        root,
        f"{ns}/kubevirt.io/virtualmachines/template-based/pg-main-old.yaml",
        _vm(VM_UID_OLD, "2025-03-01T08:00:00Z"),
    )
    _write(
        root,
        f"{ns}/apps/controllerrevisions/revision-start-vm-{VM_UID_NEW}-1.yaml",
        f"apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n"
        f"  name: revision-start-vm-{VM_UID_NEW}-1\n  namespace: {NS}\n  uid: r1\nrevision: 1\n",
    )
    _write(
        root,
        f"{ns}/core/pods.yaml",
        "apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n"
        "    name: virt-launcher-pg-main-x7k2d\n"
        f"    namespace: {NS}\n    uid: p1\n",
    )
    _write(root, f"{ns}/core/configmaps.yaml", "this: [is not: even parsed")
    _write(root, f"{ns}/core/secrets.yaml", "kind: SecretList\nitems: []\n")
    pod = "virt-controller-7c9d5b6f4-h2xqm"
    logs = f"namespaces/{INSTALL}/pods/{pod}/virt-controller/virt-controller/logs"
    _write(root, f"{logs}/current.log", "tls error\n")
    _write(root, f"{logs}/current.insecure.log", PREFIXED)
    _write(root, f"{logs}/previous.log", PREFIXED)
    _write(root, f"{ns}/core/events.yaml", "kind: EventList\nitems:\n- metadata: {name: [x\n")


def _wrapper(tmp_path: Path) -> Path:
    wrapper = tmp_path / "must-gather.local.5581730113916385467"
    _image_root(wrapper / IMAGE)
    _write(wrapper / OTHER_IMAGE, "version", "openshift/must-gather\n4.18\n")
    _write(wrapper / OTHER_IMAGE, f"namespaces/{NS}/core/pods.yaml", "kind: PodList\nitems: []\n")
    _write(
        wrapper,
        "timestamp",
        "2025-03-07 10:05:41.551203114 +0000 UTC m=+0.081622945\n"
        "2025-03-07 10:07:02.100000000 +0000 UTC m=+80.6\n",
    )
    _write(wrapper, "must-gather.logs", "oc log\n")
    return wrapper


def _tgz(source: Path, target: Path) -> Path:
    with tarfile.open(target, "w:gz") as tar:
        tar.add(source, arcname=source.name)
    return target


def _check_must_gather(evidence: Evidence) -> None:
    assert evidence.layout == "must-gather" and evidence.coverage == "full"
    (vmi,) = evidence.of_kind(VMI)
    assert vmi.resource_version == "300" and vmi.body["status"]["phase"] == "Running"
    assert len(vmi.seen_in) == 3
    assert any("/crs/" in p for p in vmi.seen_in)
    vms = evidence.of_kind(VM)
    assert sorted(vm.uid or "" for vm in vms) == sorted([VM_UID_OLD, VM_UID_NEW])
    assert all(vm.body["metadata"]["creationTimestamp"].endswith("Z") for vm in vms)
    assert [r.body["revision"] for r in evidence.of_kind(REVISION)] == [1]
    assert [p.name for p in evidence.of_kind(POD)] == ["virt-launcher-pg-main-x7k2d"]
    assert evidence.captured_at == datetime(2025, 3, 7, 10, 7, 2, 100000, tzinfo=UTC)
    assert any("never collects the virt-controller Lease" in m for m in evidence.missing)


def _log_names(evidence: Evidence) -> list[tuple[str | None, str | None, str]]:
    return [
        (log.info.container, log.info.instance, log.info.source_id.rsplit("/", 1)[-1])
        for log in evidence.logs
    ]


def test_wrapper_directory(tmp_path: Path) -> None:
    with open_bundle(_wrapper(tmp_path)) as evidence:
        _check_must_gather(evidence)
        assert _log_names(evidence) == [
            ("virt-controller", "current", "current.insecure.log"),
            ("virt-controller", "previous", "previous.log"),
        ]
        assert all(log.prefixed for log in evidence.logs)
        with evidence.logs[0].open() as stream:
            assert stream.read().decode() == PREFIXED


def test_wrapper_tar_gz_and_replaced_insecure_log_is_reported(tmp_path: Path) -> None:
    archive = _tgz(_wrapper(tmp_path / "src"), tmp_path / "mg.tar.gz")
    with open_bundle(archive) as evidence:
        _check_must_gather(evidence)
        skipped = dict(evidence.skipped)
        replaced = [p for p in skipped if p.endswith("logs/current.log")]
        assert replaced and "insecure" in skipped[replaced[0]]
        assert evidence.origin == str(archive)


def test_unreadable_files_are_skipped_with_reasons_and_unused_kinds_are_silent(
    tmp_path: Path,
) -> None:
    with open_bundle(_wrapper(tmp_path)) as evidence:
        paths = [p for p, _ in evidence.skipped]
        assert not any("configmaps" in p for p in paths)  # never opened
        assert not any("secrets" in p for p in paths)
        broken = [r for p, r in evidence.skipped if p.endswith("core/events.yaml")]
        assert broken == [
            "not a readable manifest (line 4, column 1): did not find expected ',' or ']'"
        ]


def test_bare_root_without_wrapper(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    _image_root(root)
    with open_bundle(root) as evidence:
        assert evidence.layout == "must-gather"
        assert evidence.captured_at is None
        assert len(evidence.of_kind(VMI)) == 1


def test_two_kubevirt_roots_are_merged_and_deduplicated(tmp_path: Path) -> None:
    wrapper = tmp_path / "mg"
    _image_root(wrapper / "node-b07" / IMAGE)
    _image_root(wrapper / "node-b11" / IMAGE)
    with open_bundle(wrapper) as evidence:
        (vmi,) = evidence.of_kind(VMI)
        assert len(vmi.seen_in) == 6
        assert len(evidence.logs) == 4


def test_no_controller_logs_is_named(tmp_path: Path) -> None:
    root = tmp_path / "r"
    _write(root, "version", "kubevirt/must-gather\n")
    with open_bundle(root) as evidence:
        assert any("no virt-controller logs" in m for m in evidence.missing)


def test_plain_inspect_tree_without_version_file(tmp_path: Path) -> None:
    root = tmp_path / "inspect.local"
    _image_root(root)
    (root / "version").unlink()
    with open_bundle(root) as evidence:
        assert evidence.layout == "inspect" and evidence.coverage == "full"
        assert evidence.of_kind(VMI)[0].resource_version == "300"


@pytest.mark.parametrize("depth", [5])
def test_version_file_deeper_than_four_is_not_a_root(tmp_path: Path, depth: int) -> None:
    root = tmp_path.joinpath("top", *[f"d{i}" for i in range(depth)])
    _write(root, "version", "kubevirt/must-gather\n")
    with open_bundle(tmp_path / "top") as evidence:
        assert evidence.layout == "plain"
