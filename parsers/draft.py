"""A mutable, half-built record: what a body parser found before the stream adds provenance."""

from __future__ import annotations

from dataclasses import dataclass, field

from parsers.records import RECORD, Timestamp

# Control kinds: how the stream state machine treats a classified line (besides its outcome).
STACK_START = "stack_start"  # `goroutine N [`, `panic: `, `fatal error: `
STACK_CONT = "stack_cont"  # TAB-indented, Go frame, `created by`, `[signal`, lone ` >`
DUMP_START = "dump_start"
DUMP_END = "dump_end"
HEADER = "header"


@dataclass(slots=True)
class Draft:
    """Fields of one logical line. ``outcome`` is the tally code the line will be counted as."""

    outcome: str = RECORD
    shape: str = ""  # "" for lines that are not records
    level: str = ""
    msg: str = ""
    time: Timestamp | None = None
    pos: str | None = None
    component: str | None = None
    namespace: str | None = None
    name: str | None = None
    kind: str | None = None
    uid: str | None = None
    reason: str | None = None
    flags: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    extra: list[tuple[str, str]] = field(default_factory=list)
    control: str = ""
    open_key: str | None = None  # structured klog `key=<` still open at the end of the line
    klog_clock: tuple[str, str] | None = None  # (MMDD, hh:mm:ss.ffffff) awaiting a year
    joinable: bool = False  # JSON cut off mid-object: later lines may complete it (parsers.joins)
    pod: str | None = None
    container: str | None = None
    pod_namespace: str | None = None
    captured_at: Timestamp | None = None

    @property
    def is_record(self) -> bool:
        """Whether this line yields a record in every policy (a parse or a salvage)."""
        return self.shape != ""


def unknown(outcome: str, msg: str = "") -> Draft:
    """A line that is not a record: counted under ``outcome``."""
    return Draft(outcome=outcome, shape="", msg=msg)
