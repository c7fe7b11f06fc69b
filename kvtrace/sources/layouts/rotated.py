"""Which container instance a rotated kubelet file (``logs/rotated/<n>.log.<stamp>``) belongs to.

The kubelet rotates the log of the running container and keeps the last dead one's for
``kubectl logs --previous``: a rotated file is either. Its name's number is the restart count,
but the tree does not say the current one's, so the times decide: a rotated file whose first line
comes after the last line of ``previous.log`` is the current instance's, one that does not is the
previous instance's; with no ``previous.log`` the container has one instance. Rows of a rotated
file are then named as the file they continue, and the model never reads two instances as one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kvtrace.sources.safety import DECODE_ERRORS, compression_of, open_capped
from parsers.peel import TIME_PREFIX
from parsers.timestamps import parse_time

_TAIL = 64 * 1024
_PREVIOUS = ("previous.insecure.log", "previous.log", "previous.log.gz")


def instance_of(rotated: Path, cap: int) -> str | None:
    """``current``, ``previous`` or None (times unreadable) for one rotated file."""
    logs = rotated.parent.parent
    previous = next((logs / name for name in _PREVIOUS if (logs / name).is_file()), None)
    if previous is None:
        return "current"
    ended, began = _last_time(previous, cap), _first_time(rotated, cap)
    if ended is None or began is None:
        return None
    return "current" if began > ended else "previous"


def _first_time(path: Path, cap: int) -> float | None:
    try:
        with open_capped(path, cap, str(path)) as stream:
            for line in stream:
                stamp = _stamp(line)
                if stamp is not None:
                    return stamp
    except DECODE_ERRORS:
        return None
    return None


def _last_time(path: Path, cap: int) -> float | None:
    try:
        if compression_of(path) is None:  # a plain file: its tail is enough
            with path.open("rb") as plain:
                plain.seek(max(0, path.stat().st_size - _TAIL))
                return _last_stamp(plain)
        with open_capped(path, cap, str(path)) as stream:
            return _last_stamp(stream)
    except DECODE_ERRORS:
        return None


def _last_stamp(lines: Iterable[bytes]) -> float | None:
    last = None
    for line in lines:
        last = _stamp(line) or last
    return last


def _stamp(line: bytes) -> float | None:
    match = TIME_PREFIX.match(line.decode("utf-8", errors="replace"))
    stamp = parse_time(match.group(1)) if match else None
    return stamp.at.timestamp() if stamp is not None else None
