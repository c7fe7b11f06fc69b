"""Panics and stack traces: the three shapes and the grouping rule."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

from parsers.logstream import LogParser
from parsers.records import SourceInfo
from tests.helpers import parse_lines

UTC = timezone.utc
ANCHOR = datetime(2025, 3, 7, tzinfo=UTC)
JSON_LINE = '{"level":"info","msg":"before","timestamp":"2025-03-07T09:27:11.000001Z"}'


run = partial(parse_lines, source_id="previous.log")


SHAPE_A = [
    'E0307 09:27:12.640019       1 runtime.go:78] Observed a panic: "index out of range" (runtime '
    'error: index out of range [2] with length 2)',
    "goroutine 731 [running]:",
    "k8s.io/apimachinery/pkg/util/runtime.logPanic({0x2a1f3c0?, 0x4d8e110})",
    "\t/go/src/kubevirt.io/kubevirt/vendor/k8s.io/apimachinery/pkg/util/runtime/runtime.go:75 "
    "+0x85",
    "kubevirt.io/kubevirt/pkg/virt-controller/watch/vm.(*Controller).sync(0xc000a1e000, "
    "0xc002f4b180)",
    "\t/go/src/kubevirt.io/kubevirt/pkg/virt-controller/watch/vm/vm.go:2711 +0x4f2",
]  # fmt: skip

SHAPE_B = [
    'E0307 09:27:12.640019       1 runtime.go:142] "Observed a panic" panic="runtime error: index '
    'out of range [2] with length 2" panicGoValue="runtime.boundsError{x:2, y:2, signed:true, '
    'code:0x0}" stacktrace=<',
    "\tgoroutine 731 [running]:",
    "\tk8s.io/apimachinery/pkg/util/runtime.logPanic({0x2a1f3c0, 0x4d8e110}, {0x23b7a40, "
    "0x4c61f50})",
    "\t\t/go/src/kubevirt.io/kubevirt/vendor/k8s.io/apimachinery/pkg/util/runtime/runtime.go:132 "
    "+0xb5",
    " >",
]  # fmt: skip

SHAPE_C = [
    "panic: runtime error: index out of range [2] with length 2 [recovered]",
    "\tpanic: runtime error: index out of range [2] with length 2",
    "",
    "goroutine 731 [running]:",
    "main.main()",
    "\t/go/src/kubevirt.io/kubevirt/cmd/virt-controller/virt-controller.go:9 +0x25",
    "created by k8s.io/client-go/tools/cache.(*processorListener).run in goroutine 112",
    "exit status 2",
]  # fmt: skip


def test_shape_a_unindented_dump_attaches_to_the_klog_line() -> None:
    records, tally = run(SHAPE_A, anchor=ANCHOR)
    assert tally == {"record": 1, "continuation": 5}
    record = records[0]
    assert (record.shape, record.level, record.pos) == ("klog", "error", "runtime.go:78")
    assert record.stack == "\n".join(SHAPE_A[1:])


def test_shape_b_structured_stacktrace_value() -> None:
    records, tally = run([*SHAPE_B, JSON_LINE], anchor=ANCHOR)
    assert tally == {"record": 2, "continuation": 4}
    record = records[0]
    assert record.msg == "Observed a panic"
    assert record.extra == (
        ("panic", "runtime error: index out of range [2] with length 2"),
        ("panicGoValue", "runtime.boundsError{x:2, y:2, signed:true, code:0x0}"),
    )
    assert record.stack == "\n".join(line[1:] for line in SHAPE_B[1:4])
    assert records[1].msg == "before"


def test_shape_c_standalone_panic_inherits_the_previous_time() -> None:
    records, tally = run([JSON_LINE, *SHAPE_C], policy="keep")
    assert tally == {"record": 2, "continuation": 5, "blank": 1, "text_unknown": 1}
    panic = records[1]
    assert (panic.shape, panic.level, panic.line_no) == ("panic", "fatal", 2)
    assert panic.msg == SHAPE_C[0]
    assert panic.flags == ("time_inherited",)
    assert panic.time is not None and records[0].time is not None
    assert panic.time.at == records[0].time.at
    assert panic.time.flags == ("inherited",)
    assert panic.stack == "\n".join(SHAPE_C[i] for i in (1, 3, 4, 5, 6))
    assert records[2].msg == "exit status 2"


def test_panic_with_no_earlier_time_has_none() -> None:
    records, tally = run(SHAPE_C[:2])
    assert tally == {"record": 1, "continuation": 1}
    assert records[0].time is None
    assert records[0].flags == ("no_time",)


def test_stack_lines_attach_to_any_preceding_record() -> None:
    records, tally = run([JSON_LINE, "goroutine 1 [chan receive]:", "main.main()"])
    assert tally == {"record": 1, "continuation": 2}
    assert records[0].stack == "goroutine 1 [chan receive]:\nmain.main()"


def test_orphan_stack_lines_are_unknown_text() -> None:
    records, tally = run(["\t/go/src/x.go:1 +0x1", "created by main.main"], policy="keep")
    assert tally == {"text_unknown": 2}
    assert [r.shape for r in records] == ["unparsed", "unparsed"]


def test_record_is_held_until_the_next_line_decides() -> None:
    parser = LogParser(SourceInfo("s"))
    assert parser.feed(1, JSON_LINE.encode()) == []
    assert parser.feed(2, b"goroutine 5 [running]:") == []
    emitted = parser.feed(3, JSON_LINE.encode())
    assert [r.line_no for r in emitted] == [1]
    assert emitted[0].stack == "goroutine 5 [running]:"
    assert [r.line_no for r in parser.close()] == [3]
    assert parser.tally == {"record": 2, "continuation": 1}


def test_stack_spaces_instead_of_tabs_still_attach() -> None:
    records, tally = run([
        JSON_LINE,
        "goroutine 731 [running]:",
        "    /go/src/kubevirt.io/kubevirt/pkg/virt-controller/watch/vm/vm.go:2711 +0x4f2",
    ])  # fmt: skip
    assert tally == {"record": 1, "continuation": 2}
    assert records[0].stack is not None and records[0].stack.endswith("+0x4f2")
