"""Prefixes before the body: kubelet, CRI, grep paths, kubectl, stern, ANSI."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from parsers.logstream import LogParser
from parsers.records import LineTally, LogRecord, SourceInfo

UTC = timezone.utc
POD = "virt-controller-7c9d5b6f4-h2xqm"
CID = "7ac33af4d1fd184679f368d174b034525392be9800cf2b2214d1c7360bb4eea6"
BODY = (
    '{"component":"virt-controller","level":"info","msg":"m","timestamp":"2025-03-07T09:14:05.4'
    '12208Z"}'
)


def run(
    lines: list[str], source: SourceInfo | None = None, **options: object
) -> tuple[list[LogRecord], LineTally]:
    parser = LogParser(source or SourceInfo("fixture.log"), **options)  # type: ignore[arg-type]
    records = list(parser.parse(line.encode() + b"\n" for line in lines))
    assert parser.tally.lines() == len(lines)
    assert parser.internal_errors == []
    return records, parser.tally


@pytest.mark.parametrize(
    ("prefix", "captured"),
    [
        ("2025-03-07T09:14:05.412530871Z", datetime(2025, 3, 7, 9, 14, 5, 412530, tzinfo=UTC)),
        ("2025-03-07T09:14:05.4125Z", datetime(2025, 3, 7, 9, 14, 5, 412500, tzinfo=UTC)),
        ("2025-03-07T11:14:05.412530871+02:00", datetime(2025, 3, 7, 9, 14, 5, 412530, tzinfo=UTC)),
    ],
)
def test_kubelet_prefix_is_the_capture_time(prefix: str, captured: datetime) -> None:
    records, tally = run([f"{prefix} {BODY}"])
    assert tally == {"record": 1}
    record = records[0]
    assert record.prefixes == ("kubelet",)
    assert record.captured_at is not None and record.captured_at.at == captured
    assert record.time is not None
    assert record.time.at == datetime(2025, 3, 7, 9, 14, 5, 412208, tzinfo=UTC)
    assert record.raw == f"{prefix} {BODY}"
    assert record.flags == ()


def test_capture_far_from_the_event_is_flagged() -> None:
    records, _ = run([f"2025-03-07T09:15:05.000000001Z {BODY}"])
    assert records[0].flags == ("capture_skew",)


def test_prefixed_empty_line_is_blank_not_annotation() -> None:
    records, tally = run(["2025-03-07T09:14:05.412530871Z ", "2025-03-07T09:14:05.412530871Z"])
    assert records == []
    assert tally == {"blank": 1, "annotation": 1}


def test_mid_line_kubelet_timestamp_is_repaired() -> None:
    line = (
        '2025-03-07T09:14:05.412530871Z {"level":"error","msg":"very long '
        'text"2025-03-07T09:14:05.412999999Z '
        ',"timestamp":"2025-03-07T09:14:05.412208Z"}'
    )
    records, tally = run([line])
    assert tally == {"record": 1}
    assert records[0].repairs == ("mid_line_timestamp",)
    assert records[0].msg == "very long text"


def test_cri_full_line() -> None:
    records, tally = run([f"2025-03-07T09:14:05.412530871Z stderr F {BODY}"])
    assert tally == {"record": 1}
    assert records[0].prefixes == ("cri",)
    assert records[0].captured_at is not None


def test_cri_stdout_line_is_kept_and_flagged() -> None:
    records, tally = run([f"2025-03-07T09:14:05.412530871Z stdout F {BODY}"])
    assert tally == {"record": 1}
    assert records[0].flags == ("stdout",)


def test_cri_partial_parts_join_per_stream() -> None:
    records, tally = run([
        '2025-03-07T09:14:07.9182Z stderr P '
        '{"component":"virt-controller","level":"error","msg":"unable to patch vmi to update node '
        'affinity: ',
        "2025-03-07T09:14:07.91825Z stdout F plain stdout text",
        '2025-03-07T09:14:07.918244Z stderr F …end of the '
        'text","name":"pg-main","pos":"vm.go:794","timestamp":"2025-03-07T09:14:07.917931Z"}',
    ])  # fmt: skip
    assert tally == {"record": 1, "continuation": 1, "text_unknown": 1}
    record = records[0]
    assert record.line_no == 1
    assert record.msg == "unable to patch vmi to update node affinity: …end of the text"
    assert record.captured_at is not None
    assert record.captured_at.at == datetime(2025, 3, 7, 9, 14, 7, 918200, tzinfo=UTC)
    assert record.raw.count("\n") == 1


def test_cri_partial_without_final_part_is_truncated_at_close() -> None:
    records, tally = run(['2025-03-07T09:14:07.9182Z stderr P {"level":"error","msg":"cut'])
    assert tally == {"json_truncated": 1}
    assert records[0].flags == ("cri_unterminated", "no_time", "partial")
    assert records[0].msg == "cut"


GREP_CASES = [
    (f"/var/log/containers/{POD}_kubevirt_virt-controller-{CID}.log:2025-03-07T09:14:05.412530871Z"
     f" stderr F {BODY}",
     ("path", "cri"), POD, "virt-controller", "kubevirt", None),
    (f"{POD}_kubevirt_virt-controller-{CID}.log:2025-03-07T09:14:05.412530871Z stderr F {BODY}",
     ("path", "cri"), POD, "virt-controller", "kubevirt", None),
    (f"/var/log/pods/kubevirt_{POD}_02e7bf08-8e0b-4331-babe-517634d9abae/virt-controller/2.log:202"
     f"5-03-07T09:14:05.412530871Z stderr F {BODY}",
     ("path", "cri"), POD, "virt-controller", "kubevirt", None),
    (f"./kubevirt.{POD}.virt-controller.20250307.log.gz:{BODY}", ("path",), None, None, None, None),
    (f"namespaces/kubevirt/pods/{POD}/virt-controller/virt-controller/logs/current.log:1187:2025-0"
     f"3-07T09:14:05.412530871Z {BODY}",
     ("path", "kubelet"), POD, "virt-controller", "kubevirt", 1187),
    (f"namespaces/shop-prod/core/pods/virt-launcher-pg-main-x7k2d/compute-current.log:{BODY}",
     ("path",), "virt-launcher-pg-main-x7k2d", "compute", "shop-prod", None),
]  # fmt: skip


@pytest.mark.parametrize(("line", "prefixes", "pod", "container", "namespace", "hint"), GREP_CASES)
def test_grep_path_prefix_names_the_pod(
    line: str,
    prefixes: tuple[str, ...],
    pod: str | None,
    container: str | None,
    namespace: str | None,
    hint: int | None,
) -> None:
    records, tally = run([line])
    assert tally == {"record": 1}
    record = records[0]
    assert record.prefixes == prefixes
    assert (record.pod, record.container, record.pod_namespace) == (pod, container, namespace)
    assert record.line_hint == hint
    assert record.msg == "m"


def test_grep_hit_list_mixes_pods_and_keeps_partials_apart() -> None:
    other = "virt-controller-7c9d5b6f4-wp8rz"
    records, tally = run([
        f"/var/log/containers/{POD}_kubevirt_virt-controller-{CID}.log:2025-03-07T09:14:05Z "
        f"stderr P {{\"level\":\"info\",",
        f"/var/log/containers/{other}_kubevirt_virt-controller-{CID}.log:2025-03-07T09:14:05Z "
        f"stderr F {BODY}",
        f'/var/log/containers/{POD}_kubevirt_virt-controller-{CID}.log:2025-03-07T09:14:05Z '
        f'stderr F "msg":"joined","timestamp":"2025-03-07T09:14:05.000001Z"}}',
    ])  # fmt: skip
    assert tally == {"record": 2, "continuation": 1}
    assert sorted((r.pod, r.msg) for r in records) == [(POD, "joined"), (other, "m")]


def test_source_identity_is_the_default_pod() -> None:
    source = SourceInfo("x/current.log", POD, "kubevirt", "virt-controller", "current")
    records, _ = run([BODY], source)
    assert (records[0].pod, records[0].container, records[0].pod_namespace) == (
        POD, "virt-controller", "kubevirt",
    )  # fmt: skip


def test_kubectl_logs_prefix() -> None:
    records, tally = run([f"[pod/{POD}/virt-controller] {BODY}"])
    assert tally == {"record": 1}
    assert records[0].prefixes == ("kubectl_prefix",)
    assert (records[0].pod, records[0].container) == (POD, "virt-controller")


@pytest.mark.parametrize(
    ("line", "namespace", "captured"),
    [
        (f"{POD} virt-controller {BODY}", None, None),
        (f"kubevirt {POD} virt-controller {BODY}", "kubevirt", None),
        (f"{POD} virt-controller 2025-03-07T09:14:05.412530871Z {BODY}", None,
         datetime(2025, 3, 7, 9, 14, 5, 412530, tzinfo=UTC)),
    ],
)  # fmt: skip
def test_stern_default_prefix(line: str, namespace: str | None, captured: datetime | None) -> None:
    records, tally = run([line])
    assert tally == {"record": 1}
    record = records[0]
    assert record.prefixes == ("stern",)
    assert (record.pod, record.container, record.pod_namespace) == (
        POD,
        "virt-controller",
        namespace,
    )
    assert (record.captured_at.at if record.captured_at else None) == captured
    assert record.repairs == ()


def test_stern_short_timestamps() -> None:
    records, _ = run([f"{POD} virt-controller 03-07 09:14:05 {BODY}"])
    assert records[0].prefixes == ("stern",)
    assert records[0].extra == (("stern_time", "03-07 09:14:05"),)


def test_stern_with_ansi_colours() -> None:
    records, tally = run([f"\x1b[32m{POD}\x1b[0m \x1b[33mvirt-controller\x1b[0m {BODY}"])
    assert tally == {"record": 1}
    assert records[0].prefixes == ("ansi", "stern")
    assert records[0].pod == POD
    assert "\x1b" not in records[0].raw


def test_stern_klog_body() -> None:
    records, _ = run(
        [f"{POD} virt-controller I0307 09:14:01.873390       1 leaderelection.go:271] ok"],
        anchor=datetime(2025, 3, 7, tzinfo=UTC),
    )
    assert (records[0].shape, records[0].pod) == ("klog", POD)


def test_stern_json_envelope_is_unwrapped() -> None:
    inner = BODY.replace('"', '\\"')
    line = (
        f'{{"message":"{inner}\\n","nodeName":"node-b07","namespace":"kubevirt","podName":"{POD}",'
        '"containerName":"virt-controller","labels":{"kubevirt.io":"virt-controller"}}'
    )
    records, tally = run([line])
    assert tally == {"record": 1}
    record = records[0]
    assert record.prefixes == ("stern_json",)
    assert (record.pod, record.container, record.pod_namespace) == (
        POD,
        "virt-controller",
        "kubevirt",
    )
    assert (record.msg, record.component) == ("m", "virt-controller")


def test_plain_words_are_not_a_stern_prefix() -> None:
    records, tally = run(["the quick brown fox"], policy="keep")
    assert tally == {"text_unknown": 1}
    assert records[0].shape == "unparsed"
    assert records[0].prefixes == ()
