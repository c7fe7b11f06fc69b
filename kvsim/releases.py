"""Where another release prints each call site kvsim imitates: kvsim's controllers are v1.9.0's
and cite v1.9.0 positions; a log "as release R printed it" puts each line at R's position of the
same call site (same file, level and format), from the call-site catalog that tools/callsites.py
generates from each tag (``kvtrace/timeline/callsites.json``, read here as data).

Only the positions change: the behaviour stays v1.9.0's. A call site kvsim prints that R does not
have (a message added, removed or reworded since) raises :class:`ReleaseGap`: kvsim cannot write
that line as R did, and says so rather than invent it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SIMULATED = "v1.9.0"
CATALOG = Path(__file__).resolve().parent.parent / "kvtrace" / "timeline" / "callsites.json"


class ReleaseGap(Exception):
    """A call site kvsim prints has no counterpart in the chosen release."""


@lru_cache(maxsize=64)
def positions(release: str) -> dict[str, str]:
    """``file:line`` at v1.9.0 → ``file:line`` at ``release``, for every call site both have."""
    data = json.loads(CATALOG.read_text(encoding="utf-8"))
    if release not in data["releases"]:
        raise ReleaseGap(f"{release} is not a release of the call-site catalog")
    found: dict[str, str] = {}
    for site in data["sites"]:
        here, there = site["positions"].get(SIMULATED), site["positions"].get(release)
        if here is not None and there is not None:
            found[f"{site['file']}:{here}"] = f"{site['file']}:{there}"
    return found


def printed_at(pos: str, release: str) -> str:
    """Where ``release`` prints the call site v1.9.0 prints at ``pos``."""
    if release == SIMULATED:
        return pos
    moved = positions(release).get(pos)
    if moved is None:
        raise ReleaseGap(f"{release} has no call site like v1.9.0's {pos}")
    return moved
