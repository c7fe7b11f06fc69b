"""The line parser: physical lines in, :class:`~parsers.records.LogRecord` values out.

Every physical line ends as exactly one outcome in :attr:`LogParser.tally` (the closed
vocabulary of :mod:`parsers.records`): once :meth:`LogParser.close` has returned, the tally's sum
equals the number of lines fed. State carried between lines, all of it flushed by ``close``:

- the *held* record, which stack lines and klog ``key=<`` values may still attach to
  (:mod:`parsers.held`);
- unterminated CRI ``P`` parts, per stream (:mod:`parsers.joins`);
- a JSON object re-wrapped over several lines, joined up to 50 lines / 64 KiB;
- the klog year anchor and the pod named by the last dump marker or framework header.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import IO, cast

from parsers.classify import classify
from parsers.draft import DUMP_END, DUMP_START, HEADER, STACK_CONT, STACK_START, Draft
from parsers.held import Held, panic_draft
from parsers.joins import MAX_JOIN_BYTES, CriParts, JsonJoin, accepts_fragment
from parsers.lines import MAX_LINE, bounded_lines
from parsers.peel import Peeled, peel
from parsers.records import (
    BENIGN_OUTCOMES,
    BLANK,
    CONTINUATION,
    MARKDOWN_ONLY,
    RECORD,
    TEXT_UNKNOWN,
    TIME_OUT_OF_RANGE,
    TIME_PARTIAL,
    TOO_LONG,
    LineTally,
    LogRecord,
    ParseError,
    SourceInfo,
    Timestamp,
)
from parsers.timestamps import is_fully_dated, parse_klog_time

POLICIES = ("skip", "keep", "strict")
_SKEW_SECONDS = 5.0


class LogParser:
    """Parse one log stream. ``policy``: ``skip`` counts bad lines, ``keep`` also emits them as
    ``shape="unparsed"`` records, ``strict`` raises :class:`ParseError` on the first one.

    ``anchor`` dates klog lines (no year) when no earlier line in the stream carries a full
    date (:func:`parsers.timestamps.parse_klog_time`). Lines longer than ``max_line`` bytes
    (default :data:`~parsers.lines.MAX_LINE`, 1 MiB) keep their head and count ``too_long``.
    """

    def __init__(
        self,
        source: SourceInfo,
        *,
        policy: str = "skip",
        anchor: datetime | None = None,
        max_line: int = MAX_LINE,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.source = source
        self.policy = policy
        self.anchor = anchor
        self.max_line = max_line
        self.tally = LineTally()
        self.internal_errors: list[str] = []  # bugs caught by the per-line error boundary
        self._fed = 0
        self._held: Held | None = None
        self._last_time: Timestamp | None = None
        self._last_dated: datetime | None = None
        self._context: tuple[str | None, str | None, str | None] | None = None
        self._cri: dict[tuple[str | None, str], CriParts] = {}
        self._join: JsonJoin | None = None

    # -- public API ------------------------------------------------------------------------

    def feed(self, line_no: int, line: bytes) -> list[LogRecord]:
        """Feed one physical line; returns the records it completed (usually the one before)."""
        out: list[LogRecord] = []
        self._fed += 1
        try:
            self._feed(line_no, line, out)
        except ParseError:
            raise
        except Exception as exc:  # the per-line error boundary: a bad line never escapes
            self._recover(line_no, exc)
        return out

    def close(self) -> list[LogRecord]:
        """Flush everything still pending: a join, CRI partials, the held record."""
        out: list[LogRecord] = []
        try:
            self._close(out)
        except ParseError:
            raise
        except Exception as exc:
            self._recover(0, exc)
        return out

    def parse(self, stream: Iterable[bytes]) -> Iterator[LogRecord]:
        """Number the lines from 1, feed them all, then close. A binary file is read with
        :func:`~parsers.lines.bounded_lines`: an over-long line is never held whole."""
        if isinstance(stream, io.IOBase):
            stream = bounded_lines(cast("IO[bytes]", stream), self.max_line)
        for line_no, line in enumerate(stream, 1):
            yield from self.feed(line_no, line)
        yield from self.close()

    # -- one physical line -----------------------------------------------------------------

    def _feed(self, line_no: int, line: bytes, out: list[LogRecord]) -> None:
        if len(line) > self.max_line:
            if self._join is not None:
                self._end_join(out)
            self._too_long(line_no, peel(line[: self.max_line]), out)
            return
        peeled = peel(line)
        if self._join is not None and self._offer_to_join(line_no, peeled, out):
            return
        if peeled.cri_stream is not None:
            self._cri_line(line_no, peeled, out)
            return
        self._logical(line_no, peeled, 0, out)

    def _cri_line(self, line_no: int, peeled: Peeled, out: list[LogRecord]) -> None:
        """Concatenate `P` (partial) parts of one stream until its `F` (full) line."""
        key = (peeled.path, peeled.cri_stream or "")
        parts = self._cri.get(key)
        if peeled.cri_partial:
            if parts is None:
                self._cri[key] = CriParts(line_no, peeled, self.max_line)
            else:
                parts.add(peeled)
            return
        if parts is None:
            self._logical(line_no, peeled, 0, out)
            return
        del self._cri[key]
        parts.add(peeled)
        self._logical(parts.line_no, parts.merged(), len(parts.texts) - 1, out)

    def _logical(
        self, line_no: int, peeled: Peeled, joined: int, out: list[LogRecord], *, join: bool = True
    ) -> None:
        """One logical line (a physical line, or CRI parts joined); ``joined`` more physical
        lines are counted as ``continuation``."""
        if joined:
            self._count(CONTINUATION, line_no, joined)
        if peeled.markdown_only:
            self._count(MARKDOWN_ONLY, line_no)
            return
        draft = classify(peeled.body, prefixed=peeled.captured_at is not None)
        if draft.control in (STACK_CONT, STACK_START):
            self._stack_line(line_no, peeled, draft, out)
        elif draft.outcome == BLANK:
            self._count(BLANK, line_no)
        elif draft.joinable and join and len(peeled.body) < MAX_JOIN_BYTES:
            self._flush(out)
            self._join = JsonJoin(line_no, peeled, draft)
        elif draft.is_record:
            self._flush(out)
            self._hold(line_no, peeled, draft)
        else:
            self._not_a_record(line_no, peeled, draft, out)

    def _not_a_record(
        self, line_no: int, peeled: Peeled, draft: Draft, out: list[LogRecord]
    ) -> None:
        self._flush(out)
        if draft.control in (DUMP_START, HEADER):
            self._context = (draft.pod, draft.container, draft.pod_namespace)
        elif draft.control == DUMP_END:
            self._context = None
        self._count(draft.outcome, line_no)
        if self.policy == "keep" and draft.outcome not in BENIGN_OUTCOMES:
            out.append(self._unparsed(line_no, peeled, draft.outcome))

    # -- stacks and held records -----------------------------------------------------------

    def _stack_line(self, line_no: int, peeled: Peeled, draft: Draft, out: list[LogRecord]) -> None:
        held = self._held
        goroutine = draft.msg.startswith("goroutine ")
        if held is not None and (draft.control == STACK_CONT or goroutine or held.open_key):
            held.add_line(peeled.body)
            self._count(CONTINUATION, line_no)
        elif draft.control == STACK_START:
            self._flush(out)
            self._hold(line_no, peeled, panic_draft(draft.msg, self._last_time))
        else:
            self._not_a_record(line_no, peeled, Draft(outcome=TEXT_UNKNOWN), out)

    def _hold(self, line_no: int, peeled: Peeled, draft: Draft) -> None:
        """Date the draft, count it, and keep it until no more lines can attach to it."""
        self._date(peeled, draft)
        self._count(draft.outcome, line_no)
        self._held = Held(line_no, peeled, draft, self._identity(peeled, draft))

    def _date(self, peeled: Peeled, draft: Draft) -> None:
        refused = TIME_OUT_OF_RANGE in draft.flags or TIME_OUT_OF_RANGE in peeled.flags
        if refused and draft.outcome == RECORD:
            draft.outcome = TIME_OUT_OF_RANGE  # the record keeps no time; the tally says why
        captured = draft.captured_at or peeled.captured_at
        if draft.klog_clock is not None:
            anchor = captured.at if captured is not None else (self._last_dated or self.anchor)
            draft.time = parse_klog_time(*draft.klog_clock, anchor)
            if draft.time is None and draft.outcome == RECORD:
                draft.outcome = TIME_PARTIAL
        if draft.time is not None:
            self._last_time = draft.time
            if is_fully_dated(draft.time):
                self._last_dated = draft.time.at
            if captured is not None and _skewed(draft.time, captured):
                draft.flags.append("capture_skew")
        if captured is not None:
            self._last_dated = captured.at

    def _identity(self, peeled: Peeled, draft: Draft) -> tuple[str | None, str | None, str | None]:
        """Pod, container, pod namespace: the line's own prefix, else the last dump marker or
        framework header, else the source."""
        if draft.pod is not None:
            return draft.pod, draft.container, draft.pod_namespace
        if peeled.pod is not None:
            return peeled.pod, peeled.container, peeled.pod_namespace
        if self._context is not None:
            return self._context
        return self.source.pod, self.source.container, self.source.namespace

    def _flush(self, out: list[LogRecord]) -> None:
        if self._held is not None:
            out.append(self._held.record(self.source.source_id))
            self._held = None

    # -- joins, long lines, close ----------------------------------------------------------

    def _offer_to_join(self, line_no: int, peeled: Peeled, out: list[LogRecord]) -> bool:
        """Give a line to the pending multi-line JSON join; False if it does not belong."""
        join = self._join
        assert join is not None
        if not accepts_fragment(peeled):
            self._end_join(out)
            return False
        join.add(line_no, peeled)
        draft = join.attempt()
        if draft is not None:
            self._join = None
            self._emit_damaged(join.line_no, join.merged(), draft, out)
            self._count(CONTINUATION, line_no, len(join.fragments))
        elif join.full():
            self._end_join(out)
        return True

    def _end_join(self, out: list[LogRecord]) -> None:
        """The join failed: the first line is cut off; the others are read on their own."""
        join = self._join
        assert join is not None
        self._join = None
        self._emit_damaged(join.line_no, join.start, join.draft, out)
        for line_no, peeled in join.fragments:
            self._logical(line_no, peeled, 0, out, join=False)

    def _emit_damaged(
        self, line_no: int, peeled: Peeled, draft: Draft, out: list[LogRecord]
    ) -> None:
        if draft.is_record:
            self._flush(out)
            self._hold(line_no, peeled, draft)
        else:
            self._not_a_record(line_no, peeled, draft, out)

    def _too_long(self, line_no: int, peeled: Peeled, out: list[LogRecord]) -> None:
        """Over the cap: the head is parsed on its own (salvaged if it is JSON) and counted."""
        self._flush(out)
        draft = classify(peeled.body, prefixed=peeled.captured_at is not None)
        draft.outcome = TOO_LONG
        if draft.is_record:
            draft.flags.append(TOO_LONG)
            self._hold(line_no, peeled, draft)
            self._flush(out)
        else:
            self._not_a_record(line_no, peeled, draft, out)

    def _close(self, out: list[LogRecord]) -> None:
        if self._join is not None:
            self._end_join(out)
        for key in sorted(self._cri, key=lambda k: self._cri[k].line_no):
            parts = self._cri[key]
            merged = parts.merged()
            merged.flags.append("cri_unterminated")
            self._logical(parts.line_no, merged, len(parts.texts) - 1, out, join=False)
        self._cri.clear()
        self._flush(out)

    # -- counting --------------------------------------------------------------------------

    def _count(self, outcome: str, line_no: int, lines: int = 1) -> None:
        self.tally[outcome] += lines
        if self.policy == "strict" and outcome not in BENIGN_OUTCOMES:
            raise ParseError(self.source.source_id, line_no, outcome)

    def _unparsed(self, line_no: int, peeled: Peeled, reason: str) -> LogRecord:
        pod, container, pod_namespace = self._identity(peeled, Draft())
        return LogRecord(
            self.source.source_id, line_no, "unparsed", "", peeled.text.strip(), None,
            captured_at=peeled.captured_at, pod=pod, container=container,
            prefixes=tuple(peeled.prefixes), flags=(reason, *peeled.flags), raw=peeled.text,
            pod_namespace=pod_namespace, line_hint=peeled.line_hint,
        )  # fmt: skip

    def _recover(self, line_no: int, exc: Exception) -> None:
        """A bug must not lose lines: drop pending state and count what is unaccounted for."""
        self.internal_errors.append(f"{self.source.source_id}:{line_no}: {exc!r}")
        self._cri.clear()
        self._join = None
        self._held = None
        missing = self._fed - self.tally.lines()
        if missing > 0:
            self.tally[TEXT_UNKNOWN] += missing


def _skewed(time: Timestamp, captured: Timestamp) -> bool:
    return abs((captured.at - time.at).total_seconds()) > _SKEW_SECONDS
