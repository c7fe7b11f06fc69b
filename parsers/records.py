"""The small frozen values every parser emits.

A physical input line ends as exactly one *outcome*: ``record`` (a parsed
line), ``continuation`` (merged into the previous record), or one of the skip reasons below.
Parsers count every outcome in a :class:`LineTally`, so nothing is ever dropped silently: the sum
of a tally always equals the number of lines fed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

# Outcome codes: a closed vocabulary. Extend deliberately.
RECORD = "record"
CONTINUATION = "continuation"
BLANK = "blank"
MARKDOWN_ONLY = "markdown_only"
ANNOTATION = "annotation"
FRAMEWORK_HEADER = "framework_header"
DUMP_MARKER = "dump_marker"
JSON_INVALID = "json_invalid"
JSON_TRUNCATED = "json_truncated"
TIME_PARTIAL = "time_partial"
TIME_OUT_OF_RANGE = "time_out_of_range"  # a well-formed time outside the plausible range
TEXT_UNKNOWN = "text_unknown"
TOO_LONG = "too_long"
DUPLICATE = "duplicate"

OUTCOMES = frozenset(
    {
        RECORD,
        CONTINUATION,
        BLANK,
        MARKDOWN_ONLY,
        ANNOTATION,
        FRAMEWORK_HEADER,
        DUMP_MARKER,
        JSON_INVALID,
        JSON_TRUNCATED,
        TIME_PARTIAL,
        TIME_OUT_OF_RANGE,
        TEXT_UNKNOWN,
        TOO_LONG,
        DUPLICATE,
    }
)

# Outcomes that are not problems: structure of the stream rather than damage.
BENIGN_OUTCOMES = frozenset({RECORD, CONTINUATION, BLANK, MARKDOWN_ONLY, DUMP_MARKER})

MICROSECOND = 1
MILLISECOND = 1_000
SECOND = 1_000_000


@dataclass(frozen=True, slots=True)
class Timestamp:
    """A point in time known to lie in ``[at, at + resolution_us)``, always UTC.

    ``flags`` says how certain it is: ``tz_assumed`` (no zone in the source, UTC assumed),
    ``year_inferred`` (klog lines carry no year), ``inherited`` (taken from a neighbour line).
    """

    at: datetime
    resolution_us: int = MICROSECOND
    flags: tuple[str, ...] = ()

    @property
    def end(self) -> datetime:
        return self.at + timedelta(microseconds=self.resolution_us)


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where a log stream came from: a path, a pod and container, or stdin."""

    source_id: str
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    instance: str | None = None  # "current" | "previous" | None (unknown)


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One parsed log line (plus any continuation lines merged into it).

    ``shape`` is one of ``kubevirt_json``, ``klog``, ``logfmt``, ``stdlog``, ``panic``, ``text``.
    Provenance: ``source`` + ``line_no`` (1-based) + ``raw`` (the untouched line, decoded) +
    ``prefixes`` (layers peeled off) + ``repairs`` (named repairs applied to the body).
    """

    source: str
    line_no: int
    shape: str
    level: str
    msg: str
    time: Timestamp | None
    pos: str | None = None
    component: str | None = None
    namespace: str | None = None
    name: str | None = None
    kind: str | None = None
    uid: str | None = None
    reason: str | None = None
    captured_at: Timestamp | None = None
    pod: str | None = None
    container: str | None = None
    prefixes: tuple[str, ...] = ()
    repairs: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    stack: str | None = None
    raw: str = ""
    pod_namespace: str | None = None  # namespace of the emitting pod, when a prefix names it
    line_hint: int | None = None  # line number inside the original file (``grep -n`` prefix)


class ParseError(ValueError):
    """A bad line under ``policy="strict"``: names the source, the line and the outcome code."""

    def __init__(self, source_id: str, line_no: int, reason: str) -> None:
        super().__init__(f"{source_id}:{line_no}: {reason}")
        self.source_id = source_id
        self.line_no = line_no
        self.reason = reason


class LineTally(Counter[str]):
    """Per-outcome line counts for one source. ``sum(tally.values())`` == lines fed."""

    def lines(self) -> int:
        return sum(self.values())

    def problems(self) -> dict[str, int]:
        """Outcomes worth reporting under a table: everything that is not benign."""
        return {k: v for k, v in sorted(self.items()) if k not in BENIGN_OUTCOMES and v}
