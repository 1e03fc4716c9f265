"""Every JSON body is checked storable before its schema sees it: NUL characters, integers past
64 bits and numbers that are not finite are named by their path; the quick scan that lets most
bodies through unparsed never lets one of them through (checked against the full walk on many
random bodies)."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from lockstep.api.storable_json import FINITE_RULE, NUL_RULE, _violations, check_storable
from lockstep.domain.errors import InvalidRequest, Violation
from lockstep.schemas.bounds import INT64_MAX, INT64_MIN, INT64_RULE


def problems(body: bytes | str) -> list[Violation]:
    try:
        check_storable(body.encode() if isinstance(body, str) else body)
    except InvalidRequest as error:
        return error.violations
    return []


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not json",
        '{"a": 1, "b": [1.5, -2, "text"], "c": {"d": null, "e": true}}',
        f'{{"largest": {INT64_MAX}, "smallest": {INT64_MIN}}}',
        '{"big": 1.7976931348623157e308, "tiny": 5e-324, "zero": -0.0}',
        '{"escaped backslash": "\\\\u0000", "digits": "12345678901234567890123"}',
        '{"words": "NaN and Infinity in a string"}',
        '{"unclosed": "\\u0000',
    ],
)
def test_storable_bodies_pass(body: str) -> None:
    assert problems(body) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"name": "a\\u0000b"}', [Violation("name", NUL_RULE)]),
        ('"\\u0000"', [Violation("body", NUL_RULE)]),
        ('{"data": {"k\\u0000": "v"}}', [Violation("data", f"key 'k\\x00': {NUL_RULE}")]),
        ('{"a": [{"b": ["x", "\\u0000"]}]}', [Violation("a[0].b[1]", NUL_RULE)]),
        (f'{{"n": {INT64_MAX + 1}}}', [Violation("n", INT64_RULE)]),
        (f'{{"n": {INT64_MIN - 1}}}', [Violation("n", INT64_RULE)]),
        ('{"n": ' + "7" * 10_000 + "}", [Violation("n", INT64_RULE)]),
        ('{"x": 1e400}', [Violation("x", FINITE_RULE)]),
        ('{"x": -1E+400}', [Violation("x", FINITE_RULE)]),
        ('{"x": NaN}', [Violation("x", FINITE_RULE)]),
        (
            '{"x": [Infinity, -Infinity]}',
            [Violation("x[0]", FINITE_RULE), Violation("x[1]", FINITE_RULE)],
        ),
        (
            '{"b": 1e999, "a": "\\u0000", "c": {"d": 99999999999999999999}}',
            [
                Violation("b", FINITE_RULE),
                Violation("a", NUL_RULE),
                Violation("c.d", INT64_RULE),
            ],
        ),
    ],
)
def test_each_value_that_cannot_be_stored_is_named_in_order(
    body: str, expected: list[Violation]
) -> None:
    assert problems(body) == expected


def test_deep_bodies_are_walked_without_recursion() -> None:
    depth = 900
    body = "[" * depth + '"\\u0000"' + "]" * depth
    assert problems(body) == [Violation("[0]" * depth, NUL_RULE)]
    # Too deep for Python's reader: left to the schema, which refuses it as not JSON.
    assert problems("[" * 100_000 + "]" * 100_000) == []


CHARACTERS = ["a", "0", "9", "\x00", "\\", "é", "e", "N"]
INTEGERS = [0, -1, INT64_MAX, INT64_MIN, INT64_MAX + 1, INT64_MIN - 1, 10**30, 12345]
FLOATS = [0.5, 1e308, -1e-300, 1.7976931348623157e308, 0.125, math.inf, -math.inf, math.nan]
SCALARS = ["str", "int", "float", "constant"]


def random_value(generator: random.Random, depth: int = 0) -> Any:
    """A random JSON value (a dict's keys only strings), at most four levels deep."""
    kind = generator.choice([*SCALARS, "list", "dict"] if depth < 4 else SCALARS)
    if kind == "str":
        return "".join(generator.choices(CHARACTERS, k=generator.randint(0, 6)))
    if kind == "int":
        return generator.choice(INTEGERS)
    if kind == "float":
        return generator.choice(FLOATS)
    if kind == "constant":
        return generator.choice([None, True, False])
    if kind == "list":
        return [random_value(generator, depth + 1) for _ in range(generator.randint(0, 4))]
    keys = [str(random_value(generator, 4)) for _ in range(generator.randint(0, 4))]
    return {key: random_value(generator, depth + 1) for key in keys}


def test_the_quick_scan_never_lets_a_bad_value_through() -> None:
    generator = random.Random(1201)
    refused = 0
    for _ in range(5_000):
        text = json.dumps(random_value(generator))
        if generator.random() < 0.3:  # numbers the encoder never writes
            text = text.replace("Infinity", "1e400").replace("NaN", "-1E999")
        full = list(_violations(json.loads(text, parse_int=int)))
        assert problems(text) == full, text
        refused += bool(full)
    assert 500 < refused < 4_500
