"""Kubernetes resource quantities (`500m`, `20M`, `1.5Gi`, `1e3`) as exact decimals."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

_SUFFIXES: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(
    r"^\+?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"((?P<exponent>[eE][-+]?[0-9]+)|(?P<suffix>[a-zA-Z]*))$"
)
_MAX_EXPONENT = 64
"""Far beyond any real quantity; keeps arithmetic on absurd inputs cheap and exact."""
MAX_QUANTITY = Decimal(2**63 - 1)
"""Kubernetes' largest quantity, in its base unit (bytes, for memory and storage): no quantity
may represent a number greater than 2^63-1 (8Ei less one byte). Far above what any machine
has, so a request over it can never be placed."""
QUANTITY_BOUND = (
    f"must be at most {2**63 - 1} (2^63-1) in its base unit, bytes for memory and storage: "
    "Kubernetes' largest quantity"
)
"""The rule a quantity over `MAX_QUANTITY` breaks."""


def parse_quantity(text: str) -> Decimal:
    """The value of a quantity in base units; `ValueError` when it is not one."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a quantity")
    try:
        number = Decimal(match["number"])
    except InvalidOperation as error:
        raise ValueError(f"{text!r} is not a quantity") from error
    if match["exponent"] is not None:
        exponent = int(match["exponent"][1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise ValueError(f"{text!r} has an exponent beyond ±{_MAX_EXPONENT}")
        return number.scaleb(exponent)
    suffix = match["suffix"]
    if suffix not in _SUFFIXES:
        raise ValueError(f"{text!r} has an unknown unit {suffix!r}")
    return number * _SUFFIXES[suffix]


def binary_quantity(count: int) -> str:
    """A byte count as Kubernetes writes it: in the largest binary unit that divides it."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIXES[suffix])
        if count and count % unit == 0:
            return f"{count // unit}{suffix}"
    return str(count)


def share_or_quantity(text: str, *, whole: Decimal) -> int | None:
    """`text` in base units: a quantity (`4Gi`), or a percentage of `whole` (`50%`); `0` or
    `none` for none. `ValueError` for anything else."""
    spoken = text.strip().lower()
    if spoken in {"0", "none"}:
        return None
    if spoken.endswith("%"):
        try:
            share = Decimal(spoken.removesuffix("%"))
        except InvalidOperation as error:
            raise ValueError(f"{text!r} is not a percentage") from error
        if not 0 < share <= 100:
            raise ValueError(f"{text!r} is not a percentage above 0 and at most 100")
        return math.ceil(whole * share / 100)
    found = parse_quantity(text.strip())
    if not 0 < found <= MAX_QUANTITY:
        raise ValueError(f"{text!r} is not a quantity above 0 and at most 2^63-1")
    return math.ceil(found)
