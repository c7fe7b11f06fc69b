"""The model per release: each rule applied only to evidence of a release whose code guarantees
it, and every verdict naming the release it judged against."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kvtrace.model.engine import Assessment
from kvtrace.model.releases import SPANS, applies, judge, span_of
from kvtrace.model.rules import RULES_BY_ID
from kvtrace.model.verdicts import EXPLAINED, UNVERIFIABLE, VIOLATION, Verdict
from kvtrace.model.version import VersionInfo, parse
from kvtrace.timeline.callsites import catalog
from kvtrace.timeline.catalog import CATALOG
from tests.conftest import SAMPLES
from tests.helpers import run_cli

# Call sites (v1.9.0 positions) added by later releases: older logs simply lack them.
NEWER_SITES = {
    "vm.go:1167": "v1.6.0",  # WaitAsReceiver start
    "vm.go:990": "v1.6.0",  # decentralized migration halts the VM
    "vm.go:1294": "v1.6.0",  # receiver set-up
    "vm.go:1269": "v1.4.0",  # manual recovery
    "vm.go:3245": "v0.59.0",  # the VM finalizer's delete of the VMI (removeVMFinalizer)
    "lifecycle.go:1175": "v1.8.0",  # the memory-overhead annotation
    "migration.go:630": "v0.56.0",  # the source node's migration failure
    "pool.go:1636": "v1.6.0",  # the pool's proactive update
    "migration.go:1170": "v1.3.0",  # a cancelled target's deletion, this text (KV-MG-06)
    "migration.go:1544": "v1.4.0",  # a timed-out target's deletion, this text (KV-MG-06)
}
READ_BY_RULES = ("decision", "api", "failure", "requeue", "backoff", "leader", "migration")
READ_BY_ENDINGS = ("node", "pool", "workload")


def _findings(capsys, sample: str, *flags: str) -> tuple[int, list[dict], list[str]]:
    code, out, _ = run_cli(capsys, "check", "-A", "--bundle", str(SAMPLES / sample), *flags)
    doc = json.loads(out)
    return code, [f for vm in doc["items"] for f in vm["findings"]], doc["status"]["notes"]


def test_every_span_names_a_rule_and_releases_of_the_catalog():
    releases = set(catalog().releases)
    for rule, span in SPANS.items():
        assert rule in RULES_BY_ID
        assert span.first in releases and (span.before is None or span.before in releases)
        assert span.differs


def test_texts_the_rules_read_are_printed_by_every_modelled_release():
    """The timeline matches a line by its text and file: a message the rules read must exist,
    same text and level in the same file, in every release from v0.53.0 (or from the release
    that added it), or older logs would lose the evidence the rules need."""
    known = catalog()
    for message in CATALOG:
        if message.category not in READ_BY_RULES + READ_BY_ENDINGS:
            continue
        for pos in message.pos_at("v1.9.0"):
            file, _, line = pos.rpartition(":")
            sites = known.lineage(file, int(line))
            if file == "stdlib.go":
                continue  # client-go's stdlib lines: no position a release moves
            assert sites, f"{message.id}: no call site at {pos} in v1.9.0"
            first = parse(NEWER_SITES.get(pos, "v0.53.0"))
            assert first is not None
            printed = {r for site in sites for r in site.positions}
            missing = [r for r in known.releases if (parse(r) or first) >= first]
            missing = [r for r in missing if r not in printed]
            assert not missing, f"{message.id} at {pos} is not printed by {missing}"


@pytest.mark.parametrize(
    ("release", "rs03", "rs06", "sv04"),
    [
        ("v0.53.0", False, True, False),
        ("v0.59.2", False, True, False),
        ("v1.0.0", False, True, True),
        ("v1.1.1", False, True, True),
        ("v1.2.0", True, False, True),
        ("v1.9.0", True, False, True),
    ],
)
def test_rules_apply_where_the_release_code_guarantees_them(release, rs03, rs06, sv04):
    releases = (parse(release),)
    assert applies("KV-RS-03", releases) is rs03
    assert applies("KV-RS-02", releases) is rs03
    assert applies("KV-RS-06", releases) is rs06
    assert applies("KV-SV-04", releases) is sv04
    assert applies("KV-BO-01", releases) and applies("KV-EX-01", releases)


def test_rerun_on_failure_before_v1_2_is_judged_by_that_release_code(capsys):
    """v1.9.0 stops a Succeeded RerunOnFailure VMI; v1.0.0 never did without a stop request,
    and restarted a missing VMI with no start request."""
    _, now, _ = _findings(capsys, "fault-rerun-after-succeeded", "-o", "json")
    assert {f["rule"] for f in now} >= {"KV-RS-03"}
    assert all(f["judgedAgainst"] == "v1.9.0" for f in now)
    _, then, _ = _findings(
        capsys, "fault-rerun-after-succeeded", "--kubevirt-version", "v1.0.0", "-o", "json"
    )
    assert not [f for f in then if f["rule"] in ("KV-RS-02", "KV-RS-03")]
    stops = [f for f in then if f["rule"] == "KV-RS-06"]
    assert stops and all(f["status"] == UNVERIFIABLE for f in stops)
    assert all("stopped a Succeeded VMI with no stop or restart request" in f["why"] for f in stops)
    assert all(f["judgedAgainst"] == "v1.0.0" for f in then)


def test_a_release_without_the_generation_annotation_is_not_held_to_it(capsys):
    _, findings, notes = _findings(
        capsys, "always-restart", "--kubevirt-version", "v0.59.0", "-o", "json"
    )
    assert not [f for f in findings if f["rule"] == "KV-SV-04"]
    assert any(n.startswith("KV-SV-04 not applied: it holds for v1.0.0 on") for n in notes)


def _verdict(rule: str, status: str) -> Verdict:
    return Verdict(rule, "error", status, "the controller did X", (1,))


def test_a_band_straddling_a_change_raises_no_violation():
    """Log lines fitting v0.59.2 and v1.0.0 alike cannot tell whether the annotation was due."""
    band = VersionInfo(None, "log lines", "v0.59.2–v1.0.0", ("v0.59.2", "v1.0.0"))
    [judged] = judge([_verdict("KV-SV-04", VIOLATION)], band)
    assert judged.status == UNVERIFIABLE and "holds for v1.0.0 on" in judged.why
    assert judged.release == "v0.59.2–v1.0.0"
    [kept] = judge([_verdict("KV-EX-01", VIOLATION)], band)
    assert kept.status == VIOLATION


def test_an_unknown_release_keeps_only_the_violations_every_release_shares():
    unknown = VersionInfo(None, "unknown")
    judged = judge([_verdict("KV-RS-03", VIOLATION), _verdict("KV-EX-01", VIOLATION)], unknown)
    assert [v.status for v in judged] == [UNVERIFIABLE, VIOLATION]
    assert "release is unknown" in judged[0].why and judged[1].release.startswith("v1.9.0")


def test_counted_explanations_of_rules_not_applied_are_taken_off():
    assessment = Assessment([], explained_by_rule=Counter({"KV-RS-06": 2, "KV-EX-01": 3}))
    assessment.judge(VersionInfo("v1.9.0", "flag"))
    assert assessment.counts()[EXPLAINED] == 3 and assessment.release == "v1.9.0"


def test_spans_hold_inclusively_from_first_and_exclusively_before():
    span = span_of("KV-RS-06")
    assert span.holds(parse("v0.53.0")) and span.holds(parse("v1.1.1"))
    assert not span.holds(parse("v1.2.0"))
