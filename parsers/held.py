"""The record a stream holds back while continuation lines may still attach to it.

Stack lines (:mod:`parsers.stack`) become the record's ``stack``; a structured-klog value opened
with ``key=<`` collects TAB-indented lines up to a lone `` >``. ``stacktrace=<`` values
become the ``stack`` too; other values land in ``extra``.
"""

from __future__ import annotations

from parsers.draft import Draft
from parsers.klog import parse_pairs
from parsers.peel import Peeled
from parsers.records import LogRecord, Timestamp
from parsers.stack import CLOSE_VALUE, PANIC_SHAPE
from parsers.timestamps import inherited

_STACK_KEYS = frozenset({"stacktrace", "stack"})


def panic_draft(line: str, last_time: Timestamp | None) -> Draft:
    """A standalone `panic: …` / `goroutine N [` block: time inherited from the line before."""
    draft = Draft(shape=PANIC_SHAPE, level="fatal", msg=line.strip())
    if last_time is None:
        draft.flags.append("no_time")
    else:
        draft.time = inherited(last_time)
        draft.flags.append("time_inherited")
    return draft


class Held:
    """A parsed line plus the continuation lines merged into it so far."""

    __slots__ = (
        "container",
        "draft",
        "line_no",
        "peeled",
        "pod",
        "pod_namespace",
        "stack",
        "value",
    )

    def __init__(
        self,
        line_no: int,
        peeled: Peeled,
        draft: Draft,
        identity: tuple[str | None, str | None, str | None],
    ) -> None:
        self.line_no = line_no
        self.peeled = peeled
        self.draft = draft
        self.pod, self.container, self.pod_namespace = identity
        self.stack: list[str] = []
        self.value: list[str] = []

    @property
    def open_key(self) -> bool:
        return self.draft.open_key is not None

    def add_line(self, body: str) -> None:
        """Merge one continuation line (a stack line, or a line of an open ``key=<`` value)."""
        if self.draft.open_key is None:
            self.stack.append(body)
        elif body == CLOSE_VALUE or body.startswith(CLOSE_VALUE + " "):
            self._close_value()
            parse_pairs(body[len(CLOSE_VALUE) :], self.draft)
        else:
            self.value.append(body[1:] if body.startswith("\t") else body)

    def _close_value(self) -> None:
        key, self.draft.open_key = self.draft.open_key, None
        if key in _STACK_KEYS:
            self.stack.extend(self.value)
        elif key is not None:
            self.draft.extra.append((key, "\n".join(self.value)))
        self.value = []

    def record(self, source_id: str) -> LogRecord:
        """The finished, frozen record."""
        draft, peeled = self.draft, self.peeled
        if draft.open_key is not None:
            self._close_value()
            draft.flags.append("value_unterminated")
        return LogRecord(
            source_id, self.line_no, draft.shape, draft.level, draft.msg, draft.time,
            draft.pos, draft.component, draft.namespace, draft.name, draft.kind, draft.uid,
            draft.reason, captured_at=draft.captured_at or peeled.captured_at,
            pod=self.pod, container=self.container,
            prefixes=tuple(peeled.prefixes + draft.prefixes), repairs=tuple(draft.repairs),
            flags=tuple(peeled.flags + draft.flags), extra=tuple(sorted(draft.extra)),
            stack="\n".join(self.stack) if self.stack else None, raw=peeled.text,
            pod_namespace=self.pod_namespace, line_hint=peeled.line_hint,
        )  # fmt: skip
