"""Log-store exports (Loki, OpenShift Logging, Elasticsearch/OpenSearch, Vector, OTLP) read as a
bundle's container logs: a kvsim history delivered through each envelope gives the timeline and
the leader history the bundle gives, but for the names of the sources (issue 17)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvtrace.sources.bundle import open_bundle, open_logs
from parsers.envelopes import (
    BAD_JSON,
    BULK_ACTION,
    ECS,
    ES_SEARCH,
    LOKI_JSONL,
    LOKI_TEXT,
    NO_LINE,
    OPENSHIFT,
    OTLP,
    read_document,
    read_lines,
    sniff_envelope,
)
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.logstore_envelopes import (
    ENVELOPES,
    container_lines,
    loki_default,
    loki_jsonl,
    viaq_record,
)

# kvsim histories: two replicas (always-restart), and a failover whose replicas restarted, so
# their previous instances' logs are in the bundle too (leader-failover-gap)
HISTORIES = {"always-restart": "testvm", "leader-failover-gap": "web-1"}


def _objects_only(sample: str, dest: Path) -> Path:
    """The bundle without its logs (and a manifest that lists none), for the export to carry."""
    shutil.copytree(SAMPLES / sample, dest, ignore=shutil.ignore_patterns("logs"))
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["logs"] = []
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return dest


def _export(sample: str, envelope: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(ENVELOPES[envelope](container_lines(SAMPLES / sample)), encoding="utf-8")
    return dest


def _rows(table: str) -> list[str]:
    """The timeline's rows and summary, blanks collapsed (column widths follow the source
    names)."""
    return [" ".join(line.split()) for line in table.splitlines()]


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
@pytest.mark.parametrize("sample", sorted(HISTORIES))
def test_timeline_through_an_export_equals_the_bundle(capsys, tmp_path, sample, envelope):
    vm = f"default/{HISTORIES[sample]}"
    code, expected, _ = run_cli(capsys, "timeline", vm, "--bundle", str(SAMPLES / sample))
    objects = _objects_only(sample, tmp_path / "objects")
    export = _export(sample, envelope, tmp_path / envelope)
    got = run_cli(capsys, "timeline", vm, "--bundle", str(objects), "--log", str(export))
    assert got[0] == code and got[2] == ""
    assert _rows(got[1]) == _rows(expected)


def _epochs(history: str) -> list[str]:
    """Leader history without its evidence column (the file:line of each line)."""
    kept = []
    for line in history.splitlines():
        found = re.match(r"(#\d+)\s+.*?:\d+\s{2,}(.*)$", line)
        kept.append(" ".join(found.groups()) if found else " ".join(line.split()))
    return kept


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_leader_history_through_an_export_equals_the_bundle(capsys, tmp_path, envelope):
    sample = "leader-failover-gap"
    expected = run_cli(capsys, "leader", "history", "--bundle", str(SAMPLES / sample))
    objects = _objects_only(sample, tmp_path / "objects")
    export = _export(sample, envelope, tmp_path / envelope)
    got = run_cli(capsys, "leader", "history", "--bundle", str(objects), "--log", str(export))
    assert got[0] == expected[0] and _epochs(got[1]) == _epochs(expected[1])


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_export_timeline_matches_golden(capsys, tmp_path, monkeypatch, golden, envelope):
    """The timeline of always-restart's logs alone, from each export (-o wide: the evidence
    column names the export and the pod's stream in it)."""
    monkeypatch.chdir(tmp_path)
    _export("always-restart", envelope, tmp_path / envelope)
    code, out, err = run_cli(capsys, "timeline", "default/testvm", "--log", envelope, "-o", "wide")
    assert code == 0 and err == ""
    golden.check(f"logstores/{envelope}.txt", out)


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_each_pod_container_and_restart_is_one_stream(tmp_path, envelope):
    export = _export("leader-failover-gap", envelope, tmp_path / envelope)
    with open_logs([str(export)]) as evidence:
        streams = [(s.info.pod, s.info.container, s.info.instance) for s in evidence.logs]
        assert evidence.skipped == []
    pods = {pod for pod, _, _ in streams}
    assert len(pods) == 2 and all(pod.startswith("virt-controller-") for pod in pods)
    assert sorted(i for _, _, i in streams) == ["current", "current", "previous", "previous"]


def test_an_export_in_a_bundle_directory_is_sniffed_by_content(tmp_path):
    export = _export("always-restart", "loki.jsonl", tmp_path / "case" / "query-result.txt")
    with open_bundle(export.parent) as evidence:
        assert evidence.layout == "plain"
        assert sorted(s.info.pod for s in evidence.logs) == sorted(
            {line.pod for line in container_lines(SAMPLES / "always-restart")}
        )


def test_a_gzipped_export_is_read_too(tmp_path):
    text = loki_jsonl(container_lines(SAMPLES / "always-restart"))
    packed = tmp_path / "loki.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    with open_logs([str(packed)]) as evidence:
        assert len(evidence.logs) == 2 and all(s.prefixed for s in evidence.logs)


def test_bad_records_are_counted_by_reason_and_unnamed_lines_reported(tmp_path):
    lines = container_lines(SAMPLES / "always-restart")[:3]
    unnamed = {**viaq_record(lines[2])}
    unnamed["kubernetes"] = {"namespace_name": "kubevirt"}
    records = [
        json.dumps(viaq_record(lines[0])),
        '{"kubernetes": {"pod_name": "virt-controller-x"}, "@timestamp": "2026-11-28T00:40:00Z"',
        json.dumps({**viaq_record(lines[1]), "message": ""}),
        json.dumps(unnamed),
        "[1, 2]",
    ]
    export = tmp_path / "viaq.ndjson"
    export.write_text("\n".join(records) + "\n")
    with open_logs([str(export)]) as evidence:
        skipped = [reason for _, reason in evidence.skipped]
        pods = sorted(str(s.info.pod) for s in evidence.logs)
        missing = evidence.missing
    assert pods == sorted([lines[0].pod, "None"])
    assert f"1 record(s) of this log-store export skipped: {BAD_JSON}" in skipped
    assert f"1 record(s) of this log-store export skipped: {NO_LINE}" in skipped
    assert any("not a log-store record" in reason for reason in skipped)
    assert any("1 line(s) whose envelope names no pod" in note for note in missing)


def test_newest_first_export_is_read_in_time_order(tmp_path):
    export = _export("always-restart", "loki.jsonl", tmp_path / "loki.jsonl")
    first_in_file = json.loads(export.read_text().splitlines()[0])["timestamp"]
    with open_logs([str(export)]) as evidence:
        for stream in evidence.logs:
            with stream.open() as handle:
                stamps = [line.split(b" ", 1)[0] for line in handle]
            assert stamps == sorted(stamps, key=lambda s: s.decode().rstrip("Z").ljust(30, "0"))
    assert first_in_file > container_lines(SAMPLES / "always-restart")[0].time


@pytest.mark.parametrize(
    ("envelope", "shape"),
    [
        ("loki.jsonl", LOKI_JSONL),
        ("loki-default.txt", LOKI_TEXT),
        ("viaq.ndjson", OPENSHIFT),
        ("vector.ndjson", OPENSHIFT),
        ("es-hits-ecs.ndjson", ES_SEARCH),
        ("es-bulk-ecs.ndjson", ES_SEARCH),
        ("es-search-viaq.json", ES_SEARCH),
        ("otlp.ndjson", OTLP),
    ],
)
def test_sniffed_shapes(tmp_path, envelope, shape):
    export = _export("always-restart", envelope, tmp_path / envelope)
    assert sniff_envelope(export.read_bytes()[:65536]) == shape


def test_container_logs_and_manifests_are_no_envelope():
    log = next((SAMPLES / "always-restart" / "logs").rglob("current.log"))
    assert sniff_envelope(log.read_bytes()[:65536]) is None
    body = log.read_text().splitlines()[0].split(" ", 1)[1]
    assert sniff_envelope(body.encode()) is None
    objects = (SAMPLES / "always-restart" / "objects" / "pods.yaml").read_bytes()
    assert sniff_envelope(objects) is None
    assert sniff_envelope(b'{\n  "apiVersion": "v1",\n  "hits": 3\n}\n') is None


def test_ecs_record_gives_its_pod_and_a_bulk_body_counts_its_action_lines():
    lines = container_lines(SAMPLES / "always-restart")[:2]
    skips: Counter[str] = Counter()
    text = ENVELOPES["es-bulk-ecs.ndjson"](lines)
    found = list(read_lines(text.encode().splitlines(), skips))
    assert [(e.pod, e.container, e.namespace, e.shape) for e in found] == [
        (line.pod, line.container, line.namespace, ECS) for line in lines
    ]
    assert skips == Counter({BULK_ACTION: 2})


@given(st.lists(st.binary(max_size=200), max_size=20))
def test_envelope_parsing_never_raises_on_any_bytes(lines):
    """Any bytes: no exception, and every line handed on has text (never an empty record)."""
    for found in (read_lines(lines, Counter()), read_document(b"\n".join(lines), Counter())):
        assert all(entry.text.strip() for entry in found)


@given(st.text(max_size=80))
def test_a_record_without_envelope_keys_is_counted_not_read(text):
    skips: Counter[str] = Counter()
    line = json.dumps({"msg": text, "level": "info"}).encode()
    assert list(read_lines([line], skips)) == [] and sum(skips.values()) == 1


def test_an_envelope_without_restarts_or_container_ids_says_instances_are_merged(tmp_path):
    lines = container_lines(SAMPLES / "leader-failover-gap")
    export = tmp_path / "labels-only.jsonl"
    export.write_text(
        "".join(
            json.dumps({"labels": {"pod": line.pod}, "line": line.text, "timestamp": line.time})
            + "\n"
            for line in lines
        )
    )
    with open_logs([str(export)]) as evidence:
        assert [s.info.instance for s in evidence.logs] == [None, None]
        assert any(
            "2 container(s) is one stream across its restarts" in m for m in evidence.missing
        )


def test_logcli_header_saved_with_the_lines_gives_the_common_labels(tmp_path):
    """``logcli … 2>&1 > file``: the URL and Common labels come first; the lines leave the
    common labels out, so the header's namespace and container are theirs."""
    export = tmp_path / "logcli.txt"
    export.write_text(loki_default(container_lines(SAMPLES / "always-restart"), header=True))
    assert export.read_text().startswith("http://") and sniff_envelope(export.read_bytes())
    with open_logs([str(export)]) as evidence:
        assert {(s.info.namespace, s.info.container) for s in evidence.logs} == {
            ("kubevirt", "virt-controller")
        }
        assert evidence.skipped == []


@pytest.mark.parametrize("pretty", [True, False])
def test_a_json_array_of_hits_is_read(tmp_path, pretty):
    """Hits saved as one JSON array (a script's ``json.dump(response["hits"]["hits"])``)."""
    lines = container_lines(SAMPLES / "always-restart")
    hits = [{"_index": "infra-000001", "_source": viaq_record(line)} for line in lines]
    export = tmp_path / "hits.json"
    export.write_text(json.dumps(hits, indent=2 if pretty else None))
    with open_logs([str(export)]) as evidence:
        assert len(evidence.logs) == 2 and evidence.skipped == []
        assert sum(1 for s in evidence.logs for _ in s.open()) == len(lines)


def test_an_export_larger_than_the_free_temp_space_is_refused(tmp_path, monkeypatch):
    export = _export("always-restart", "loki.jsonl", tmp_path / "loki.jsonl")
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        "kvtrace.sources.logstores.shutil.disk_usage",
        lambda _: usage._replace(free=export.stat().st_size),
    )
    with open_logs([str(export)]) as evidence:
        assert evidence.logs == []
        ((_, reason),) = evidence.skipped
    assert "bytes free in the temp directory" in reason and "TMPDIR" in reason
