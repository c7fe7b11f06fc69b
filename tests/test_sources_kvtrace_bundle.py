"""kvtrace's own bundle format (docs/bundle-format.md)."""

from __future__ import annotations

import gzip
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from kvtrace.errors import InputError
from kvtrace.evidence import LEASE, VM, VMI
from kvtrace.sources.bundle import open_bundle

POD = "virt-controller-7c9d5b6f4-h2xqm"
LOG = f"logs/kubevirt/{POD}/virt-controller/current.log"
LINE = b'2026-11-30T06:59:59.000000001Z {"component":"virt-controller","msg":"x"}\n'


def _manifest(**changes: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": "2026-11-30T07:00:00.000000Z",
        "kvtraceVersion": "0.1.0",
        "serverVersion": "v1.31.2",
        "kubevirtVersion": "v1.9.0",
        "kubevirtNamespace": "kubevirt",
        "scope": {"allNamespaces": False, "namespaces": ["default"], "vms": []},
        "collected": [
            {"kind": "VirtualMachine", "file": "objects/virtualmachines.yaml", "count": 1},
            {"kind": "Lease", "file": "objects/leases.yaml", "count": 0},
        ],
        "logs": [
            {
                "namespace": "kubevirt",
                "pod": POD,
                "container": "virt-controller",
                "instance": "current",
                "file": LOG,
                "timestamps": True,
            }
        ],
        "missing": [{"kind": "Lease", "reason": "forbidden: cannot list leases"}],
    }
    manifest.update(changes)
    return manifest


def _bundle(root: Path, manifest: dict[str, Any]) -> Path:
    (root / "objects").mkdir(parents=True)
    (root / "manifest.json").write_bytes(orjson.dumps(manifest))
    (root / "objects/virtualmachines.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kubevirt.io/v1\n  metadata:\n"
        "    name: web\n    namespace: default\n    uid: vm-1\n    resourceVersion: '5'\n"
    )
    (root / "objects/leases.yaml").write_text('{"kind":"LeaseList","items":[]}')
    (root / "objects/virtualmachineinstances.json").write_text(
        '{"kind":"VirtualMachineInstanceList","apiVersion":"kubevirt.io/v1",'
        '"items":[{"metadata":{"name":"web","namespace":"default","uid":"vmi-1"}}]}'
    )
    (root / LOG).parent.mkdir(parents=True)
    (root / LOG).write_bytes(LINE)
    (root / f"logs/kubevirt/{POD}/virt-controller/previous.log.gz").write_bytes(gzip.compress(LINE))
    return root


def test_manifest_drives_objects_logs_times_and_gaps(tmp_path: Path) -> None:
    with open_bundle(_bundle(tmp_path / "b", _manifest())) as evidence:
        assert (evidence.layout, evidence.coverage) == ("kvtrace", "full")
        assert evidence.captured_at == datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
        assert evidence.kubevirt_version == "v1.9.0"
        (vm,) = evidence.of_kind(VM)
        assert (vm.kind, vm.body["kind"], vm.resource_version) == (VM, VM, "5")
        assert [vmi.name for vmi in evidence.of_kind(VMI)] == ["web"]  # unlisted file still read
        assert evidence.of_kind(LEASE) == []
        assert evidence.missing == ["Lease was not collected: forbidden: cannot list leases"]
        current, previous = evidence.logs
        assert (current.info.pod, current.info.instance, current.prefixed) == (POD, "current", True)
        assert current.path is not None and previous.path is None
        assert previous.info.instance == "previous"
        with previous.open() as stream:
            assert stream.read() == LINE
        assert evidence.manifest is not None and evidence.manifest["serverVersion"] == "v1.31.2"


def test_manifest_one_level_down_in_an_archive(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "kvtrace-bundle-20261130", _manifest())
    archive = tmp_path / "bundle.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=root.name)
    with open_bundle(archive) as evidence:
        assert evidence.layout == "kvtrace"
        assert evidence.logs[0].info.source_id.startswith("kvtrace-bundle-20261130/logs/")


def test_listed_but_absent_file_is_skipped_with_reason(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b", _manifest())
    (root / "objects/leases.yaml").unlink()
    with open_bundle(root) as evidence:
        assert ("objects/leases.yaml", "listed in manifest.json but absent from the bundle") in (
            evidence.skipped
        )


def test_newer_format_version_asks_for_an_upgrade(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b", _manifest(formatVersion=2))
    with pytest.raises(InputError, match="upgrade kvtrace"), open_bundle(root):
        pass


def test_manifest_json_of_another_kind_is_not_a_kvtrace_bundle(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b", _manifest(kind="SomethingElse"))
    with open_bundle(root) as evidence:
        assert evidence.layout == "plain"
