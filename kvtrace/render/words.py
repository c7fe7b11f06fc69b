"""How counts, durations and byte sizes read in kvtrace's text: ``1 row``, ``2 rows``;
``3d18h52m``; ``400Mi`` when exact, else the exact bytes, as Kubernetes prints a quantity."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parsers.quantity import BINARY_SI, format_quantity, quantity_of

if TYPE_CHECKING:
    from parsers.records import Timestamp

_IRREGULAR = {"VM": "VMs", "VMI": "VMIs", "is": "are", "was": "were"}


def count(n: int, word: str, many: str | None = None) -> str:
    """``1 row`` / ``0 rows`` / ``2 log sources``; ``many`` for an irregular plural."""
    return f"{n} {word if n == 1 else (many or _IRREGULAR.get(word) or _plural(word))}"


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


_UNITS = (("d", 86400), ("h", 3600), ("m", 60))


def duration(seconds: float, uncertain: bool = False) -> str:
    """A span as a reader takes it in: under a minute with the milliseconds the evidence has
    (``1.117s``; whole seconds when ``uncertain``), else its three largest units, kubectl's
    way (``11m54s``, ``2h26m55s``, ``3d18h52m``). ``~`` marks a span between times known to
    the second only."""
    sign = "-" if seconds < 0 else ""
    left = abs(seconds)
    mark = "~" if uncertain else ""
    if left < 60:
        shown = f"{round(left)}s" if uncertain else f"{left:.3f}s"
        return f"{mark}{sign}{shown}"
    whole = round(left) if uncertain else int(left)  # known to the second: the nearest one
    parts: list[str] = []
    for unit, size in _UNITS:
        amount, whole = divmod(whole, size)
        if amount or parts:
            parts.append(f"{amount}{unit}")
    parts.append(f"{whole}s")
    return mark + sign + "".join(parts[:3])


def byte_size(value: int) -> str:
    """``280Mi``, ``1536Ki``, or the exact bytes (``419430401``): Kubernetes' canonical form of
    a binary quantity, never a rounded decimal."""
    return format_quantity(quantity_of(value, BINARY_SI))


def delta(previous: Timestamp | None, current: Timestamp | None) -> str:
    """ΔT between two rows with the precision both times have: ``+0.190112`` between µs times,
    ``+0.190`` when one is known to the millisecond, ``~+27s`` when one is known to the second
    only; ``+54m21.200715s`` past a minute."""
    if previous is None or current is None:
        return ""
    seconds = (current.at - previous.at).total_seconds()
    coarsest = max(previous.resolution_us, current.resolution_us)
    sign = "-" if seconds < 0 else "+"
    if coarsest >= 1_000_000:
        return "~" + sign + duration(abs(seconds), uncertain=True).lstrip("~")
    digits = 3 if coarsest >= 1_000 else 6
    left = abs(seconds)
    if left < 60:
        return f"{sign}{left:.{digits}f}"
    return f"{sign}{_minutes(int(left // 60))}{left % 60:.{digits}f}s"


def _minutes(minutes: int) -> str:
    """``54m``, ``2h31m``, ``2d0h5m``: every unit from the largest down to minutes."""
    days, rest = divmod(minutes, 1440)
    hours, left = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h{left}m"
    return f"{hours}h{left}m" if hours else f"{left}m"
