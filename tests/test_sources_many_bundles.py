"""Several bundles in one directory or archive: every one found, each read on its own, and a
command that reads one bundle never silently takes the first (issue 17)."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from kvtrace.check.report import Selection
from kvtrace.check.run import run_check
from kvtrace.errors import InputError
from kvtrace.evidence import VM
from kvtrace.sources.bundle import bundle_roots, open_bundle, open_bundles
from kvtrace.sources.tarball import open_tree
from tests.conftest import SAMPLES
from tests.helpers import run_cli

TWO = ("always-restart", "fault-duplicate-create")  # kvsim bundles; only the second is faulty
MUST_GATHER = "must-gather-always-restart"


def _case(tmp_path: Path, names: tuple[str, ...] = TWO) -> Path:
    case = tmp_path / "case"
    for name in names:
        shutil.copytree(SAMPLES / name, case / name)
    return case


def _tar(source: Path, archive: Path) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        for child in sorted(source.iterdir()):
            tar.add(child, arcname=child.name)
    return archive


def _vm_names(evidence) -> list[str]:
    return sorted(vm.name for vm in evidence.of_kind(VM))


def _sample_dirs() -> list[str]:
    return sorted(
        p.name
        for p in SAMPLES.iterdir()
        if (p / "manifest.json").is_file() or p.name.startswith("must-gather")
    )


def test_every_sample_is_a_bundle_root_and_the_must_gather_root_is_its_wrapper():
    with open_tree(SAMPLES) as tree:
        roots = bundle_roots(tree)
    (wrapper,) = (SAMPLES / MUST_GATHER).glob("must-gather.local.*")
    expected = [f"{MUST_GATHER}/{wrapper.name}" if n == MUST_GATHER else n for n in _sample_dirs()]
    assert roots == sorted(expected) and len(roots) > 2


def test_a_single_bundle_has_one_root(tmp_path):
    with open_tree(SAMPLES / "always-restart") as tree:
        assert bundle_roots(tree) == [""]
    with open_tree(_case(tmp_path, ("always-restart",))) as tree:
        assert bundle_roots(tree) == ["always-restart"]


def test_two_must_gather_runs_side_by_side_are_two_bundles(tmp_path):
    case = tmp_path / "mg"
    for run in ("first", "second"):
        shutil.copytree(SAMPLES / MUST_GATHER, case / run)
    with open_tree(case) as tree:
        roots = bundle_roots(tree)
    assert [r.split("/")[0] for r in roots] == ["first", "second"]
    assert all("/must-gather.local." in r for r in roots)


@pytest.mark.parametrize("packed", [False, True])
def test_open_bundles_yields_each_bundle_with_its_own_vms(tmp_path, packed):
    case = _case(tmp_path)
    path = _tar(case, tmp_path / "two.tar.gz") if packed else case
    with open_bundles(path) as bundles:
        seen = [(label, evidence.origin, _vm_names(evidence)) for label, evidence in bundles]
    joiner = ":" if packed else "/"
    assert seen == [
        ("always-restart", f"{path}{joiner}always-restart", ["other-vm", "testvm"]),
        ("fault-duplicate-create", f"{path}{joiner}fault-duplicate-create", ["web-frontend"]),
    ]


def test_a_tar_of_two_bundles_finds_the_violation_of_the_second(tmp_path):
    """Before: the archive was read as its first bundle, so check -A gave 0 violations."""
    archive = _tar(_case(tmp_path), tmp_path / "two.tar.gz")
    found = {}
    with open_bundles(archive) as bundles:
        for label, evidence in bundles:
            report = run_check(evidence, Selection(None))
            found[label] = sorted({v.rule for _, v in report.violations()})
    assert found["always-restart"] == []
    assert "KV-EX-01" in found["fault-duplicate-create"]


def test_a_directory_that_is_one_bundle_is_labelled_dot():
    with open_bundles(SAMPLES / "always-restart") as bundles:
        ((label, evidence),) = list(bundles)
    assert label == "." and evidence.layout == "kvtrace"


def test_plain_files_are_one_plain_bundle(tmp_path):
    (tmp_path / "virt-controller.log").write_bytes(
        (SAMPLES / "always-restart").joinpath(*_any_log()).read_bytes()
    )
    with open_bundles(tmp_path) as bundles:
        ((label, evidence),) = list(bundles)
    assert label == "." and evidence.layout == "plain" and len(evidence.logs) == 1


def _any_log() -> tuple[str, ...]:
    log = next((SAMPLES / "always-restart" / "logs").rglob("current.log"))
    return log.relative_to(SAMPLES / "always-restart").parts


def test_files_outside_every_bundle_are_reported_once_not_read(tmp_path):
    case = _case(tmp_path)
    (case / "notes.txt").write_text("the customer says the VM restarted twice\n")
    with open_bundles(case) as bundles:
        read = [
            (dict(e.skipped).get("notes.txt"), [log.info.source_id for log in e.logs])
            for _, e in bundles
        ]
    skipped = [reason for reason, _ in read]
    assert not any(source.endswith("notes.txt") for _, sources in read for source in sources)
    assert skipped[0] is not None and "outside the 2 bundles" in skipped[0]
    assert skipped[1] is None


def test_open_bundle_without_a_vm_names_the_bundles_and_says_check_reads_them(tmp_path):
    case = _case(tmp_path)
    with pytest.raises(InputError) as caught, open_bundle(case):
        pass
    message = str(caught.value)
    assert "holds 2 bundles (always-restart, fault-duplicate-create)" in message
    assert f"--bundle {case}/always-restart" in message and "check reads them all" in message


def test_open_bundle_with_a_vm_reads_the_one_bundle_holding_it(tmp_path):
    with open_bundle(_case(tmp_path), only=("default", "web-frontend")) as evidence:
        assert _vm_names(evidence) == ["web-frontend"]
        assert evidence.origin.endswith("case/fault-duplicate-create")


def test_a_vm_in_two_bundles_is_an_error_naming_both(tmp_path):
    case = _case(tmp_path, ("always-restart",))
    shutil.copytree(SAMPLES / "always-restart", case / "again")
    with pytest.raises(InputError) as caught, open_bundle(case, only=("default", "testvm")):
        pass
    assert "is in 2 bundles (again, always-restart)" in str(caught.value)
    assert f"--bundle {case}/again" in str(caught.value)


def test_a_vm_in_no_bundle_is_an_error_naming_them(tmp_path):
    case = _case(tmp_path)
    missing = "no VirtualMachine, VMI or launcher pod default/nope"
    with pytest.raises(InputError, match=missing), open_bundle(case, only=("default", "nope")):
        pass


def test_cli_timeline_from_a_case_directory_equals_the_bundle_itself(capsys, tmp_path):
    case = _case(tmp_path)
    code, whole, err = run_cli(capsys, "timeline", "default/web-frontend", "--bundle", str(case))
    assert err == ""
    alone = run_cli(capsys, "timeline", "default/web-frontend", "--bundle", str(case / TWO[1]))
    assert (code, whole) == alone[:2] and "web-frontend" in whole


def test_cli_timeline_of_a_vm_in_two_bundles_says_which_to_pass(capsys, tmp_path):
    case = _case(tmp_path, ("always-restart",))
    shutil.copytree(SAMPLES / "always-restart", case / "again")
    code, out, err = run_cli(capsys, "timeline", "default/testvm", "--bundle", str(case))
    assert code == 1 and out == ""
    assert "is in 2 bundles" in err and f"--bundle {case}/again" in err
