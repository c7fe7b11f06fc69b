"""The report's time axis: linear within busy stretches, long idle gaps folded into breaks.

A VM created days before its incident would otherwise squeeze every interesting row into a few
pixels. Times are microseconds after the axis origin; ``x`` is the folded coordinate the chart
draws in (also µs, so zooming keeps durations readable within a segment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GAP_MIN_US = 60_000_000  # never fold less than a minute
GAP_SHARE = 10  # fold gaps longer than 1/10 of the whole range
BREAK_SHARE = 16  # a fold is drawn 1/16 of the unfolded total wide
PAD_SHARE = 40  # pad each busy stretch by 1/40 of its length ...
PAD_MIN_US = 500_000  # ... and at least half a second


@dataclass(frozen=True)
class Segment:
    """A busy stretch ``[start, end)`` drawn linearly from ``x``."""

    start: int
    end: int
    x: int

    @property
    def x_end(self) -> int:
        return self.x + self.end - self.start


@dataclass(frozen=True)
class Axis:
    segments: tuple[Segment, ...]
    break_width: int

    def x(self, t: int) -> int:
        """The folded coordinate of time ``t`` (a time inside a fold is interpolated)."""
        first = self.segments[0]
        if t <= first.start:
            return first.x - (first.start - t)
        for seg, nxt in zip(self.segments, self.segments[1:], strict=False):
            if t <= seg.end:
                return seg.x + t - seg.start
            if t < nxt.start:
                return seg.x_end + (t - seg.end) * self.break_width // (nxt.start - seg.end)
        last = self.segments[-1]
        return last.x + t - last.start

    @property
    def width(self) -> int:
        return self.segments[-1].x_end

    def shape(self) -> dict[str, Any]:
        return {
            "segments": [{"start": s.start, "end": s.end, "x": s.x} for s in self.segments],
            "breakWidth": self.break_width,
            "width": self.width,
        }


def build_axis(intervals: list[tuple[int, int]]) -> Axis:
    """Fold every idle gap longer than a minute and a tenth of the range into a break."""
    if not intervals:
        return Axis((Segment(0, 1_000_000, 0),), 0)
    ordered = sorted((a, max(a, b)) for a, b in intervals)
    total = max(b for _, b in ordered) - ordered[0][0]
    threshold = max(GAP_MIN_US, total // GAP_SHARE)
    stretches = _stretches(ordered, threshold)
    padded = [_pad(a, b) for a, b in stretches]
    kept = sum(b - a for a, b in padded)
    break_width = max(PAD_MIN_US, kept // BREAK_SHARE) if len(padded) > 1 else 0
    return Axis(tuple(_place(padded, break_width)), break_width)


def _stretches(ordered: list[tuple[int, int]], threshold: int) -> list[tuple[int, int]]:
    out = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = out[-1]
        if start - last_end > threshold:
            out.append((start, end))
        else:
            out[-1] = (last_start, max(last_end, end))
    return out


def _pad(start: int, end: int) -> tuple[int, int]:
    pad = max(PAD_MIN_US, (end - start) // PAD_SHARE)
    return start - pad, end + pad


def _place(padded: list[tuple[int, int]], break_width: int) -> list[Segment]:
    out: list[Segment] = []
    x = 0
    for start, end in padded:
        out.append(Segment(start, end, x))
        x += end - start + break_width
    return out
