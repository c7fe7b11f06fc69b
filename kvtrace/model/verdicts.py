"""Rules and verdicts: the shapes every check returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvtrace.model.facts import Facts

EXPLAINED = "explained"
VIOLATION = "violation"
UNVERIFIABLE = "unverifiable"

MARKS = {EXPLAINED: "✓", VIOLATION: "✗", UNVERIFIABLE: "?"}
SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Finding:
    """What a check found: a status, one line saying why, and the rows it rests on."""

    status: str
    why: str
    rows: tuple[int, ...] = ()


def explained(why: str, *rows: int) -> Finding:
    return Finding(EXPLAINED, why, rows)


def violated(why: str, *rows: int) -> Finding:
    return Finding(VIOLATION, why, rows)


def unverifiable(why: str, *rows: int) -> Finding:
    return Finding(UNVERIFIABLE, why, rows)


INCONSISTENT = (
    "v1.9.0's code cannot print this, so a line is lost, duplicated or foreign, or the binary is "
    "not the release's code"
)


def inconsistent(why: str, *rows: int) -> Finding:
    """The evidence contradicts something the code guarantees by its shape: not a controller
    failure but evidence to examine (an open question, never a violation)."""
    return Finding(UNVERIFIABLE, f"{why}: {INCONSISTENT}", rows)


Check = Callable[["Facts"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """One behaviour of the controller: id, severity, one sentence, source positions, a check."""

    id: str
    severity: str
    sentence: str
    positions: tuple[str, ...]
    check: Check
    # True when v1.9.0's code guarantees the behaviour by its shape (the printed strategy is the
    # switch variable, stops are gated, no branch starts after a stop): then only a lost,
    # duplicated or foreign line, or a binary that is not the release's code, can break it.
    by_construction: bool = False


@dataclass(frozen=True)
class Verdict:
    """A finding of one rule: explained, violated, or not checkable with what is missing."""

    rule: str
    severity: str
    status: str
    why: str
    rows: tuple[int, ...] = ()  # indices into Timeline.rows: the evidence
    release: str = ""  # the KubeVirt release(s) judged against (kvtrace.model.releases.judge)

    @property
    def mark(self) -> str:
        return MARKS[self.status]


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
