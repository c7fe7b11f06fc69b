"""Paste damage, stream structure lines and bad-line policies."""

from __future__ import annotations

from functools import partial

import pytest

from parsers.logstream import LogParser
from parsers.records import ParseError, SourceInfo
from tests.helpers import parse_lines

BODY = (
    '{"component":"virt-controller","level":"info","msg":"m","timestamp":"2025-03-07T09:14:05.4'
    '12208Z"}'
)
POD = "virt-controller-7c9d5b6f4-h2xqm"
STANDBY = "virt-controller-7c9d5b6f4-wp8rz"


run = partial(parse_lines, source_id="paste.md")


@pytest.mark.parametrize(
    "line",
    [f"`{BODY}`", f"`{BODY}", f"```{BODY}```", f"**{BODY}**", f"> {BODY}", f"- {BODY}",
     f"> `{BODY}`"],
)  # fmt: skip
def test_markdown_wrappers_are_peeled(line: str) -> None:
    records, tally = run([line])
    assert tally == {"record": 1}
    assert records[0].prefixes == ("markdown",)
    assert (records[0].msg, records[0].repairs) == ("m", ())
    assert records[0].raw == line


@pytest.mark.parametrize("line", ["```", "```json", "~~~", ">", "**", "<details>", "</details>",
                                  "<summary>virt-controller logs</summary>"])  # fmt: skip
def test_markup_only_lines(line: str) -> None:
    records, tally = run([line], policy="keep")
    assert (records, tally) == ([], {"markdown_only": 1})


def test_a_fenced_paste_with_blank_lines() -> None:
    records, tally = run(["```", BODY, "", "   ", BODY, "```"])
    assert tally == {"markdown_only": 2, "record": 2, "blank": 2}
    assert [r.line_no for r in records] == [2, 5]


def test_indentation_is_peeled_before_classifying() -> None:
    records, tally = run([f"    {BODY}", f"\t{BODY}", f"\u00a0{BODY}"])
    assert tally == {"record": 3}
    assert [r.prefixes for r in records] == [("indent",)] * 3


def test_bom_and_crlf() -> None:
    parser = LogParser(SourceInfo("win.log"))
    records = list(
        parser.parse([b"\xef\xbb\xbf" + BODY.encode() + b"\r\n", BODY.encode() + b"\r\n"])
    )
    assert parser.tally == {"record": 2}
    assert [r.prefixes for r in records] == [("bom",), ()]
    assert [r.raw for r in records] == [BODY, BODY]


def test_invalid_utf8_is_replaced_and_flagged() -> None:
    line = b'{"level":"info","msg":"caf\xe9","timestamp":"2025-03-07T09:14:05.412208Z"}'
    parser = LogParser(SourceInfo("bytes.log"))
    records = list(parser.parse([line]))
    assert parser.tally == {"record": 1}
    assert records[0].msg == "caf\ufffd"
    assert records[0].flags == ("utf8_replaced",)


def test_nbsp_inside_the_structure_is_a_recorded_repair() -> None:
    records, _ = run(['{"level":\u00a0"info","msg":"m"}'])
    assert records[0].repairs == ("smart_quotes",)
    assert records[0].level == "info"


def test_annotation_is_not_a_timestamp() -> None:
    records, tally = run(["2025-03-07T09:14:05:", "2025-03-07 09:14"], policy="keep")
    assert tally == {"annotation": 2}
    assert [(r.shape, r.flags, r.time) for r in records] == [
        ("unparsed", ("annotation",), None)
    ] * 2


def test_shell_prompt_is_counted_unknown() -> None:
    records, tally = run([f"[admin@bastion ~]$ kubectl logs -n kubevirt {POD}", BODY])
    assert tally == {"text_unknown": 1, "record": 1}
    assert len(records) == 1


def test_framework_header_switches_the_pod() -> None:
    records, tally = run(
        ["", f"Pod name: {POD}\t Pod phase: Running", "", BODY,
         f"Pod name: {STANDBY}\t Pod phase: Running", BODY],
    )  # fmt: skip
    assert tally == {"blank": 2, "framework_header": 2, "record": 2}
    assert [r.pod for r in records] == [POD, STANDBY]


def test_dump_markers_switch_pod_and_container() -> None:
    records, tally = run([
        f"==== START logs for container virt-controller of pod kubevirt/{POD} ====",
        BODY,
        f"==== END logs for container virt-controller of pod kubevirt/{POD} ====",
        BODY,
    ])  # fmt: skip
    assert tally == {"dump_marker": 2, "record": 2}
    assert [(r.pod, r.container, r.pod_namespace) for r in records] == [
        (POD, "virt-controller", "kubevirt"), (None, None, None),
    ]  # fmt: skip


def test_too_long_keeps_the_head() -> None:
    line = '{"level":"info","msg":"' + "x" * 200 + '","timestamp":"2025-03-07T09:14:05.412208Z"}'
    records, tally = run([line, BODY], max_line=100)
    assert tally == {"too_long": 1, "record": 1}
    head = records[0]
    assert head.flags == ("no_time", "partial", "too_long")
    assert head.msg == "x" * (100 - len('{"level":"info","msg":"'))
    assert head.raw == line[:100]


def test_keep_policy_emits_bad_lines_in_order() -> None:
    records, tally = run([BODY, "what is this", BODY, "{broken"], policy="keep")
    assert tally == {"record": 2, "text_unknown": 1, "json_truncated": 1}
    assert [(r.line_no, r.shape) for r in records] == [
        (1, "kubevirt_json"), (2, "unparsed"), (3, "kubevirt_json"), (4, "unparsed"),
    ]  # fmt: skip
    assert records[1].flags == ("text_unknown",)
    assert (records[1].level, records[1].msg) == ("", "what is this")


def test_skip_policy_emits_only_records() -> None:
    records, tally = run([BODY, "what is this"])
    assert [r.shape for r in records] == ["kubevirt_json"]
    assert tally == {"record": 1, "text_unknown": 1}


def test_strict_policy_raises_on_the_first_bad_line() -> None:
    parser = LogParser(SourceInfo("strict.log"), policy="strict")
    with pytest.raises(ParseError) as caught:
        list(parser.parse([BODY.encode(), b"", b"what is this"]))
    assert (caught.value.source_id, caught.value.line_no, caught.value.reason) == (
        "strict.log", 3, "text_unknown",
    )  # fmt: skip
    assert isinstance(caught.value, ValueError)


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="policy"):
        LogParser(SourceInfo("x"), policy="lenient")
