"""klog text, Go std log, old logfmt, klog years."""

from __future__ import annotations

from datetime import datetime, timezone

from tests.helpers import parse_lines

UTC = timezone.utc
ANCHOR = datetime(2025, 3, 7, 12, 0, tzinfo=UTC)
JSON_0914 = '{"level":"info","msg":"m","timestamp":"2025-03-07T09:14:00.000001Z"}'


run = parse_lines


def test_klog_info_line_with_constructor_anchor() -> None:
    records, tally = run(
        ["I0307 09:14:01.873390       1 leaderelection.go:271] successfully acquired lease "
         "kubevirt/virt-controller"],
        anchor=ANCHOR,
    )  # fmt: skip
    assert tally == {"record": 1}
    record = records[0]
    assert (record.shape, record.level, record.pos) == ("klog", "info", "leaderelection.go:271")
    assert record.msg == "successfully acquired lease kubevirt/virt-controller"
    assert record.extra == (("lock", "kubevirt/virt-controller"),)
    assert record.time is not None
    assert record.time.at == datetime(2025, 3, 7, 9, 14, 1, 873390, tzinfo=UTC)
    assert record.time.flags == ("year_inferred", "tz_assumed")


def test_klog_severities_map_to_levels() -> None:
    records, _ = run(
        [
            "W0307 09:20:03.551920       1 reflector.go:484] watch of *v1.Pod ended with: an error",
            'E0307 09:31:40.118734       1 leaderelection.go:448] error retrieving resource lock '
            'kubevirt/virt-controller: Get "https://10.96.0.1:443/x": context deadline exceeded',
            "F0307 09:31:41.000000       1 main.go:12] cannot go on",
        ],
        anchor=ANCHOR,
    )  # fmt: skip
    assert [r.level for r in records] == ["warning", "error", "fatal"]
    assert records[1].extra == (("lock", "kubevirt/virt-controller"),)


def test_klog_without_any_anchor_is_time_partial_but_kept() -> None:
    records, tally = run(
        [
            "I0307 09:13:58.100214       1 leaderelection.go:257] attempting to "
            "acquire leader lease kubevirt/virt-controller..."
        ]
    )
    assert tally == {"time_partial": 1}
    assert len(records) == 1
    assert records[0].time is None
    assert records[0].extra == (("lock", "kubevirt/virt-controller"),)


def test_klog_anchor_is_the_nearest_earlier_dated_line() -> None:
    records, tally = run(
        [JSON_0914, "I0307 09:14:02.000001       1 x.go:1] after json"],
        anchor=datetime(2019, 1, 1, tzinfo=UTC),
    )
    assert tally == {"record": 2}
    assert records[1].time is not None and records[1].time.at.year == 2025


def test_klog_december_to_january_file() -> None:
    records, tally = run([
        '{"level":"info","msg":"m","timestamp":"2025-12-31T23:59:58.000001Z"}',
        "I1231 23:59:59.500000       1 x.go:1] last of the year",
        "I0101 00:00:00.500000       1 x.go:1] first of the year",
        "I0101 00:00:01.500000       1 x.go:1] second of the year",
    ])  # fmt: skip
    assert tally == {"record": 4}
    assert [r.time.at.year for r in records if r.time] == [2025, 2025, 2026, 2026]


def test_klog_behind_a_kubelet_prefix_takes_the_year_from_the_prefix() -> None:
    records, tally = run(
        [
            "2025-03-07T09:13:58.100251334Z I0307 09:13:58.100214       1 "
            "leaderelection.go:257] attempting"
        ]
    )
    assert tally == {"record": 1}
    record = records[0]
    assert record.prefixes == ("kubelet",)
    assert record.time is not None
    assert record.time.at == datetime(2025, 3, 7, 9, 13, 58, 100214, tzinfo=UTC)
    assert record.captured_at is not None
    assert record.captured_at.at == datetime(2025, 3, 7, 9, 13, 58, 100251, tzinfo=UTC)


def test_structured_klog_splits_msg_and_pairs() -> None:
    records, _ = run(
        ['E0307 09:20:09.004411       1 reflector.go:166] "Unhandled Error" '
         'err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.ControllerRevision: '
         'the server has asked for the client to provide credentials" logger="UnhandledError"'],
        anchor=ANCHOR,
    )  # fmt: skip
    record = records[0]
    assert record.msg == "Unhandled Error"
    assert record.reason is not None and record.reason.endswith("to provide credentials")
    assert record.extra == (("logger", "UnhandledError"),)


def test_structured_klog_multiline_value_is_merged() -> None:
    records, tally = run(
        [
            'I0307 09:20:10.000001       1 event.go:1] "Event occurred" object="kubevirt/x" '
            "details=<",
            "\tfirst line of the value",
            "\t  second, indented",
            ' > reason="Later"',
            JSON_0914,
        ],
        anchor=ANCHOR,
    )
    assert tally == {"record": 2, "continuation": 3}
    record = records[0]
    assert record.extra == (
        ("details", "first line of the value\n  second, indented"),
        ("object", "kubevirt/x"),
        ("reason", "Later"),
    )
    assert record.stack is None


def test_unterminated_multiline_value_is_flagged() -> None:
    records, tally = run(
        ['I0307 09:20:10.000001       1 event.go:1] "Event" details=<', "\tonly line"],
        anchor=ANCHOR,
    )
    assert tally == {"record": 1, "continuation": 1}
    assert records[0].extra == (("details", "only line"),)
    assert records[0].flags == ("value_unterminated",)


def test_go_std_log_line() -> None:
    records, tally = run(
        [
            "2019/06/03 14:52:17 failed to build in-cluster client config: open "
            "/var/run/secrets/kubernetes.io/serviceaccount/token: no such file or "
            "directory"
        ]
    )
    assert tally == {"record": 1}
    record = records[0]
    assert (record.shape, record.level) == ("stdlog", "info")
    assert record.msg.startswith("failed to build in-cluster client config")
    assert record.time is not None
    assert record.time.at == datetime(2019, 6, 3, 14, 52, 17, tzinfo=UTC)
    assert (record.time.resolution_us, record.time.flags) == (1_000_000, ("tz_assumed",))


def test_logfmt_line_with_empty_kind() -> None:
    records, tally = run([
        'level=error timestamp=2018-06-11T08:02:33.020007Z pos=vmi.go:301 '
        'component=virt-controller service=http namespace=lab name=cirros-a kind= '
        'uid=5d1e2f3a-6d4f-11e8-9c2d-525400a1b2c3 reason="pods \\"virt-launcher-cirros-a-\\" is '
        'forbidden" msg="Synchronizing the VM failed."'
    ])  # fmt: skip
    assert tally == {"record": 1}
    record = records[0]
    assert record.shape == "logfmt"
    assert record.flags == ("era=logfmt",)
    assert (record.level, record.pos, record.kind) == ("error", "vmi.go:301", None)
    assert (record.namespace, record.name) == ("lab", "cirros-a")
    assert record.uid == "5d1e2f3a-6d4f-11e8-9c2d-525400a1b2c3"
    assert record.reason == 'pods "virt-launcher-cirros-a-" is forbidden'
    assert record.msg == "Synchronizing the VM failed."
    assert record.extra == (("service", "http"),)
    assert record.time is not None
    assert record.time.at == datetime(2018, 6, 11, 8, 2, 33, 20007, tzinfo=UTC)
