"""Kubernetes resource quantities, parsed and formatted as apimachinery does.

Pure and exact: values are :class:`decimal.Decimal`, never floats. The rules follow
``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go`` ``ParseQuantity`` and
``CanonicalizeBytes``; ``amount.go`` ``AsCanonicalBytes`` / ``AsCanonicalBase1024Bytes``):

- grammar: ``sign? (digits ["." digits?] | "." digits) suffix`` where the suffix is empty, binary
  (``Ki`` … ``Ei``, ×1024ⁿ), decimal SI (``n u m k M G T P E``) or ``e``/``E`` + signed exponent;
- the format follows the suffix: binary → BinarySI, exponent → DecimalExponent, else DecimalSI;
- parsed values are rounded **away from zero** to nano precision (10⁻⁹); BinarySI values are
  capped at 2⁶³−1; a BinarySI value strictly between 0 and 1 becomes DecimalSI;
- ``Value()`` (bytes, whole CPUs) and ``MilliValue()`` round **up** (away from zero).

One deliberate limit: exponents above 100 or below −1000 are rejected (Kubernetes accepts ±2³¹,
but no resource is written that way and huge exponents would make the arithmetic explode).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_UP, Context, Decimal, localcontext

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_BY_POWER = {power // 10: suffix for suffix, power in _BINARY.items()}
_GRAMMAR = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)(.*)", re.ASCII | re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?\d+)", re.ASCII)
_MAX_EXPONENT = 100
_MIN_EXPONENT = -1000
_MAX_LENGTH = 200
_MAX_INT64 = Decimal(2**63 - 1)
_NANO = Decimal("1e-9")
_CONTEXT = Context(prec=400, rounding=ROUND_UP)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity; the message says why and quotes it."""


@dataclass(frozen=True)
class Quantity:
    """An exact quantity and the format Kubernetes would print it in."""

    value: Decimal
    format: str = DECIMAL_SI

    def bytes(self) -> int:
        """``Value()``: the value rounded up to a whole number (bytes, whole CPUs)."""
        return _round_up(self.value)

    def millis(self) -> int:
        """``MilliValue()``: the value × 1000 rounded up (millicores)."""
        return _round_up(self.value * 1000)

    def __str__(self) -> str:
        return format_quantity(self)


def _round_up(value: Decimal) -> int:
    with localcontext(_CONTEXT):
        return int(value.to_integral_value(rounding=ROUND_UP))


def parse_quantity(raw: object) -> Quantity:
    """Parse a manifest value (string, or a YAML int/float) the way ``ParseQuantity`` does."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise QuantityError(f"{raw!r} is not a quantity (expected a string or a number)")
    if isinstance(raw, float) and not math.isfinite(raw):
        raise QuantityError(f"{raw!r} is not a finite quantity")
    text = raw if isinstance(raw, str) else repr(raw)
    if not text:
        raise QuantityError("an empty string is not a quantity")
    if len(text) > _MAX_LENGTH:
        raise QuantityError(f"{text[:20]!r}…: longer than {_MAX_LENGTH} characters")
    found = _GRAMMAR.fullmatch(text)
    if found is None:
        raise QuantityError(f"{text!r} is not a quantity: it must start with a number")
    sign, number, suffix = found.groups()
    scaled, fmt = _apply_suffix(Decimal(number), suffix, text)
    return _normalise(-scaled if sign == "-" else scaled, fmt)


def _apply_suffix(number: Decimal, suffix: str, text: str) -> tuple[Decimal, str]:
    with localcontext(_CONTEXT):
        if suffix in _BINARY:
            return number * (2 ** _BINARY[suffix]), BINARY_SI
        if suffix in _DECIMAL:
            return number.scaleb(_DECIMAL[suffix]), DECIMAL_SI
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            raise QuantityError(
                f"{text!r} is not a quantity: unknown suffix {suffix!r} "
                "(use Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>)"
            )
        power = int(exponent[1])
        if not _MIN_EXPONENT <= power <= _MAX_EXPONENT:
            raise QuantityError(
                f"{text!r}: exponents outside {_MIN_EXPONENT}..{_MAX_EXPONENT} are not supported"
            )
        return number.scaleb(power), DECIMAL_EXPONENT


def _normalise(value: Decimal, fmt: str) -> Quantity:
    """Round away from zero to nano precision, cap BinarySI, demote tiny BinarySI values."""
    with localcontext(_CONTEXT):
        magnitude = abs(value)
        if magnitude != 0 and magnitude.as_tuple().exponent < -9:  # type: ignore[operator]
            magnitude = magnitude.quantize(_NANO, rounding=ROUND_UP)
        if fmt == BINARY_SI and magnitude > _MAX_INT64:
            magnitude = _MAX_INT64
        if fmt == BINARY_SI and 0 < magnitude < 1:
            fmt = DECIMAL_SI
        signed = -magnitude if value < 0 else magnitude
    return Quantity(signed.normalize(_CONTEXT) if signed else Decimal(0), fmt)


def quantity_of(value: int | Decimal, fmt: str = DECIMAL_SI) -> Quantity:
    """A quantity built from a number (``resource.NewQuantity``), rounded like a parse."""
    return _normalise(Decimal(value), fmt)


def format_quantity(quantity: Quantity) -> str:
    """The canonical string apimachinery prints (``Quantity.String()``)."""
    value, fmt = quantity.value, quantity.format
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (abs(value) < 1024 or value != value.to_integral_value()):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        return _base1024(int(value))
    mantissa, exponent = _canonical_base10(value)
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    while exponent > 18:  # beyond E: Kubernetes has no suffix; keep the value exact
        mantissa, exponent = mantissa * 1000, exponent - 3
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


def _base1024(number: int) -> str:
    power = 0
    while number % 1024 == 0 and power < 6:
        number, power = number // 1024, power + 1
    return f"{number}{_BINARY_BY_POWER.get(power, '')}"


def _canonical_base10(value: Decimal) -> tuple[int, int]:
    """Integer mantissa and an exponent that is a multiple of 3 (the largest that fits)."""
    sign, digits, exponent = value.normalize(_CONTEXT).as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)) or "0")
    shift = exponent % 3  # Python's % is floor-based: exponent - shift is a multiple of 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    return (-mantissa if sign else mantissa), exponent


def mebibytes(count: int | float) -> int:
    """Bytes in ``count`` Mi (binary mega)."""
    return int(count * 1024 * 1024)
