"""`timeline NS/VM` decodes only the objects that VM can use (issue 16): its timeline, scope,
skips and coverage are the same as when every object is decoded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvtrace.evidence import POD, VM, Evidence
from kvtrace.model.engine import AssessedTimeline, assess
from kvtrace.model.version import detect
from kvtrace.render.outputs import render
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline.build import build_timeline
from kvtrace.timeline.vmscope import build_scope
from parsers.manifests import split_json_list
from tests.conftest import ROOT, SAMPLES

GENERATOR = ROOT / "bench" / "generate_log.py"
SAMPLE_NAMES = sorted(p.name for p in SAMPLES.iterdir() if (p / "README.md").exists())


def _vms(root: Path) -> list[tuple[str, str]]:
    with open_bundle(root) as evidence:
        return sorted({(o.namespace or "default", o.name) for o in evidence.of_kind(VM)})


def _seen(evidence: Evidence, namespace: str, name: str) -> tuple[object, ...]:
    timeline = build_timeline(evidence, namespace, name)
    assessed = AssessedTimeline(timeline, assess(timeline, version=detect(evidence)))
    summary = evidence.summary()
    return (build_scope(evidence, namespace, name), render("timeline", assessed, "json"), summary)


def _same_with_and_without(root: Path, namespace: str, name: str) -> Evidence:
    with open_bundle(root) as evidence:
        every = _seen(evidence, namespace, name)
    with open_bundle(root, only=(namespace, name)) as evidence:
        assert _seen(evidence, namespace, name) == every
        return evidence


@pytest.fixture(scope="module")
def many_vms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kvsim history of 200 VMs (four shards), faults included, as a bundle."""
    out = tmp_path_factory.mktemp("object-filter") / "bundle"
    args = ("--size", "1M", "--vms", "200", "--fault-every", "20", "--seed", "16")
    subprocess.run([sys.executable, str(GENERATOR), *args, "--out", str(out)], check=True)
    return out


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_every_sample_vm_is_the_same_filtered(sample, monkeypatch):
    monkeypatch.chdir(ROOT)
    for namespace, name in _vms(Path("sample-logs") / sample):
        _same_with_and_without(Path("sample-logs") / sample, namespace, name)


def test_kvsim_vms_are_the_same_filtered(many_vms):
    keys = _vms(many_vms)
    faulty = {
        tuple(line.split()[0].split("/"))
        for line in (many_vms / "README.md").read_text().splitlines()
        if line.startswith("    ") and "/" in line
    }
    chosen = sorted(set(keys[::9]) | faulty)
    assert len(chosen) >= 20
    for namespace, name in chosen:
        evidence = _same_with_and_without(many_vms, namespace, name)
        assert len(evidence.of_kind(VM)) < len(keys) / 10  # the filter did filter


def test_the_release_from_image_tags_reads_every_launcher_pod(many_vms, tmp_path):
    """Without a stated release, the first pod with a KubeVirt image names it: all are read."""
    root = tmp_path / "bundle"
    subprocess.run(["cp", "-r", str(many_vms), str(root)], check=True)
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["kubevirtVersion"]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))
    kubevirts = json.loads((root / "objects/kubevirts.json").read_text())
    for kubevirt in kubevirts["items"]:
        kubevirt.get("status", {}).pop("observedKubeVirtVersion", None)
    (root / "objects/kubevirts.json").write_text(json.dumps(kubevirts, indent=1))
    namespace, name = _vms(root)[7]
    evidence = _same_with_and_without(root, namespace, name)
    with open_bundle(root) as every:
        assert len(evidence.of_kind(POD)) == len(every.of_kind(POD))


def test_a_nameless_object_is_still_a_skip(many_vms, tmp_path):
    root = tmp_path / "bundle"
    subprocess.run(["cp", "-r", str(many_vms), str(root)], check=True)
    events = json.loads((root / "objects/events.json").read_text())
    del events["items"][3]["metadata"]["name"]
    (root / "objects/events.json").write_text(json.dumps(events, indent=1, sort_keys=True))
    namespace, name = _vms(root)[0]
    evidence = _same_with_and_without(root, namespace, name)
    assert ("objects/events.json", "Event without metadata.name") in evidence.skipped


def test_a_truncated_object_file_is_still_a_skip(many_vms, tmp_path):
    root = tmp_path / "bundle"
    subprocess.run(["cp", "-r", str(many_vms), str(root)], check=True)
    data = (root / "objects/events.json").read_bytes()
    (root / "objects/events.json").write_bytes(data[: len(data) // 2])
    namespace, name = _vms(root)[0]
    evidence = _same_with_and_without(root, namespace, name)
    assert [path for path, _ in evidence.skipped] == ["objects/events.json"]


def test_lists_are_cut_into_the_items_they_decode_to():
    doc = {
        "apiVersion": "v1",
        "items": [
            {"kind": "Pod", "metadata": {"name": f"p{i}", "x": [{"y": "}"}]}} for i in range(3)
        ],
        "kind": "PodList",
        "metadata": {"resourceVersion": ""},
    }
    for indent in (1, 2, 4):
        data = json.dumps(doc, indent=indent).encode()
        items = split_json_list(data)
        assert items is not None
        assert [json.loads(data[a:b]) for a, b in items.spans] == doc["items"]
        assert items.skeleton == {**doc, "items": []}
    assert split_json_list(json.dumps(doc).encode()) is None  # one line: not cut
    assert split_json_list(json.dumps(doc, indent=1).encode()[:-40]) is None


def test_a_uid_json_may_escape_reads_everything(many_vms, tmp_path):
    """A uid a byte scan may not find as written (here with a slash and an accent): the filter
    gives up, for the files read before it too."""
    root = tmp_path / "bundle"
    subprocess.run(["cp", "-r", str(many_vms), str(root)], check=True)
    vmis = json.loads((root / "objects/virtualmachineinstances.json").read_text())
    vmi = vmis["items"][0]
    old, new = vmi["metadata"]["uid"], "odd/uid-\u00e9"
    vmi["metadata"]["uid"] = new
    (root / "objects/virtualmachineinstances.json").write_text(json.dumps(vmis, indent=1))
    pods = (root / "objects/pods.json").read_text().replace(old, new.replace("/", "\\/"))
    (root / "objects/pods.json").write_text(pods)
    _same_with_and_without(root, vmi["metadata"]["namespace"], vmi["metadata"]["name"])
