"""What every JSON request body must be before any schema looks at it: storable. Every string
(and object key) free of NUL characters, which PostgreSQL cannot store; every integer within a
signed 64-bit integer, as the store (and orjson, which writes it) holds them; every number
finite (`1e400` parses as infinity, and Python's JSON reader accepts `NaN` and `Infinity`).

Checked once for every endpoint by the body dependency (api/deps.py), which runs it on a worker
thread for a large body. A quick scan of the raw bytes finds most bodies clean without parsing
them; the others are parsed and walked, and each value that breaks a rule is named by its path
(`spec.compute.cpuCoreRequest`, `data.key`, `spec.environmentVariables[2].value`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from lockstep.domain.errors import InvalidRequest, Violation
from lockstep.schemas.bounds import INT64_MAX, INT64_MIN, INT64_RULE

_SUSPECT_TEXT = (b"\\u0000", b"NaN", b"Infinity")
"""Text a value breaking a rule may need: an escaped NUL (a raw one is not JSON) or a
non-standard constant."""


def _shape_of(byte: int) -> int:
    character = bytes([byte])
    if character.isdigit():
        return ord("0")
    return ord({b"e": "e", b"E": "e", b"+": "+", b"-": "+"}.get(character, "."))


_SHAPE = bytes(_shape_of(byte) for byte in range(256))
"""The shape of a body's bytes: each digit as 0, each exponent mark as e, each sign as +."""
_SUSPECT_SHAPES = (b"0" * 19, b"e000", b"e+000")
"""Numbers a value breaking a rule may need: 19 digits in a row (an integer past 64 bits, or a
float's mantissa beyond the finite) or an exponent of three digits or more."""

_LONGEST_INT64 = len(str(INT64_MIN))
NUL_RULE = "must not contain a NUL character (\\u0000): it cannot be stored"
FINITE_RULE = "must be a finite number"


class _OutOfRange:
    """An integer too long to be a signed 64-bit integer (kept as text: converting very long
    digit strings to int is what Python limits)."""

    __slots__ = ()


_OUT_OF_RANGE = _OutOfRange()


def _integer(text: str) -> int | _OutOfRange:
    return int(text) if len(text) <= _LONGEST_INT64 else _OUT_OF_RANGE


def check_storable(body: bytes) -> None:
    """`InvalidRequest` naming every value of the JSON `body` that cannot be stored. A body
    that is not JSON passes: its schema says so."""
    if not _suspect(body):
        return
    try:
        document = json.loads(body, parse_int=_integer)
    except (ValueError, RecursionError):
        return
    violations = list(_violations(document))
    if violations:
        raise InvalidRequest(violations)


def _suspect(body: bytes) -> bool:
    """Whether `body` may hold a value that cannot be stored: a scan of its raw bytes, in C,
    that finds nearly every body clean without parsing it."""
    if any(text in body for text in _SUSPECT_TEXT):
        return True
    shape = body.translate(_SHAPE)
    return any(pattern in shape for pattern in _SUSPECT_SHAPES)


def _violations(document: Any) -> Iterator[Violation]:
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                yield Violation(path or "body", NUL_RULE)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, _OutOfRange):
            yield Violation(path or "body", INT64_RULE)
        elif isinstance(value, int):
            if not INT64_MIN <= value <= INT64_MAX:
                yield Violation(path or "body", INT64_RULE)
        elif isinstance(value, float):
            if not math.isfinite(value):
                yield Violation(path or "body", FINITE_RULE)
        elif isinstance(value, dict):
            children: list[tuple[str, Any]] = []
            for key, child in value.items():
                if "\x00" in key:
                    yield Violation(path or "body", f"key {key!r}: {NUL_RULE}")
                children.append((f"{path}.{key}" if path else key, child))
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))
