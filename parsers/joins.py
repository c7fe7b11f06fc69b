"""Lines that belong together: CRI `P` (partial) parts up to their `F` line, and JSON objects
re-wrapped over several lines by a paste (at most 50 lines / 64 KiB)."""

from __future__ import annotations

from dataclasses import replace

from parsers.classify import classify
from parsers.draft import STACK_CONT, Draft
from parsers.kvjson import draft_from_object, is_cut_off, repair_ladder, salvage
from parsers.peel import Peeled
from parsers.records import JSON_INVALID, TEXT_UNKNOWN

MAX_JOIN_LINES = 50
MAX_JOIN_BYTES = 64 * 1024
_TRANSPORT = frozenset({"path", "kubectl_prefix", "cri", "kubelet"})


class CriParts:
    """Consecutive `P` parts of one CRI stream; the record takes the first part's time."""

    __slots__ = ("bodies", "cap", "capped", "first", "line_no", "size", "texts")

    def __init__(self, line_no: int, first: Peeled, cap: int) -> None:
        self.line_no, self.first, self.cap = line_no, first, cap
        self.bodies, self.texts = [first.body], [first.text]
        self.size, self.capped = len(first.body), False

    def add(self, peeled: Peeled) -> None:
        self.texts.append(peeled.text)
        if self.size + len(peeled.body) > self.cap:
            self.capped = True
            return
        self.bodies.append(peeled.body)
        self.size += len(peeled.body)

    def merged(self) -> Peeled:
        flags = [*self.first.flags, *(["too_long"] if self.capped else [])]
        return replace(
            self.first,
            text="\n".join(self.texts),
            body="".join(self.bodies),
            prefixes=list(self.first.prefixes),
            flags=flags,
            cri_partial=False,
        )


def accepts_fragment(peeled: Peeled) -> bool:
    """Whether a line can be the middle or end of a re-wrapped JSON object: no transport
    prefix, not a fence, and not a known shape of its own."""
    if peeled.markdown_only or not _TRANSPORT.isdisjoint(peeled.prefixes):
        return False
    if not peeled.body.strip():
        return True
    draft = classify(peeled.body, fallback=False)
    return draft.outcome == TEXT_UNKNOWN or draft.control == STACK_CONT


class JsonJoin:
    """A line starting with `{` that was cut off, plus the lines that may complete it."""

    __slots__ = ("draft", "fragments", "line_no", "size", "start")

    def __init__(self, line_no: int, start: Peeled, draft: Draft) -> None:
        self.line_no, self.start, self.draft = line_no, start, draft
        self.fragments: list[tuple[int, Peeled]] = []
        self.size = len(start.body)

    def add(self, line_no: int, peeled: Peeled) -> None:
        self.fragments.append((line_no, peeled))
        self.size += len(peeled.text)

    def full(self) -> bool:
        return len(self.fragments) + 1 >= MAX_JOIN_LINES or self.size > MAX_JOIN_BYTES

    def merged(self) -> Peeled:
        texts = [self.start.text, *(peeled.text for _, peeled in self.fragments)]
        return replace(self.start, text="\n".join(texts))

    def hard_wrapped(self) -> bool:
        """Every line but the last as long as the first: a terminal cut the line at its width,
        anywhere, even inside a string, so the pieces join with nothing between them."""
        widths = [len(self.start.text), *(len(peeled.text) for _, peeled in self.fragments)]
        return len(widths) > 1 and len(set(widths[:-1])) == 1 and widths[-1] <= widths[0]

    def attempt(self) -> Draft | None:
        """The joined object once its brackets balance; None while it is still open. Lines are
        re-joined with nothing when hard-wrapped at a terminal's width, else with a space first
        (a word-wrapped paste), then with nothing."""
        pieces = [self.start.body, *(peeled.text for _, peeled in self.fragments)]
        spaced = " ".join(piece.strip() for piece in pieces if piece.strip())
        if is_cut_off(spaced):
            return None
        joined = "".join(pieces)
        candidates = (joined, spaced) if self.hard_wrapped() else (spaced, joined)
        for candidate in candidates:
            obj, repairs = repair_ladder(candidate, mid_line_times=False)
            if obj is not None:
                draft = draft_from_object(obj)
                draft.repairs = [*repairs, "multiline_join"]
                return draft
        draft = salvage(spaced)
        draft.outcome, draft.joinable = JSON_INVALID, False
        draft.repairs.append("multiline_join")
        return draft
