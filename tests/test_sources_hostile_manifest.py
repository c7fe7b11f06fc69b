"""What manifest.json says was collected is checked against what was read: a lost object, an
unreadable manifest, or a manifest read as a log is reported, never silent."""

from __future__ import annotations

import tarfile
from pathlib import Path

import orjson
import pytest

from kvtrace.errors import InputError
from kvtrace.sources.bundle import open_bundle

LOG = "logs/kubevirt/virt-controller-1/virt-controller/current.log"
LINE = b'2026-11-30T06:59:59.000000001Z {"component":"virt-controller","msg":"x"}\n'
PODS = (
    '{"kind":"PodList","apiVersion":"v1","items":['
    + ",".join(
        f'{{"metadata":{{"name":"p{i}","namespace":"default","uid":"u{i}"}}}}' for i in range(3)
    )
    + "]}"
)


def _bundle(root: Path, pods: str = PODS, count: int = 3) -> Path:
    (root / "objects").mkdir(parents=True)
    manifest = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": "2026-11-30T07:00:00.000000Z",
        "collected": [{"kind": "Pod", "file": "objects/pods.yaml", "count": count}],
        "logs": [{"file": LOG, "timestamps": True}],
    }
    (root / "manifest.json").write_bytes(orjson.dumps(manifest))
    (root / "objects/pods.yaml").write_text(pods)
    (root / LOG).parent.mkdir(parents=True)
    (root / LOG).write_bytes(LINE)
    return root


def test_counts_that_agree_give_full_coverage(tmp_path: Path) -> None:
    with open_bundle(_bundle(tmp_path / "b")) as evidence:
        assert (evidence.coverage, len(evidence.of_kind("Pod")), evidence.missing) == (
            "full",
            3,
            [],
        )


@pytest.mark.parametrize("pods", ["", '{"kind":"PodList","items":[]}'])
def test_an_emptied_object_file_is_reported_with_its_counts(tmp_path: Path, pods: str) -> None:
    with open_bundle(_bundle(tmp_path / "b", pods=pods)) as evidence:
        assert evidence.of_kind("Pod") == []
        assert evidence.coverage == "low"
        (gap,) = evidence.missing
        assert "objects/pods.yaml" in gap and "holds 0" in gap and "counts 3 Pod" in gap


def test_more_objects_than_counted_is_a_disagreement_too(tmp_path: Path) -> None:
    with open_bundle(_bundle(tmp_path / "b", count=2)) as evidence:
        assert evidence.coverage == "low"
        assert any("holds 3" in gap and "counts 2" in gap for gap in evidence.missing)


def test_a_listed_file_that_is_absent_lowers_the_coverage(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    (root / LOG).unlink()
    with open_bundle(root) as evidence:
        assert evidence.coverage == "low"
        assert (LOG, "listed in manifest.json but absent from the bundle") in evidence.skipped


@pytest.mark.parametrize("broken", [b"", b'{"kind": "BundleManifest", "collected": [', b"\xff\xfe"])
def test_an_unparseable_manifest_is_an_error_naming_it(tmp_path: Path, broken: bytes) -> None:
    root = _bundle(tmp_path / "b")
    (root / "manifest.json").write_bytes(broken)
    with pytest.raises(InputError) as caught, open_bundle(root):
        pass
    message = str(caught.value)
    assert "manifest.json is not valid JSON" in message and "re-collect" in message


def test_an_unparseable_manifest_one_level_down_in_an_archive(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "kvtrace-bundle-1")
    (root / "manifest.json").write_bytes(b'{"kind": "BundleMani')
    archive = tmp_path / "bundle.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=root.name)
    pattern = r"bundle\.tgz: kvtrace-bundle-1/manifest\.json is not valid JSON"
    with pytest.raises(InputError, match=pattern), open_bundle(archive):
        pass


def test_a_foreign_manifest_json_is_never_read_as_a_log(tmp_path: Path) -> None:
    bundle = tmp_path / "plain"
    bundle.mkdir()
    (bundle / "manifest.json").write_text('{"tool":"sosreport","version":3}\n')
    (bundle / "controller.log").write_bytes(LINE)
    with open_bundle(bundle) as evidence:
        assert evidence.layout == "plain"
        assert [log.info.source_id for log in evidence.logs] == ["controller.log"]
        assert any(path == "manifest.json" and "not read" in r for path, r in evidence.skipped)


def test_a_manifest_listing_itself_as_a_log_is_not_read_as_one(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    manifest = orjson.loads((root / "manifest.json").read_bytes())
    manifest["logs"].append({"file": "manifest.json"})
    (root / "manifest.json").write_bytes(orjson.dumps(manifest))
    with open_bundle(root) as evidence:
        assert [log.info.source_id for log in evidence.logs] == [LOG]
        assert evidence.coverage == "low"
        assert any(path == "manifest.json" and "not read" in r for path, r in evidence.skipped)
