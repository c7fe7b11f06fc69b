"""Panic and stack-trace lines (Go runtime dumps and apimachinery's "Observed a panic").

A block *starts* at `goroutine N [`, `panic: ` or `fatal error: ` (or a klog line ending in
`stacktrace=<`, handled with structured klog). It *continues* over TAB-indented lines, Go frame
lines, `created by …`, `[signal …`, blank lines and a lone ` >`. The stream attaches a block to
the record before it as ``stack``; a block with nothing before it becomes a ``panic`` record.
"""

from __future__ import annotations

import re

PANIC_SHAPE = "panic"
_STARTS = ("goroutine ", "panic: ", "fatal error: ")
_GOROUTINE = re.compile(r"goroutine \d+ \[", re.ASCII)
_CONTINUES = ("created by ", "[signal ", "\t")
_FRAME = re.compile(r"[\w./*()-]+\(.*\)", re.ASCII)
_FILE_LINE = re.compile(r"\s*/?[\w./@-]+\.(?:go|s):\d+(?: \+0x[0-9a-f]+)?", re.ASCII)
CLOSE_VALUE = " >"


def starts_block(body: str) -> bool:
    """`goroutine N [`, `panic: `, `fatal error: ` at column 0."""
    if not body.startswith(_STARTS):
        return False
    return not body.startswith("goroutine ") or _GOROUTINE.match(body) is not None


def continues_block(body: str) -> bool:
    """A line that only makes sense inside a dump: frames, `created by`, TAB-indented, ` >`."""
    if body.startswith(_CONTINUES) or body == CLOSE_VALUE or body.startswith(" > "):
        return True
    return _FRAME.fullmatch(body) is not None or _FILE_LINE.fullmatch(body) is not None
