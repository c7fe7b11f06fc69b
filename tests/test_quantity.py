"""Kubernetes quantities: apimachinery's parsing vectors, rejects, and Hypothesis round trips."""

from __future__ import annotations

import contextlib
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parsers.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    QuantityError,
    format_quantity,
    parse_quantity,
    quantity_of,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2441084928", 2441084928),
        ("2328Mi", 2441084928),
        ("50M", 50000000),
        ("1.5Gi", 1610612736),
        ("2576980377600m", 2576980378),
        ("1e9", 1000000000),
        (2441084928, 2441084928),
        ("35M", 35000000),
        ("0.5Gi", 536870912),
        ("1E", 10**18),
        ("1E3", 1000),
        (".5Ki", 512),
        ("1.", 1),
    ],
)
def test_section_4_7_bytes(text, value):
    assert parse_quantity(text).bytes() == value


@pytest.mark.parametrize(
    ("text", "millis"),
    [("200m", 200), ("0.5", 500), (0.5, 500), (2, 2000), ("1.6", 1600), ("5m", 5), ("1n", 1)],
)
def test_section_4_7_millicores(text, millis):
    assert parse_quantity(text).millis() == millis


@pytest.mark.parametrize(
    "text", ["1.5 Gi", "1GB", "1KiB", "K", "", " 1", "1 ", "--1", "1.2.3", "Mi", "1e", "1ki"]
)
def test_rejects_what_kubernetes_rejects(text):
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert repr(text) in str(err.value) or "empty" in str(err.value)


@pytest.mark.parametrize("raw", [True, None, [1], float("inf"), float("nan")])
def test_rejects_non_quantities(raw):
    with pytest.raises(QuantityError):
        parse_quantity(raw)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2441084928", "2441084928"),
        ("2328Mi", "2328Mi"),
        ("2Gi", "2Gi"),
        ("1.5Gi", "1536Mi"),
        ("1.6", "1600m"),
        ("0.5", "500m"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("50M", "50M"),
        ("1e3", "1e3"),
        ("1e100", "10e99"),
        ("0.3333333333333333", "333333334n"),
        ("512", "512"),
        ("0.5Ki", "512"),
        ("-1.5", "-1500m"),
        ("0", "0"),
        ("0Mi", "0"),
        ("2576980377600m", "2576980377600m"),
    ],
)
def test_canonical_form_matches_apimachinery(text, canonical):
    assert format_quantity(parse_quantity(text)) == canonical


def test_formats_follow_the_suffix():
    assert parse_quantity("1Gi").format == BINARY_SI
    assert parse_quantity("1G").format == DECIMAL_SI
    assert parse_quantity("1e9").format == DECIMAL_EXPONENT
    assert parse_quantity("0.5Ki").format == BINARY_SI
    assert parse_quantity("0.0001Ki").format == DECIMAL_SI  # below 1: demoted


def test_nano_precision_rounds_away_from_zero():
    assert parse_quantity("0.0000000001").value == Decimal("1e-9")
    assert parse_quantity("-0.0000000001").value == Decimal("-1e-9")


def test_binary_values_are_capped_at_int64():
    assert parse_quantity("16Ei").value == 2**63 - 1


def test_byte_counts_as_binary_si():
    assert str(quantity_of(293601280, BINARY_SI)) == "280Mi"
    assert str(quantity_of(440402280, BINARY_SI)) == "440402280"


_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "n", "u", "m", "k", "M", "G", "T", "e3", "e-2", "E6"]


@st.composite
def quantity_texts(draw: st.DrawFn) -> str:
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.integers(0, 10**12))
    frac = draw(st.one_of(st.just(""), st.from_regex(r"\.[0-9]{0,12}", fullmatch=True)))
    return f"{sign}{whole}{frac}{draw(st.sampled_from(_SUFFIXES))}"


@given(quantity_texts())
def test_canonical_form_parses_back_to_the_same_value(text):
    parsed = parse_quantity(text)
    again = parse_quantity(format_quantity(parsed))
    assert again.value == parsed.value


@given(quantity_texts())
def test_formatting_is_idempotent(text):
    once = format_quantity(parse_quantity(text))
    assert format_quantity(parse_quantity(once)) == once


@given(st.integers(0, 2**62))
def test_byte_counts_round_trip_exactly(count):
    for fmt in (BINARY_SI, DECIMAL_SI):
        assert parse_quantity(format_quantity(quantity_of(count, fmt))).bytes() == count


@given(st.integers(-(10**12), 10**12), st.sampled_from(["m", "", "k", "Ki", "Mi"]))
def test_integer_mantissas_scale_exactly(number, suffix):
    scale = {"m": Decimal("0.001"), "": 1, "k": 1000, "Ki": 1024, "Mi": 1024**2}[suffix]
    assert parse_quantity(f"{number}{suffix}").value == number * scale


@given(st.text(max_size=30))
def test_never_raises_anything_but_quantity_error(text):
    with contextlib.suppress(QuantityError):
        parse_quantity(text)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15))
def test_yaml_floats_parse_like_their_repr(value):
    assert parse_quantity(value).value == parse_quantity(repr(value)).value
