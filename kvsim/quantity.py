"""``resource.Quantity`` as v1.9.0's renderer uses it (vendor/k8s.io/apimachinery/pkg/api/resource/
quantity.go at v1.9.0): a value with a format, BinarySI or DecimalSI.

What the launcher pod shows depends on the format as well as the value, so both are kept:

* ParseQuantity (quantity.go:277-356): a binary suffix (``Ki``…``Ei``) gives BinarySI, a
  decimal suffix (``n u m k M G T P E``) or none gives DecimalSI; values are rounded up to nano
  precision. Exponent forms (``1e3``, DecimalExponent) are not rendered by kvsim.
* ``NewQuantity(v, format)`` keeps the format; ``NewScaledQuantity`` is DecimalSI (:785-810).
* ``Add``/``Sub`` keep the receiver's format unless the receiver is zero, which then takes the
  addend's (:600-626). So an overhead that starts from ``NewScaledQuantity(0, Kilo)`` and first
  adds a non-zero page-table term is DecimalSI, and one whose page tables are 0 becomes
  BinarySI with the first Mi constant.
* ``Value`` rounds up to a whole unit (:812-834).
* Printing (CanonicalizeBytes, :424-461): BinarySI as the largest power-of-1024 suffix that
  divides the value, unless |value| < 1024 or the value is not whole (then DecimalSI);
  DecimalSI as the largest power-of-1000 suffix whose mantissa is whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_NAMES = {v: k for k, v in BINARY_SUFFIXES.items()}
_DECIMAL_NAMES = {v: k for k, v in DECIMAL_SUFFIXES.items()}
_TEXT = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)([A-Za-z]*)")
NANO = 10**9


@dataclass(frozen=True)
class Quantity:
    """A quantity in whole nano-units (ParseQuantity keeps nano precision) and its format."""

    nanos: int
    binary: bool = False  # Format BinarySI; otherwise DecimalSI

    @classmethod
    def parse(cls, text: object) -> Quantity:
        """``resource.MustParse``; YAML ints and floats are read as their text."""
        return _parse(str(text))

    @classmethod
    def of(cls, value: int, binary: bool) -> Quantity:
        """``resource.NewQuantity(value, format)``."""
        return cls(value * NANO, binary)

    def plus(self, other: Quantity) -> Quantity:
        """``q.Add(other)``: a zero receiver takes the addend's format."""
        binary = other.binary if self.nanos == 0 else self.binary
        return Quantity(self.nanos + other.nanos, binary)

    def minus(self, other: Quantity) -> Quantity:
        """``q.Sub(other)``: a zero receiver takes the subtrahend's format."""
        binary = other.binary if self.nanos == 0 else self.binary
        return Quantity(self.nanos - other.nanos, binary)

    def whole(self) -> int:
        """``q.Value()``: rounded up (away from zero)."""
        return -(-self.nanos // NANO) if self.nanos >= 0 else self.nanos // NANO

    def scaled(self, exponent: int) -> int:
        """``q.ScaledValue(10^exponent)`` for exponent ≥ 0: rounded up."""
        unit: int = NANO * 10**exponent
        return -(-self.nanos // unit)

    def text(self) -> str:
        """The canonical string the API server stores."""
        return _text(self.nanos, self.binary)


@lru_cache(maxsize=4096)
def _parse(raw: str) -> Quantity:
    match = _TEXT.fullmatch(raw)
    if match is None or (match[3] not in BINARY_SUFFIXES and match[3] not in DECIMAL_SUFFIXES):
        raise ValueError(f"kvsim does not parse the quantity {raw!r}")
    sign, number, suffix = match.groups()
    binary = suffix in BINARY_SUFFIXES
    if binary:
        scale = Fraction(2 ** BINARY_SUFFIXES[suffix])
    else:
        scale = Fraction(10) ** DECIMAL_SUFFIXES[suffix]
    nanos = -(-(Fraction(number) * scale * NANO) // 1)  # rounded up to nano precision
    return Quantity(-nanos if sign == "-" else nanos, binary)


@lru_cache(maxsize=4096)
def _text(nanos: int, binary: bool) -> str:
    if nanos == 0:
        return "0"
    if binary and abs(nanos) >= 1024 * NANO and nanos % NANO == 0:
        number, exponent = nanos // NANO, 0
        while number % 1024 == 0 and exponent < 60:
            number, exponent = number // 1024, exponent + 10
        return f"{number}{_BINARY_NAMES.get(exponent, '')}"
    number, exponent = nanos, -9
    while number % 1000 == 0 and exponent < 18:
        number, exponent = number // 1000, exponent + 3
    return f"{number}{_DECIMAL_NAMES[exponent]}"


ZERO = Quantity(0)


def parse_optional(text: object) -> Quantity | None:
    return None if text is None else Quantity.parse(text)
