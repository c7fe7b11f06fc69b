"""Latency distributions as small static SVG charts: a box (quartiles), whiskers (min–max), a
median line and one dot per VMI, each dot titled with its VM. Drawn here, not in the page's
script, so the check page shows its numbers even where script is off."""

from __future__ import annotations

from statistics import median, quantiles
from typing import Any

from kvtrace.render.html_page import text
from kvtrace.render.words import count

WIDTH, HEIGHT, LEFT, RIGHT = 440, 84, 12, 20
NICE = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600)


def distribution(values: list[dict[str, Any]]) -> dict[str, Any]:
    """Summary numbers of ``[{"vm": key, "seconds": s}, …]`` (already in a stable order)."""
    seconds = sorted(v["seconds"] for v in values)
    if not seconds:
        return {"count": 0, "values": values}
    q1, _, q3 = (
        quantiles(seconds, n=4, method="inclusive") if len(seconds) > 1 else [seconds[0]] * 3
    )
    return {
        "count": len(seconds),
        "min": seconds[0],
        "p25": round(q1, 3),
        "p50": round(median(seconds), 3),
        "p75": round(q3, 3),
        "max": seconds[-1],
        "values": values,
    }


def _scale_max(largest: float) -> int:
    return next((n for n in NICE if n >= largest), int(largest) + 1)


def distribution_svg(title: str, dist: dict[str, Any]) -> str:
    caption = f"{text(title)} <small>({count(dist['count'], 'VMI')})</small>"
    if not dist["count"]:
        return f'<figure class="latency"><figcaption>{caption}</figcaption><p>no data</p></figure>'
    top = _scale_max(dist["max"])

    def x(v: float) -> str:
        return f"{LEFT + (WIDTH - LEFT - RIGHT) * v / top:.1f}"

    parts = [
        f'<line class="whisker" x1="{x(dist["min"])}" x2="{x(dist["max"])}" y1="30" y2="30"/>',
        f'<rect class="box" x="{x(dist["p25"])}" y="18" height="24" '
        f'width="{max(float(x(dist["p75"])) - float(x(dist["p25"])), 1):.1f}"/>',
        f'<line class="median" x1="{x(dist["p50"])}" x2="{x(dist["p50"])}" y1="16" y2="44"/>',
        *(_dot(x(v["seconds"]), n, v) for n, v in enumerate(dist["values"])),
        f'<line class="axis-line" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="58" y2="58"/>',
        *(_tick(x(v), v) for v in (0, top / 2, top)),
    ]
    numbers = f"p50 {dist['p50']:g}s · p75 {dist['p75']:g}s · max {dist['max']:g}s"
    return (
        f'<figure class="latency"><figcaption>{caption}</figcaption>'
        f'<svg class="dist" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        f"{''.join(parts)}</svg><div>{text(numbers)}</div></figure>"
    )


def _dot(x: str, n: int, value: dict[str, Any]) -> str:
    y = 30 + (n % 5 - 2) * 3  # a little vertical jitter, deterministic, so equal values show
    label = f"{value['vm']}: {value['seconds']:g}s"
    return f'<circle class="dot" cx="{x}" cy="{y}" r="3"><title>{text(label)}</title></circle>'


def _tick(x: str, seconds: float) -> str:
    return f'<text x="{x}" y="74" text-anchor="middle">{seconds:g}s</text>'
