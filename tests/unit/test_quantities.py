"""Kubernetes resource quantities (domain/quantities.py): decimal and binary suffixes,
exponents, fractions and inputs that are not quantities."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lockstep.domain.quantities import binary_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", Decimal(0)),
        ("1", Decimal(1)),
        ("+3", Decimal(3)),
        ("2.5", Decimal("2.5")),
        (".5", Decimal("0.5")),
        ("1.", Decimal(1)),
        # decimal SI suffixes
        ("100n", Decimal("0.0000001")),
        ("250u", Decimal("0.00025")),
        ("500m", Decimal("0.5")),
        ("1500m", Decimal("1.5")),
        ("2k", Decimal(2000)),
        ("20M", Decimal(20_000_000)),
        ("2G", Decimal(2_000_000_000)),
        ("3T", Decimal(3 * 10**12)),
        ("4P", Decimal(4 * 10**15)),
        # binary suffixes
        ("1Ki", Decimal(1024)),
        ("512Mi", Decimal(512 * 1024 * 1024)),
        ("1.5Gi", Decimal(3 * 2**29)),
        ("2Ti", Decimal(2 * 2**40)),
        ("1Pi", Decimal(2**50)),
        # exponents
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("2e+2", Decimal(200)),
        ("5e-3", Decimal("0.005")),
        ("1.5e2", Decimal(150)),
        ("12e0", Decimal(12)),
    ],
)
def test_quantity_value(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


def test_result_is_exact_not_floating_point() -> None:
    value = parse_quantity("0.1Gi")
    assert isinstance(value, Decimal)
    assert value == Decimal("0.1") * 1024**3
    assert parse_quantity("100m") * 3 == Decimal("0.3")


def test_binary_and_decimal_suffixes_differ() -> None:
    assert parse_quantity("1Mi") - parse_quantity("1M") == 48_576
    assert parse_quantity("1Gi") > parse_quantity("1G")


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "1 ",
        " 1",
        "-1",
        "abc",
        "Mi",
        ".",
        "1.2.3",
        "1,5",
        "0x10",
        "1Mib",
        "1mi",
        "1K",  # Kubernetes spells kilo with a lower-case k
        "1kb",
        "1e",
        "1e+",
        "1e3Mi",
        "1Mi2",
        "\u0661",  # ARABIC-INDIC DIGIT ONE
    ],
)
def test_not_a_quantity(text: str) -> None:
    with pytest.raises(ValueError, match=r"quantity|unit"):
        parse_quantity(text)


def test_unknown_unit_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="unknown unit 'K'"):
        parse_quantity("1K")


@pytest.mark.parametrize(
    ("text", "expected"), [("2E", Decimal(2 * 10**18)), ("1Ei", Decimal(2**60))]
)
def test_exa_suffixes(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


def test_huge_exponent_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_quantity("1e1000000")


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (209715200, "200Mi"),
        (3 * 2**30, "3Gi"),
        (1536, "1536"),
        (0, "0"),
        (1000, "1000"),
        (2**20 + 2**10, "1025Ki"),
    ],
)
def test_binary_quantity_uses_the_largest_unit_that_divides(count: int, text: str) -> None:
    assert binary_quantity(count) == text
    assert parse_quantity(text) == count
