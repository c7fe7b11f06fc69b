"""The call-site catalog (tools/callsites.py → kvtrace/timeline/callsites.json) and the release
read from log lines.

The extractor is tested on Go text written here for the purpose (never KubeVirt's); the shipped
data is checked against figures counted from the v1.9.0 source by hand (the VM and VMI controller
files print 111 call sites at default verbosity, 69 of them at error level), against the
hand-written message catalog's positions, and against every line the simulator writes.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvsim.cluster import Cluster
from kvsim.histories import T0, legitimate
from kvsim.kernel import SECOND
from kvsim.releases import ReleaseGap
from kvtrace.timeline import catalog as messages
from kvtrace.timeline.callsites import VERB, Band, CallSite, catalog, release_band
from parsers import callsite as callsite_module
from parsers.callsite import CallSiteLine, call_site
from tests.conftest import ROOT, SAMPLES
from tests.helpers import run_cli

VM_VMI_FILES = {"vm.go", "lifecycle.go", "vmi.go", "datavolumes.go", "storage.go"}
VM_VMI_FILES |= {"volume-hotplug.go"}


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("callsites_tool", ROOT / "tools" / "callsites.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["callsites_tool"] = module
    spec.loader.exec_module(module)
    return module


GO = """package watch

import (
	"fmt"
	"kubevirt.io/client-go/log"
	"k8s.io/klog/v2"
)

const (
	greeting = "Hello"
	joined   = greeting + " world"
)

func (c *Controller) run(key string) {
	log.Log.Info("plain line")
	// log.Log.Info("commented out")
	logger := log.Log.Object(vm)
	logger.V(4).Infof("verbose %s", key)
	logger.Reason(err).
		Errorf("failed for %s: %v", key, err)
	log.Log.Object(vm).Infof("%s due to %s", joined, key)
	err := fmt.Errorf("not a log line %s", key)
	klog.Infof("attempting %v...", key)
	klog.V(4).Infof("quiet %v", key)
	golog.Printf("STARTING with " +
		"threads %d", 3)
}
"""


def test_the_extractor_reads_levels_verbosity_formats_and_the_line_of_the_paren():
    tool = _tool()
    consts = tool.constants([tool.blank_comments(GO)])
    sites, unplaced = tool.sites_in("pkg/virt-controller/watch/x.go", GO, consts)
    got = {(s.line, s.logger, s.level, s.verbosity, s.format) for s in sites}
    assert got == {
        (15, "kubevirt", "info", 2, "plain line"),
        (18, "kubevirt", "info", 4, "verbose %s"),
        (20, "kubevirt", "error", None, "failed for %s: %v"),  # the line of Errorf's paren
        (21, "kubevirt", "info", 2, "Hello world due to %s"),
        (23, "klog", "info", 0, "attempting %v..."),
        (24, "klog", "info", 4, "quiet %v"),
        (25, "stdlib", "info", 2, "STARTING with threads %d"),
    }
    assert unplaced == []


def test_the_extractor_reads_a_git_repository(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    tool = _tool()
    repo = tmp_path / "repo"
    path = repo / "pkg" / "virt-controller" / "watch"
    path.mkdir(parents=True)
    (path / "x.go").write_text(GO)
    for argv in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"], ["tag", "v1.9.0"]):
        tool.git(str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *argv)
    built = tool.build(str(repo), ["v1.9.0"], None)
    assert built["releases"] == ["v1.9.0"]
    assert {s["positions"]["v1.9.0"] for s in built["sites"]} == {15, 18, 20, 21, 23, 24, 25}


def test_the_data_has_every_release_and_the_v190_counts_of_the_source():
    known = catalog()
    assert known.releases[0] == "v0.53.0" and known.releases[-1] == "v1.9.0"
    assert {"v1.7.0", "v1.7.1", "v1.7.3", "v1.8.4", "v0.59.2"} <= set(known.releases)
    at_190 = [s for s in known.sites if "v1.9.0" in s.positions]
    vm_vmi = [
        s
        for s in at_190
        if s.file in VM_VMI_FILES and s.logger == "kubevirt" and s.default_printing
    ]
    assert len(vm_vmi) == 111
    assert sum(s.level == "error" for s in vm_vmi) == 69
    for release in known.releases:
        assert sum(release in s.positions for s in known.sites) > 300, release


@pytest.mark.parametrize("release", catalog().releases)
def test_every_default_printing_site_of_a_release_is_recognised(release):
    """Each default-printing call site of the release, printed as its example, is read back as
    that site of that release (the index misses none; its pattern matches what it prints)."""
    known = catalog()
    missing = []
    for site in known.sites:
        if release not in site.positions or not site.default_printing or site.logger == "stdlib":
            continue
        line = CallSiteLine(site.file, site.positions[release], site.level, site.example(), "json")
        if release not in (known.releases_of(line) or ()):
            missing.append(f"{site.file}:{line.line} {site.format!r}")
    assert not missing, f"{release}: {len(missing)} sites not recognised: {missing[:5]}"


def test_the_message_catalog_positions_are_call_sites_of_their_release():
    """Every position the hand-written catalog gives a message is, in the generated data, a call
    site of that release whose text the message's pattern reads."""
    known = catalog()
    band_release = {
        messages.V170: "v1.7.0",
        messages.V171: "v1.7.1",
        messages.V173: "v1.7.3",
        messages.V190: "v1.9.0",
    }
    wrong = []
    for message in messages.CATALOG:
        for band, places in message.positions.items():
            release = band_release[band]
            for place in places:
                file, _, line = place.partition(":")
                if file == "stdlib.go":  # the adapter's pos: the site is found by its text
                    if not any(
                        s.logger == "stdlib"
                        and release in s.positions
                        and _reads(message.pattern, s)
                        for s in known.sites
                    ):
                        wrong.append(f"{message.id} {release}: no stdlib call site prints it")
                    continue
                sites = [s for s, there in known.at.get((file, int(line)), ()) if release in there]
                if not any(_reads(message.pattern, site) for site in sites):
                    wrong.append(f"{message.id} {release} {place}: {[s.format for s in sites]}")
    assert not wrong, wrong


def _reads(pattern: re.Pattern[str], site: CallSite) -> bool:
    """The message's pattern reads the site's example; a format made only of verbs (``"%s"``)
    or printing a Go struct (``%#v``) has no example to read, only its position."""
    literal = VERB.sub("", site.format or "")
    if not literal.strip() or any(v in (site.format or "") for v in ("%#v", "%+v")):
        return True
    return pattern.search(site.example()) is not None


@pytest.mark.parametrize(
    "sample", sorted(p.name for p in SAMPLES.iterdir() if list(p.rglob("*.log")))
)
def test_every_line_of_a_sample_reads_as_its_release(sample):
    """v1.9.0's samples read as v1.9.0 only; an older release's sample as the releases of its
    minor line that print every one of its lines at the same place."""
    stated = (
        json.loads((SAMPLES / sample / "manifest.json").read_text())["kubevirtVersion"]
        if (SAMPLES / sample / "manifest.json").exists()
        else "v1.9.0"
    )
    lines = [
        found
        for path in sorted((SAMPLES / sample).rglob("*.log"))
        for raw in path.read_text().splitlines()
        if (found := call_site(raw)) is not None
    ]
    band = release_band(lines)
    assert band.lines > 20 and band.unknown == 0, band.example
    assert band.releases and stated in band.releases
    minor = stated.rsplit(".", 1)[0]
    assert {r.rsplit(".", 1)[0] for r in band.releases} == {minor}
    if stated == "v1.9.0":
        assert band.releases == {"v1.9.0"}


def _line_at(release: str, fmt: str) -> CallSiteLine:
    site = next(s for s in catalog().sites if s.format == fmt and release in s.positions)
    return CallSiteLine(site.file, site.positions[release], site.level, site.example(), "json")


def test_a_band_narrows_to_the_releases_every_line_fits():
    start = "Starting VM due to runStrategy: %s"
    band = release_band([_line_at("v1.8.0", start)])
    assert band.releases and "v1.8.0" in band.releases and "v1.9.0" not in band.releases
    assert catalog().span(band.releases).startswith("v1.7.3")  # the line did not move until v1.9


def test_lines_no_release_prints_are_counted_not_intersected():
    foreign = CallSiteLine("vm.go", 99999, "info", "Starting VM due to runStrategy: Always", "json")
    band = release_band([foreign, _line_at("v1.9.0", "Starting VM due to runStrategy: %s")])
    assert band.unknown == 1 and band.lines == 2 and band.releases == {"v1.9.0"}
    assert "vm.go:99999" in band.example
    assert release_band([]).releases is None and Band().lines == 0


def test_a_bare_log_gets_its_release_from_its_lines(capsys):
    logs = [
        a for p in sorted((SAMPLES / "always-restart").rglob("*.log")) for a in ("--log", str(p))
    ]
    code, out, _ = run_cli(capsys, "check", "-A", *logs, "-o", "json")
    spec = json.loads(out)["spec"]
    assert code in (0, 3) and spec["kubevirtReleasesFromLogs"] == ["v1.9.0"]
    assert spec["kubevirtVersionSource"].startswith("call sites of ")


def test_a_stated_release_the_lines_contradict_is_reported(capsys):
    args = ["check", "-A", "--bundle", str(SAMPLES / "always-restart"), "-o", "json"]
    _, out, _ = run_cli(capsys, *args, "--kubevirt-version", "v1.8.0")
    disagreements = json.loads(out)["spec"]["kubevirtVersionDisagreements"]
    assert disagreements == [
        "--kubevirt-version says v1.8.0, but the log lines' call sites fit v1.9.0 only"
    ]


def test_call_site_reads_json_and_klog_lines():
    kubelet = "2026-11-28T00:42:31.912345678Z "
    body = '{"level":"info","msg":"re-enqueuing VirtualMachine ns/a \\"x\\"","pos":"vm.go:348"}'
    assert call_site(kubelet + body) == CallSiteLine(
        "vm.go", 348, "info", 're-enqueuing VirtualMachine ns/a "x"', "json"
    )
    klog = "E1128 00:42:31.912345       1 leaderelection.go:448] error retrieving resource lock"
    found = call_site(kubelet + klog)
    assert found and (found.file, found.line, found.level) == ("leaderelection.go", 448, "error")
    assert call_site("plain text") is None and call_site('{"pos":"vm.go:x"}') is None


def test_sample_data_file_is_packaged():
    assert (Path(messages.__file__).parent / "callsites.json").is_file()


def test_a_release_outside_the_model_turns_violations_into_open_questions(capsys, tmp_path):
    """v1.9.0's rules were compared with v0.53.0–v1.9.x only: on evidence of a release before
    them, a fault the model would call a violation is an open question naming the release."""
    bundle = tmp_path / "bundle"
    shutil.copytree(SAMPLES / "fault-duplicate-create", bundle)
    code, out, _ = run_cli(capsys, "check", "-A", "--bundle", str(bundle), "-o", "json")
    assert code == 3
    for path in (bundle / "manifest.json", bundle / "objects" / "kubevirts.yaml"):
        path.write_text(path.read_text().replace("v1.9.0", "v0.49.0"))  # CR and manifest
    code, out, _ = run_cli(capsys, "check", "-A", "--bundle", str(bundle), "-o", "json")
    findings = [f for vm in json.loads(out)["items"] for f in vm["findings"]]
    assert code == 0 and not [f for f in findings if f["status"] == "violation"]
    ex01 = [f for f in findings if f["rule"] == "KV-EX-01"]
    assert ex01 and all(f["status"] == "unverifiable" for f in ex01)
    assert all(
        "KubeVirt v0.49.0 (KubeVirt kubevirt/kubevirt), a release the model" in f["why"]
        for f in ex01
    )


def test_a_modelled_older_release_keeps_the_violations_its_code_forbids(capsys):
    """v1.4.0's code guards a VMI create with expectations as v1.9.0's does: the duplicate
    create stays a violation, judged against v1.4.0."""
    bundle = str(SAMPLES / "fault-duplicate-create")
    code, out, _ = run_cli(
        capsys, "check", "-A", "--bundle", bundle, "--kubevirt-version", "v1.4.0", "-o", "json"
    )
    findings = [f for vm in json.loads(out)["items"] for f in vm["findings"]]
    ex01 = [f for f in findings if f["rule"] == "KV-EX-01" and f["status"] == "violation"]
    assert code == 3 and ex01 and all(f["judgedAgainst"] == "v1.4.0" for f in ex01)


def test_the_release_table_is_generated_from_the_catalog():
    import subprocess

    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "make_release_table.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _simulated_band(release: str) -> Band:
    capture = legitimate(3, release=release).capture()
    found = (call_site(line.body) for log, _ in capture.logs for line in log.lines)
    return release_band(line for line in found if line is not None)


@pytest.mark.parametrize("release", catalog().releases)
def test_the_release_of_a_simulated_log_is_read_back(release):
    """kvsim prints its lines at the chosen release's positions (kvsim.releases); the band read
    from them holds that release, and only releases of its minor line that print every one of
    those call sites at the same place."""
    band = _simulated_band(release)
    assert band.lines > 100 and band.unknown == 0
    assert band.releases and release in band.releases
    assert {r.rsplit(".", 1)[0] for r in band.releases} == {release.rsplit(".", 1)[0]}


def test_kvsim_refuses_what_it_cannot_write_as_the_release_did():
    """Before v1.6.0 verbosity 4 printed expectations through glog with other texts: kvsim says
    so rather than invent lines that release never printed."""
    history = legitimate(3, release="v1.5.3")
    for replica in history.cluster.replicas:
        replica.verbosity = 4
    with pytest.raises(ReleaseGap, match=r"v1\.5\.3: before v1\.6\.0 expectations"):
        history.capture()


@pytest.mark.parametrize("release, finalized", [("v0.58.2", False), ("v0.59.0", True)])
def test_before_v059_the_garbage_collector_deletes_a_deleted_vms_vmi(release, finalized):
    """v0.59.0 gave the VM its finalizer (vm.go:2264 at v0.59.0): from then the VM controller
    stops the VMI of a VM being deleted ("Dispatching delete event", a SuccessfulDelete Event on
    the VM); before, the VM went at once and the garbage collector deleted its VMI."""
    cluster = Cluster("deletion", T0, release=release)
    cluster.create_vm(T0 + 30 * SECOND, "vm-a")
    cluster.delete_vm(T0 + 120 * SECOND, "vm-a")
    capture = cluster.capture(T0 + 300 * SECOND)
    assert not capture.objects.get("VirtualMachine") and not capture.objects.get(
        "VirtualMachineInstance"
    )
    bodies = [line.body for log, _ in capture.logs for line in log.lines]
    dispatched = [b for b in bodies if "Dispatching delete event for vmi default/vm-a" in b]
    on_vm = [
        e
        for e in capture.objects["Event"]
        if e["reason"] == "SuccessfulDelete" and e["involvedObject"]["kind"] == "VirtualMachine"
    ]
    assert bool(dispatched) is finalized and bool(on_vm) is finalized


def test_a_simulated_older_release_writes_what_that_release_wrote():
    """v1.1.1 has no backup or clone-era controllers of v1.9.0 to start, writes no Lease but
    EndpointsLeases (kvsim: its Lease), and the KubeVirt CR names the release."""
    capture = legitimate(3, release="v1.1.1").capture()
    bodies = [line.body for log, _ in capture.logs for line in log.lines]
    assert not [b for b in bodies if "Starting backup controller" in b]
    assert [b for b in bodies if "Starting VirtualMachine controller." in b]
    [kubevirt] = capture.objects["KubeVirt"]
    assert kubevirt["status"]["observedKubeVirtVersion"] == "v1.1.1"
    assert capture.kubevirt_version == "v1.1.1"
    for release, written in (("v0.59.0", False), ("v1.0.0", True)):
        cluster = Cluster("generation", T0, release=release)
        cluster.create_vm(T0 + 30 * SECOND, "vm-a")
        [vmi] = cluster.capture(T0 + 120 * SECOND).objects["VirtualMachineInstance"]
        assert ("kubevirt.io/vm-generation" in vmi["metadata"]["annotations"]) is written


def test_2018_logfmt_lines_are_attributed_shown_and_never_judged(tmp_path, capsys):
    """KubeVirt before v0.6 logged logfmt with ``OfflineVirtualMachine`` as the VM's kind. Such
    lines (kvsim's, in that era's shape) reach the VM's timeline, the release is read as before
    v0.6, and no finding is a violation."""
    capture = legitimate(3).capture()
    log = next(log for log, _ in capture.logs if any('"uid"' in line.body for line in log.lines))
    path = tmp_path / "virt-controller-2018.log"
    path.write_text(log.logfmt_era())
    code, out, _ = run_cli(capsys, "check", "-A", "--log", str(path), "-o", "json")
    report = json.loads(out)
    assert code == 0 and report["items"], out[:400]
    assert report["spec"]["kubevirtVersion"] == "before v0.6"
    assert report["spec"]["kubevirtVersionSource"].endswith("log line(s) in the 2018 logfmt")
    findings = [f for vm in report["items"] for f in vm["findings"]]
    assert findings and not [f for f in findings if f["status"] == "violation"]
    vm = report["items"][0]
    code, out, _ = run_cli(
        capsys, "timeline", f"{vm['namespace']}/{vm['name']}", "--log", str(path), "-o", "json"
    )
    assert code == 0 and json.loads(out)["items"]


@pytest.mark.parametrize(
    "pos, level, msg, wanted",
    [
        # startVMI's Info-level start failures (vm.go:1304, 1319 at v1.9.0), outside the catalog
        (
            "vm.go:1304",
            "info",
            "Failed to apply device preferences again to VirtualMachineInstance: default/testvm",
            "failure",
        ),
        (
            "vm.go:1319",
            "info",
            "Failed to apply instancetype to VirtualMachineInstance: default/testvm",
            "failure",
        ),
        # the same text at a pos that does not print it is no call site's
        (
            "vm.go:1320",
            "info",
            "Failed to apply instancetype to VirtualMachineInstance: default/testvm",
            "log",
        ),
        ("vm.go:322", "info", "Stopping VirtualMachine controller.", "log"),
        ("vm.go:1826", "warning", "expected no more than 1 revision, found at least 2", "log"),
        ("vm.go:412", "error", "Failed to fetch vmi for namespace from cache.", "failure"),
    ],
)
def test_a_line_outside_the_message_catalog_is_a_failure_when_its_call_site_reports_one(
    pos, level, msg, wanted
):
    from kvtrace.timeline.log_rows import category
    from parsers.records import LogRecord

    record = LogRecord("controller.log", 1, "kubevirt_json", level, msg, None, pos=pos)
    assert messages.match(msg, pos) is None
    assert category(record, None) == wanted


def _by_patterns(raw: str) -> CallSiteLine | None:
    """The call site as the three patterns alone read a JSON line's fields (the reading before
    the ``find`` shortcut); other shapes as :func:`call_site` reads them."""
    pos = callsite_module._POS.search(raw)
    if pos is None:
        return call_site(raw)
    level, msg = callsite_module._LEVEL.search(raw), callsite_module._MSG.search(raw)
    if level is None or msg is None:
        return None
    return callsite_module._json_site_of(pos.group(1), level.group(1), msg.group(1))


_PIECES = st.sampled_from(['"', "\\", '\\"', "\\n", "x", ",", " ", ""]) | st.text(max_size=2)
_VALUES = {
    '"pos":"': st.sampled_from(["vm.go:348", "vm.go:3\\48", "", "vm.go:x", 'vm.go:"348']),
    '"level":"': st.sampled_from(["info", "Info", "", "in\\fo", "error", 'in"fo']),
    '"msg":"': st.lists(_PIECES, max_size=6).map("".join),
}
_FIELD_OF = {key: value.map(lambda v, k=key: f'{k}{v}",') for key, value in _VALUES.items()}
_FIELD = st.sampled_from(sorted(_VALUES)).flatmap(lambda key: _FIELD_OF[key])


_LINE = st.tuples(
    st.permutations([_FIELD_OF[key] for key in sorted(_VALUES)]).flatmap(lambda f: st.tuples(*f)),
    st.lists(_FIELD | _PIECES, max_size=4),
).map(lambda both: [*both[0], *both[1]])


@settings(max_examples=600, deadline=None)
@given(_LINE.flatmap(st.permutations))
def test_call_site_fields_are_the_patterns_fields(parts: list[str]) -> None:
    """The ``find`` shortcut reads the same pos, level and msg as the patterns, on any mix of
    the three keys (each at least once, some repeated), quotes and backslashes."""
    raw = "{" + "".join(parts) + "}"
    assert call_site(raw) == _by_patterns(raw), raw
