"""Harvester support bundles (rancher/support-bundle-kit): ``metadata.yaml``, ``yamls/namespaced``
and ``yamls/cluster`` Lists, ``logs/<ns>/<pod>/<container>.log`` (issue 17). The bundle is a kvsim
capture laid out as the kit lays out a cluster: objects and lines are kvsim's."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvtrace.errors import InputError
from kvtrace.evidence import LEASE, POD, VM, VMI
from kvtrace.sources.bundle import bundle_roots, open_bundle, open_bundles
from kvtrace.sources.tarball import open_tree
from tests.conftest import SAMPLES
from tests.helpers import run_cli

SAMPLE = SAMPLES / "always-restart"
_CORE = {"pods", "events", "endpoints", "nodes"}
_GROUPS = {"controllerrevisions": "apps/v1", "leases": "coordination.k8s.io/v1"}
_TIME_PREFIX = re.compile(r"^\S+Z ")


def _group_version(plural: str) -> str:
    if plural in _CORE:
        return "v1"
    return _GROUPS.get(plural, "kubevirt.io/v1")


def _kit_json(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kit's toObj: empty strings and nulls before a comma are written as "null"."""
    text = json.dumps(items, separators=(",", ":"))
    text = re.sub(r'("[a-zA-Z]+":)(null,)', r'\1"null",', text).replace('""', '"null"')
    return list(json.loads(text))


def harvester_bundle(sample: Path, root: Path, timestamps: bool = False) -> Path:
    """``sample`` (a kvtrace bundle from kvsim) as a Harvester support bundle under ``root``."""
    manifest = json.loads((sample / "manifest.json").read_text())
    meta = {
        "projectName": "Harvester",
        "projectVersion": "v1.4.0",
        "bundleVersion": "0.0.1",
        "kubernetesVersion": manifest.get("serverVersion", "v1.31.2"),
        "bundleCreatedAt": manifest["capturedAt"],
    }
    root.mkdir(parents=True)
    (root / "metadata.yaml").write_text(yaml.safe_dump(meta))
    for objects in sorted((sample / "objects").glob("*.yaml")):
        _write_lists(root, objects.stem, yaml.safe_load(objects.read_text())["items"])
    for log in sorted((sample / "logs").glob("*/*/*/current.log")):
        namespace, pod, container = log.parts[-4:-1]
        text = log.read_text(encoding="utf-8")
        if not timestamps:  # the kit asks for the log without the kubelet's stamps
            text = "".join(_TIME_PREFIX.sub("", line) for line in text.splitlines(keepends=True))
        target = root / "logs" / namespace / pod / f"{container}.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _write_lists(root: Path, plural: str, items: list[dict[str, Any]]) -> None:
    by_namespace: dict[str | None, list[dict[str, Any]]] = {}
    for item in items:
        by_namespace.setdefault(item["metadata"].get("namespace"), []).append(item)
    for namespace, group in by_namespace.items():
        scope = ["cluster"] if namespace is None else ["namespaced", namespace]
        target = root.joinpath(
            "yamls", *scope, *_group_version(plural).split("/"), f"{plural}.yaml"
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        document = {"apiVersion": "v1", "kind": "List", "items": _kit_json(group)}
        target.write_text(yaml.safe_dump(document, sort_keys=False))


def _rows(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines()]


def test_layout_objects_logs_and_collection_time(tmp_path):
    root = harvester_bundle(SAMPLE, tmp_path / "supportbundle")
    with open_bundle(root) as evidence:
        assert (evidence.layout, evidence.coverage) == ("harvester", "full")
        assert sorted(vm.name for vm in evidence.of_kind(VM)) == ["other-vm", "testvm"]
        assert evidence.of_kind(VMI) and evidence.of_kind(POD) and evidence.of_kind(LEASE)
        assert evidence.captured_at is not None
        assert {(s.info.pod, s.info.container) for s in evidence.logs} == {
            (log.parts[-3], log.parts[-2]) for log in (SAMPLE / "logs").glob("*/*/*/current.log")
        }
        assert any("current log only" in note for note in evidence.missing)
        assert evidence.skipped == []


@pytest.mark.parametrize("timestamps", [True, False], ids=["stamped", "bare"])
def test_timeline_equals_the_kvtrace_bundle(capsys, tmp_path, timestamps):
    """The same VM's rows and verdicts whether kvsim's capture comes as a kvtrace bundle or as
    a Harvester support bundle, its logs with or without the kubelet's stamps."""
    expected = run_cli(capsys, "timeline", "default/testvm", "--bundle", str(SAMPLE))
    root = harvester_bundle(SAMPLE, tmp_path / "sb", timestamps)
    got = run_cli(capsys, "timeline", "default/testvm", "--bundle", str(root))
    assert got[0] == expected[0] and got[2] == ""
    summary = "evidence: harvester (full coverage)"
    rows = _rows(got[1].replace(summary, "evidence: kvtrace (full coverage)"))
    gap = "note: a Harvester support bundle holds each container's current log only"
    assert gap in got[1]
    assert [row for row in rows if not row.startswith(gap)] == _rows(expected[1])


def test_a_zip_extracted_wrapper_directory_is_found(tmp_path):
    root = harvester_bundle(SAMPLE, tmp_path / "case" / "supportbundle_0a1b_2026-11-28T00-44-51Z")
    with open_tree(tmp_path / "case") as tree:
        assert bundle_roots(tree) == ["supportbundle_0a1b_2026-11-28T00-44-51Z"]
    with open_bundle(tmp_path / "case") as evidence:
        assert evidence.layout == "harvester" and len(evidence.of_kind(VM)) == 2
    assert root.exists()


def test_two_support_bundles_are_two_bundles(tmp_path):
    harvester_bundle(SAMPLE, tmp_path / "case" / "sb-1")
    harvester_bundle(SAMPLES / "fault-duplicate-create", tmp_path / "case" / "sb-2")
    with open_bundles(tmp_path / "case") as bundles:
        vms = {label: sorted(vm.name for vm in e.of_kind(VM)) for label, e in bundles}
    assert vms == {"sb-1": ["other-vm", "testvm"], "sb-2": ["web-frontend"]}
    with pytest.raises(InputError, match="holds 2 bundles"), open_bundle(tmp_path / "case"):
        pass


def test_missing_metadata_is_named(tmp_path):
    root = harvester_bundle(SAMPLE, tmp_path / "sb")
    (root / "metadata.yaml").unlink()
    with open_bundle(root) as evidence:
        assert evidence.captured_at is None
        assert any("metadata.yaml absent" in note for note in evidence.missing)


def test_resources_kvtrace_does_not_use_are_not_opened(tmp_path):
    root = harvester_bundle(SAMPLE, tmp_path / "sb")
    secret = root / "yamls" / "namespaced" / "default" / "v1" / "secrets.yaml"
    secret.write_text("{ not yaml at all")
    shutil.copy(secret, secret.with_name("configmaps.yaml"))
    with open_bundle(root) as evidence:
        assert not any("secrets" in path or "configmaps" in path for path, _ in evidence.skipped)
