"""A bounded fuzz run over the bundle reader and the object-file parser: archives and trees a
stranger could send, built from the pieces real bundles have (manifest, object lists, logs of
every shape) mixed with hostile ones (escaping names, links, garbage, aliases). Whatever comes
in, kvtrace gives evidence or one clear error, writes nothing outside its temp space and leaves
none behind.

CI runs the "ci" Hypothesis profile (tests/conftest.py): derandomised, ``KVTRACE_FUZZ_EXAMPLES``
examples per property (default 300). By hand: ``HYPOTHESIS_PROFILE=dev KVTRACE_FUZZ_EXAMPLES=2000
python -m pytest -q tests/test_fuzz_bundles.py``.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kvtrace.errors import KvtraceError
from kvtrace.sources.bundle import open_bundle
from parsers.manifests import load_manifests
from tests.conftest import SAMPLES

EXAMPLES = int(os.environ.get("KVTRACE_FUZZ_EXAMPLES", "300"))
SAMPLE = SAMPLES / "always-restart"
REAL_FILES = sorted(p for p in SAMPLE.rglob("*") if p.is_file())

LEGIT_NAMES = st.sampled_from(
    [
        "manifest.json",
        "objects/pods.yaml",
        "objects/events.yaml",
        "objects/virtualmachines.yaml",
        "objects/virtualmachineinstances.yaml",
        "logs/kubevirt/virt-controller-a/virt-controller/current.log",
        "logs/kubevirt/virt-controller-a/virt-controller/previous.log.gz",
        "namespaces/kubevirt/pods/virt-controller-a/virt-controller/logs/current.log",
        "cluster-info/kubevirt/pods.json",
        "deep/" * 40 + "x.log",
        "weird \x1b]52;c;eA==\x07 name.log",
    ]
)
HOSTILE_NAMES = st.sampled_from(["../escape", "/abs/escape", "a/../../escape"])
# mostly names a reader takes, so that it reads on; now and then one that must be refused
NAMES = st.one_of(*[LEGIT_NAMES] * 7, HOSTILE_NAMES)
REAL = st.sampled_from(REAL_FILES).map(lambda p: p.read_bytes())
ALIASES = st.just(
    b"a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c]\n"
)
CONTENT = st.one_of(
    REAL,
    REAL.flatmap(lambda b: st.integers(0, len(b)).map(lambda n: b[:n])),  # cut anywhere
    st.binary(max_size=600),
    ALIASES,
    st.just(b'{"kind": "List", "items": [{"kind": "Pod"}, 1, null, "x"]}'),
    st.just(b"\x1f\x8b\x08\x00garbage-not-gzip"),
)
KINDS = st.sampled_from(["file", "file", "file", "symlink", "hardlink", "dir", "fifo"])
RANDOM_MEMBERS = st.lists(st.tuples(NAMES, KINDS, CONTENT), min_size=1, max_size=8)
REAL_MEMBER = st.sampled_from(REAL_FILES).flatmap(
    lambda p: st.tuples(
        st.just(str(p.relative_to(SAMPLE))),
        st.just("file"),
        st.one_of(
            st.just(p.read_bytes()),
            st.integers(0, p.stat().st_size).map(lambda n, p=p: p.read_bytes()[:n]),
        ),
    )
)
# the real sample, some of its files cut short or left out, plus a few strangers' members
SAMPLE_LIKE = st.tuples(
    st.lists(REAL_MEMBER, min_size=3, max_size=len(REAL_FILES)), RANDOM_MEMBERS
).map(lambda parts: parts[0] + parts[1][:3])
MEMBERS = st.one_of(RANDOM_MEMBERS, SAMPLE_LIKE)


def _tar(members: list[tuple[str, str, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, kind, content in members:
            info = tarfile.TarInfo(f"bundle/{name}" if not name.startswith("/") else name)
            if kind == "file":
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
                continue
            info.type = {
                "symlink": tarfile.SYMTYPE,
                "hardlink": tarfile.LNKTYPE,
                "dir": tarfile.DIRTYPE,
                "fifo": tarfile.FIFOTYPE,
            }[kind]
            info.linkname = "/etc/passwd" if kind != "hardlink" else "../../etc/hosts"
            tar.addfile(info)
    return out.getvalue()


def _contents(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@settings(
    max_examples=EXAMPLES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(MEMBERS)
def test_any_archive_gives_evidence_or_one_clear_error(members):
    with tempfile.TemporaryDirectory() as work:
        base = Path(work)
        scratch, outside = base / "tmp", base / "outside"
        scratch.mkdir()
        outside.mkdir()
        archive = outside / "bundle.tar.gz"
        archive.write_bytes(_tar(members))
        before = _contents(outside)
        previous = tempfile.tempdir
        tempfile.tempdir = str(scratch)
        try:
            with open_bundle(archive) as evidence:
                event(f"evidence: logs={bool(evidence.logs)} objects={bool(evidence.objects)}")
        except KvtraceError as refused:
            event(f"refused: {type(refused).__name__}")
        finally:
            tempfile.tempdir = previous
        assert _contents(outside) == before, "nothing written outside kvtrace's temp space"
        assert _contents(scratch) == [], "the temp space is removed"


@settings(max_examples=max(10, EXAMPLES // 6), suppress_health_check=[HealthCheck.too_slow])
@given(MEMBERS)
def test_check_all_on_any_archive_never_crashes(members):
    """End to end: ``check -A`` on the same archives ends with an exit code, never a traceback
    or an internal error."""
    with tempfile.TemporaryDirectory() as work:
        archive = Path(work) / "bundle.tar.gz"
        archive.write_bytes(_tar(members))
        code, _out, err = _run(["check", "-A", "--bundle", str(archive)])
        assert code in (0, 1, 2, 3), err
        assert "internal error" not in err and "Traceback" not in err


def _run(args: list[str]) -> tuple[int, str, str]:
    from contextlib import redirect_stderr, redirect_stdout

    from kvtrace.cli import run

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run(args)
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=EXAMPLES * 2, suppress_health_check=[HealthCheck.too_slow])
@given(CONTENT, st.sampled_from(["objects/pods.yaml", "objects/pods.json", "x.yaml"]))
def test_any_object_file_loads_or_reports_its_errors(content, path):
    loaded = load_manifests(content, path)
    assert all(isinstance(o, dict) for o in loaded.objects)
    assert loaded.error is None or str(loaded.error).startswith(path)


CLEAN_SAMPLE_FILES = st.lists(
    REAL_MEMBER, min_size=1, max_size=len(REAL_FILES), unique_by=lambda m: m[0]
)


@settings(
    max_examples=max(10, EXAMPLES // 6),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(CLEAN_SAMPLE_FILES)
def test_cut_or_missing_evidence_of_a_clean_history_is_never_a_violation(members):
    """The always-restart sample has no violation. Taking files away or cutting them anywhere
    removes evidence: it may make findings open questions, never violations (a false ✗ is the
    worst answer kvtrace can give)."""
    with tempfile.TemporaryDirectory() as work:
        archive = Path(work) / "bundle.tar.gz"
        archive.write_bytes(_tar(members))
        code, out, _ = _run(["check", "-A", "--bundle", str(archive)])
        assert code != 3 or " 0 violations" in out, out[-2500:]
