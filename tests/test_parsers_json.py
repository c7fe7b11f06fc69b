"""KubeVirt JSON lines and the invalid-JSON repair ladder (parsers/kvjson.py)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from parsers.records import LogRecord
from tests.helpers import parse_lines

UTC = timezone.utc
VM_UID = "940dbef6-7c4e-47dd-8335-331151d9fd89"
VMI_UID = "afde60bc-ef93-48b9-bf25-b4ca5b005407"


run = parse_lines


def only(lines: list[str], **options: object) -> LogRecord:
    records, _ = run(lines, **options)
    assert len(records) == 1
    return records[0]


START_VM = (
    '{"component":"virt-controller","kind":"","level":"info","msg":"Starting VM due to '
    'runStrategy: Always","name":"pg-main","namespace":"shop-prod","pos":"vm.go:1081",'
    f'"timestamp":"2025-03-07T09:14:05.412208Z","uid":"{VM_UID}"}}'
)


def test_object_line_with_empty_kind() -> None:
    records, tally = run([START_VM])
    assert tally == {"record": 1}
    record = records[0]
    assert record.shape == "kubevirt_json"
    assert (record.level, record.msg, record.pos) == (
        "info", "Starting VM due to runStrategy: Always", "vm.go:1081",
    )  # fmt: skip
    assert (record.component, record.namespace, record.name) == (
        "virt-controller", "shop-prod", "pg-main",
    )  # fmt: skip
    assert record.kind is None  # "" means "not given": never key on kind
    assert record.uid == VM_UID
    assert record.time is not None
    assert record.time.at == datetime(2025, 3, 7, 9, 14, 5, 412208, tzinfo=UTC)
    assert record.time.resolution_us == 1
    assert (record.line_no, record.source, record.raw) == (1, "fixture.log", START_VM)
    assert record.extra == () and record.flags == () and record.prefixes == ()


def test_object_line_with_kind_and_error_level() -> None:
    record = only([
        '{"component":"virt-controller","kind":"VirtualMachine","level":"error","msg":"failed to '
        'update volumes for vmi:admission denied","name":"pg-main","namespace":"shop-prod",'
        f'"pos":"vm.go:935","timestamp":"2025-03-07T09:14:06.030117Z","uid":"{VM_UID}"}}'
    ])  # fmt: skip
    assert (record.kind, record.level) == ("VirtualMachine", "error")


def test_reenqueue_line_keeps_the_key_in_msg_only() -> None:
    record = only([
        '{"component":"virt-controller","level":"info","msg":"re-enqueuing VirtualMachine '
        'shop-prod/pg-main","pos":"vm.go:348","reason":"Internal error occurred: failed calling '
        'webhook \\"virtualmachineinstances-create-validator.kubevirt.io\\": context deadline '
        'exceeded","timestamp":"2025-03-07T09:14:06.030402Z"}'
    ])  # fmt: skip
    assert record.msg == "re-enqueuing VirtualMachine shop-prod/pg-main"
    assert (record.name, record.namespace, record.uid) == (None, None, None)
    assert record.reason is not None
    assert record.reason.startswith('Internal error occurred: failed calling webhook "virtual')


def test_warning_level_and_escaped_quotes() -> None:
    record = only([
        '{"component":"virt-controller","kind":"","level":"warning","msg":"Failed to parse memory '
        'overhead annotation: strconv.ParseInt: parsing \\"29x\\": invalid '
        'syntax","name":"pg-main",'
        '"namespace":"shop-prod","pos":"lifecycle.go:1175","timestamp":"2025-03-07T09:14:09.771503'
        'Z",'
        f'"uid":"{VMI_UID}"}}'
    ])  # fmt: skip
    assert record.level == "warning"
    assert '"29x"' in record.msg


@pytest.mark.parametrize(
    ("level", "normalised", "flags"),
    [("WARN", "warning", ()), ("Error", "error", ()), ("debug", "info", ()),
     ("fatal", "fatal", ()), ("verbose", "verbose", ("level_unknown",))],
)  # fmt: skip
def test_levels_are_normalised_and_unknown_ones_flagged(
    level: str, normalised: str, flags: tuple[str, ...]
) -> None:
    record = only(
        [f'{{"component":"virt-api","level":"{level}","msg":"m","timestamp":"2025-03-07T09:00:00.0'
         f'00001Z"}}']
    )  # fmt: skip
    assert record.level == normalised
    assert record.flags == flags


def test_listening_line_without_msg_keeps_other_keys_as_sorted_extra() -> None:
    record = only([
        '{"action":"listening","component":"virt-controller","interface":"0.0.0.0","level":"info",'
        '"port":8182,"pos":"application.go:596","service":"http",'
        '"timestamp":"2025-03-07T09:13:57.662019Z"}'
    ])  # fmt: skip
    assert record.msg == ""
    assert record.extra == (
        ("action", "listening"), ("interface", "0.0.0.0"), ("port", "8182"), ("service", "http"),
    )  # fmt: skip


def test_libvirt_relay_line() -> None:
    record = only([
        '{"component":"virt-launcher","level":"error","msg":"internal error: process exited while '
        'connecting to monitor","pos":"qemuProcessReportLogError:2103","subcomponent":"libvirt",'
        '"thread":"57","timestamp":"2025-03-07T09:14:21.338000Z"}'
    ])  # fmt: skip
    assert record.pos == "qemuProcessReportLogError:2103"
    assert record.extra == (("subcomponent", "libvirt"), ("thread", "57"))


def test_stdlib_adapter_line_keeps_ts_and_stays_info() -> None:
    record = only([
        '{"component":"virt-controller","level":"info","msg":"leaderelection lost",'
        '"pos":"stdlib.go:105","timestamp":"2025-03-07T09:31:44.902311Z","ts":"2025/03/07 '
        '09:31:44"}'
    ])  # fmt: skip
    assert (record.level, record.msg, record.pos) == (
        "info",
        "leaderelection lost",
        "stdlib.go:105",
    )
    assert record.extra == (("ts", "2025/03/07 09:31:44"),)
    assert record.time is not None and record.time.at.microsecond == 902311


def test_ts_is_the_time_when_timestamp_is_missing() -> None:
    record = only(
        [
            '{"component":"virt-controller","level":"info","msg":"STARTING","ts":"2025/03/0'
            '7 09:31:44"}'
        ]
    )
    assert record.time is not None
    assert record.time.at == datetime(2025, 3, 7, 9, 31, 44, tzinfo=UTC)
    assert record.time.resolution_us == 1_000_000
    assert "tz_assumed" in record.time.flags
    assert "time_from_ts" in record.flags


def test_msg_is_stripped_but_raw_is_not() -> None:
    line = (
        '{"level":"info","msg":"\\nline one\\nline '
        'two\\n","timestamp":"2025-03-07T09:00:00.000001Z"}'
    )
    record = only([line])
    assert record.msg == "line one\nline two"
    assert record.raw == line


def test_non_uuid_and_redacted_identities_are_flagged() -> None:
    record = only([
        '{"level":"info","msg":"m","name":"pg-…","uid":"<redacted>","timestamp":"2025-03-07T09:00:'
        '00.000001Z"}'
    ])  # fmt: skip
    assert record.flags == ("uid_not_uuid", "redacted")
    assert (record.name, record.uid) == ("pg-…", "<redacted>")


def test_same_message_ms_apart_is_two_records() -> None:
    line = (
        '{"level":"info","msg":"processed VirtualMachine '
        'shop-prod/pg-main","timestamp":"2025-03-07T09:00:00.00000%dZ"}'
    )
    records, tally = run([line % 1, line % 2])
    assert [r.time.at.microsecond for r in records if r.time] == [1, 2]
    assert tally == {"record": 2}


# -- the repair ladder ------------------------------------------------------------------


def test_missing_closing_quote_before_brace() -> None:
    record = only(['{"level":"info","msg":"m","timestamp":"2025-03-07T09:14:00.000113Z}'])
    assert record.repairs == ("unterminated_string",)
    assert record.time is not None and record.time.flags == ()
    assert record.time.at == datetime(2025, 3, 7, 9, 14, 0, 113, tzinfo=UTC)


def test_timestamp_without_z_and_quote_is_tz_assumed() -> None:
    record = only(['{"level":"info","msg":"m","timestamp":"2025-03-07T09:14:00.000207}'])
    assert record.repairs == ("unterminated_string",)
    assert record.time is not None
    assert record.time.flags == ("tz_assumed",)
    assert record.time.at == datetime(2025, 3, 7, 9, 14, 0, 207, tzinfo=UTC)


def test_trailing_comma_after_removed_key() -> None:
    record = only(['{"level":"info","msg":"m","service":"http",}'])
    assert record.repairs == ("trailing_comma",)
    assert record.extra == (("service", "http"),)


def test_junk_before_the_object() -> None:
    records, tally = run(
        [
            'ion{"component":"virt-controller","level":"info","msg":"m","timestamp":'
            '"2025-03-07T09:14:00.000001Z"}'
        ]
    )
    assert tally == {"record": 1}
    assert records[0].repairs == ("junk_prefix",)
    assert records[0].msg == "m"


def test_smart_quotes_are_a_recorded_repair() -> None:
    record = only(["{“level”:“info”,“msg”:“m”,“timestamp”:“2025-03-07T09:14:00.000001Z”}"])
    assert record.repairs == ("smart_quotes",)
    assert (record.level, record.msg) == ("info", "m")


def test_truncated_object_is_salvaged_as_partial() -> None:
    records, tally = run([
        '{"component":"virt-controller","kind":"","level":"info","msg":"Starting VM due to runSt',
        START_VM,
    ])  # fmt: skip
    assert tally == {"json_truncated": 1, "record": 1}
    partial = records[0]
    assert partial.flags == ("no_time", "partial")
    assert (partial.level, partial.msg, partial.time) == ("info", "Starting VM due to runSt", None)
    assert records[1].msg == "Starting VM due to runStrategy: Always"


def test_invalid_but_closed_object_is_json_invalid_with_salvage() -> None:
    records, tally = run(
        ['{"level":"error","msg":"boom" "timestamp":"2025-03-07T09:14:00.000001Z"}']
    )
    assert tally == {"json_invalid": 1}
    assert records[0].flags == ("partial",)
    assert records[0].time is not None


def test_unsalvageable_object_emits_nothing_when_skipping() -> None:
    records, tally = run(["{not json at all}"])
    assert (records, tally) == ([], {"json_invalid": 1})


def test_rewrapped_object_over_several_lines_is_joined() -> None:
    records, tally = run([
        '{"component":"virt-controller","level":"error","msg":"Reconciling '
        'failed","reason":"admission webhook denied the request:',
        "",
        "spec.domain.cpu.cores: must be greater than 0,",
        'spec.domain.memory.guest: required","timestamp":"2025-03-07T09:14:08.000001Z"}',
        START_VM,
    ])  # fmt: skip
    assert tally == {"record": 2, "continuation": 3}
    joined = records[0]
    assert joined.repairs == ("multiline_join",)
    assert joined.reason == (
        "admission webhook denied the request: spec.domain.cpu.cores: must be greater than 0, "
        "spec.domain.memory.guest: required"
    )
    assert joined.line_no == 1
    assert joined.raw.count("\n") == 3
    assert records[1].line_no == 5


def test_join_gives_up_after_fifty_lines() -> None:
    lines = ['{"level":"info","msg":"never closed'] + ["more words"] * 60
    records, tally = run(lines, policy="keep")
    assert tally == {"json_truncated": 1, "text_unknown": 60}
    assert (records[0].level, records[0].msg, records[0].flags) == (
        "info", "never closed", ("no_time", "partial"),
    )  # fmt: skip
    assert [r.shape for r in records[1:]] == ["unparsed"] * 60
