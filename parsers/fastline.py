"""The common line, read fast: one KubeVirt JSON object, bare or behind a kubelet/CRI prefix.

Nearly every line of a virt-controller log has one shape: ``kubectl logs --timestamps`` or the
kubelet's CRI file prefix (``<RFC 3339 time> [stderr F ]``) or nothing, then one JSON object
that go-kit wrote on one line. :class:`FastLogParser` reads such a line in one step — a bytes
regex for the prefix, orjson for the object, the record built directly — and hands every other
line to :class:`~parsers.logstream.LogParser`, whose state (held record, joins, CRI parts, klog
anchors) it shares and keeps. A line is taken only when the full parser would take the same
path for it: no pending join or CRI part, valid UTF-8, no ANSI or BOM, no markdown damage, a
strict parse to an object that is not a stern envelope, a prefix time inside the plausible
range. Everything the full path computes for such a line (draft fields, flags, outcome, skew,
the klog anchors) is computed here by the same functions, so the record and the tally are the
same (``tests/test_fastline.py`` compares the two line for line).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any

import orjson

from parsers.held import Held
from parsers.kvjson import SHAPE, draft_from_object
from parsers.kvjson import _identity_flags as identity_flags
from parsers.logstream import LogParser, _skewed
from parsers.peel import TIME_PREFIX
from parsers.records import RECORD, TIME_OUT_OF_RANGE, LogRecord, SourceInfo, Timestamp
from parsers.timestamps import in_range, is_fully_dated, parse_time, resolution_for

_PREFIX = re.compile(TIME_PREFIX.pattern.encode(), re.ASCII)
_KUBELET: tuple[str, ...] = ("kubelet",)
_CRI: tuple[str, ...] = ("cri",)
_STDOUT: tuple[str, ...] = ("stdout",)


class _Ready(Held):
    """A record finished on arrival; stack lines may still attach to it, as to any JSON line
    (a JSON record never opens a klog ``key=<`` value)."""

    __slots__ = ("ready",)

    def __init__(self, ready: LogRecord) -> None:
        self.ready = ready
        self.line_no = ready.line_no
        self.stack: list[str] = []

    @property
    def open_key(self) -> bool:
        return False

    def add_line(self, body: str) -> None:
        self.stack.append(body)

    def record(self, source_id: str) -> LogRecord:
        return replace(self.ready, stack="\n".join(self.stack)) if self.stack else self.ready


class FastLogParser(LogParser):
    """:class:`LogParser` with the common line read in one step (same records, same tally)."""

    fast_lines = 0  # lines the fast path took (a figure for benchmarks, not part of the tally)

    def __init__(self, source: SourceInfo, **options: Any) -> None:
        super().__init__(source, **options)
        self._seconds: dict[str, datetime | None] = {}

    def _feed(self, line_no: int, line: bytes, out: list[LogRecord]) -> None:
        if (
            self._join is not None
            or len(line) > self.max_line
            or not self._fast(line_no, line, out)
        ):
            super()._feed(line_no, line, out)

    def _fast(self, line_no: int, line: bytes, out: list[LogRecord]) -> bool:
        """Read the line if it has the common shape; False, with nothing changed, if not."""
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.endswith(b"}") or b"\x1b" in line:
            return False
        shape = self._prefix(line)
        if shape is None:
            return False
        start, captured_text, stream = shape
        try:
            text = line.decode()
            obj = orjson.loads(line[start:])
        except ValueError:  # UnicodeDecodeError and orjson.JSONDecodeError
            return False
        if not isinstance(obj, dict) or _stern(obj):
            return False
        captured = None
        if captured_text is not None:
            captured = _utc_time(captured_text, self._seconds) or parse_time(captured_text)
        if captured_text is not None and captured is None:
            return False  # an out-of-range prefix: the full path flags it
        self._flush(out)
        self._hold_ready(line_no, text, obj, captured, stream)
        self.fast_lines += 1
        return True

    def _prefix(self, line: bytes) -> tuple[int, str | None, str | None] | None:
        """(body offset, capture time text, CRI stream) of a bare or prefixed JSON line."""
        if line[:1] == b"{":
            return 0, None, None
        if not line[:1].isdigit():
            return None
        match = _PREFIX.match(line)
        if match is None or line[match.end() : match.end() + 1] != b"{":
            return None
        if not line[: match.end()].isascii():
            return None
        stream = match.group(2)
        if stream is not None and (match.group(3) == b"P" or (None, stream.decode()) in self._cri):
            return None  # a partial part, or the final part of pending ones: joined in full
        return match.end(), match.group(1).decode(), stream.decode() if stream else None

    def _hold_ready(
        self,
        line_no: int,
        text: str,
        obj: dict[str, Any],
        captured: Timestamp | None,
        stream: str | None,
    ) -> None:
        """Hold the record of a common line: the draft, dating, count and identity of the full
        path (``LogParser._hold``, ``_date``, ``_identity``; ``Held.record``)."""
        fields = _plain_fields(obj, self._seconds)
        if fields is None:
            draft = draft_from_object(obj, SHAPE)
            fields = (
                draft.level, draft.msg, draft.time, draft.pos, draft.component, draft.namespace,
                draft.name, draft.kind, draft.uid, draft.reason, draft.flags,
                tuple(sorted(draft.extra)),
            )  # fmt: skip
        level, msg, time, pos, component, namespace, name, kind, uid, reason, found, extra = fields
        flags = ["stdout", *found] if stream == "stdout" else found
        outcome = TIME_OUT_OF_RANGE if TIME_OUT_OF_RANGE in found else RECORD
        if time is not None:
            self._last_time = time
            if is_fully_dated(time):
                self._last_dated = time.at
            if captured is not None and _skewed(time, captured):
                flags.append("capture_skew")
        if captured is not None:
            self._last_dated = captured.at
        self._count(outcome, line_no)
        pod, container, pod_namespace = self._context or (
            self.source.pod,
            self.source.container,
            self.source.namespace,
        )
        prefixes = () if captured is None else (_CRI if stream is not None else _KUBELET)
        record = LogRecord(
            self.source.source_id, line_no, SHAPE, level, msg, time, pos,
            component, namespace, name, kind, uid, reason,
            captured_at=captured, pod=pod, container=container, prefixes=prefixes,
            flags=tuple(flags), extra=extra, raw=text, pod_namespace=pod_namespace,
        )  # fmt: skip
        self._held = _Ready(record)


def _stern(obj: dict[str, Any]) -> bool:
    """A stern ``-o json`` envelope: the full path unwraps it."""
    return isinstance(obj.get("message"), str) and "podName" in obj


_PLAIN_LEVELS = frozenset({"info", "warning", "error"})
_PLAIN_KEYS = frozenset(
    {"component", "kind", "level", "msg", "name", "namespace", "pos", "reason", "timestamp", "uid"}
)
Fields = tuple[
    str, str, Timestamp | None, str | None, str | None, str | None, str | None, str | None,
    str | None, str | None, list[str], tuple[tuple[str, str], ...],
]  # fmt: skip


def _plain_fields(obj: dict[str, Any], seconds: dict[str, datetime | None]) -> Fields | None:
    """The record fields of a go-kit object of the usual kind — known keys, string values, a
    canonical level, a ``…ss.ffffffZ`` time — as :func:`~parsers.kvjson.draft_from_object`
    gives them; None for any other object (the caller asks that function)."""
    if not _PLAIN_KEYS.issuperset(obj) or not all(v.__class__ is str for v in obj.values()):
        return None
    if obj.get("level") not in _PLAIN_LEVELS:
        return None
    get = obj.get
    time = _utc_time(get("timestamp"), seconds)
    if time is None:
        return None
    name, uid = get("name") or None, get("uid") or None
    flags: list[str] = []
    if name is not None or uid is not None:
        identity_flags(name, uid, flags)
    msg = get("msg")
    return (
        obj["level"], "" if msg is None else msg.strip(), time, get("pos") or None,
        get("component") or None, get("namespace") or None, name, get("kind") or None, uid,
        get("reason") or None, flags, (),
    )  # fmt: skip


def _utc_time(text: str | None, seconds: dict[str, datetime | None]) -> Timestamp | None:
    """:func:`~parsers.timestamps.parse_time` of ``YYYY-MM-DDThh:mm:ss.f…Z`` (1-9 digits), each
    second parsed once; None for any other text or a refused time (the caller's full path
    decides those)."""
    if text is None or len(text) < 22 or text[19] != "." or text[-1] != "Z":
        return None
    fraction = text[20:-1]
    if not (fraction.isascii() and fraction.isdigit()):
        return None
    second = text[:19]
    if second not in seconds:
        if len(seconds) > 1 << 16:
            seconds.clear()
        seconds[second] = _second(second)
    base = seconds[second]
    if base is None:
        return None
    micros = int(fraction[:6].ljust(6, "0"))
    return Timestamp(base.replace(microsecond=micros), resolution_for(len(fraction)))


def _second(text: str) -> datetime | None:
    """The second of an in-range ``YYYY-MM-DDThh:mm:ss`` (UTC), else None."""
    if text[10] != "T" or not text.isascii():
        return None
    try:
        at = datetime.fromisoformat(text + "+00:00")
    except ValueError:
        return None
    return at if in_range(at) else None
