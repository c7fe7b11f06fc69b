"""Building the scope of every VM goes through one index per Evidence: the same scopes as a scan
of every object for each VM, and no kind scanned once per VM (issue 16: `find_vm` made
`check -A --bundle` quadratic in the number of VMs)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvtrace.evidence import VM, Evidence, KubeObject
from kvtrace.sources.bundle import open_bundle
from kvtrace.timeline import vmscope
from kvtrace.timeline.vmscope import INDEXED_KINDS, build_scope
from tests.conftest import ROOT, SAMPLES

GENERATOR = ROOT / "bench" / "generate_log.py"


@pytest.fixture(scope="module")
def many_vms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evidence]:
    """A kvsim history of 200 VMs (four shards), faults included, read as a bundle."""
    out = tmp_path_factory.mktemp("scope-index") / "bundle"
    args = ("--size", "1M", "--vms", "200", "--fault-every", "20", "--seed", "16")
    subprocess.run([sys.executable, str(GENERATOR), *args, "--out", str(out)], check=True)
    with open_bundle(out) as evidence:
        yield evidence


class _EveryObject:
    """The brute-force reference: every object of the kind is a candidate, in evidence order."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence

    def candidates(self, kind: str, *keys: tuple[str, ...]) -> list[KubeObject]:
        return list(self.evidence.of_kind(kind))


def _keys(evidence: Evidence) -> list[tuple[str, str]]:
    return sorted({(o.namespace or "default", o.name) for o in evidence.of_kind(VM)})


def _scopes(evidence: Evidence) -> list[vmscope.VMScope]:
    return [build_scope(evidence, *key) for key in _keys(evidence)]


def _brute_force(evidence: Evidence, monkeypatch: pytest.MonkeyPatch) -> list[vmscope.VMScope]:
    with monkeypatch.context() as patched:
        patched.setattr(vmscope, "_index", _EveryObject)
        return _scopes(evidence)


def test_indexed_scopes_equal_a_scan_of_every_object(many_vms, monkeypatch):
    keys = _keys(many_vms)
    assert len(keys) >= 150
    indexed = _scopes(many_vms)
    assert indexed == _brute_force(many_vms, monkeypatch)
    assert sum(len(s.vmis) + len(s.pods) + len(s.events) for s in indexed) > len(keys)


def test_no_kind_is_scanned_once_per_vm(many_vms, monkeypatch):
    many_vms.cache.clear()
    reads: Counter[str] = Counter()
    of_kind = Evidence.of_kind

    def counted(self: Evidence, kind: str) -> list[KubeObject]:
        reads[kind] += 1
        return of_kind(self, kind)

    monkeypatch.setattr(Evidence, "of_kind", counted)
    keys = _keys(many_vms)
    reads.clear()
    for key in keys:
        build_scope(many_vms, *key)
    assert {kind: reads[kind] for kind in INDEXED_KINDS} == dict.fromkeys(INDEXED_KINDS, 1)


@pytest.mark.parametrize(
    "sample", sorted(p.name for p in SAMPLES.iterdir() if (p / "README.md").exists())
)
def test_samples_scopes_equal_a_scan_of_every_object(sample, monkeypatch):
    with open_bundle(Path(SAMPLES / sample)) as evidence:
        assert _scopes(evidence) == _brute_force(evidence, monkeypatch)
