"""Queries over collections: `filterBy` expressions, sorting, search and paging.

Parsing is pure, linear in the query's length and shared by every list endpoint; the store
turns a `ListQuery` into SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from lockstep.domain.clock import iso, parse_moment
from lockstep.domain.errors import InvalidRequest, Violation
from lockstep.schemas.bounds import INT32_MAX, INT32_MIN, MAX_FILTER_CLAUSES

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


class Operator(StrEnum):
    """The eight `filterBy` operators of the Run:ai API."""

    EQUALS = "=="
    NOT_EQUALS = "!="
    AT_MOST = "<="
    AT_LEAST = ">="
    CONTAINS = "=@"
    NOT_CONTAINS = "!@"
    STARTS_WITH = "=^"
    ENDS_WITH = "=$"


class SortOrder(StrEnum):
    ASC = "asc"
    DESC = "desc"


_EXPRESSION = re.compile(
    r"^(?P<field>[A-Za-z][A-Za-z0-9]*)(?P<op>==|!=|<=|>=|=@|!@|=\^|=\$)(?P<value>.+)$"
)


@dataclass(frozen=True, slots=True)
class Filter:
    field: str
    operator: Operator
    value: str


@dataclass(frozen=True, slots=True)
class ListQuery:
    """One page of a collection, already checked against the fields the collection supports."""

    filters: tuple[Filter, ...] = ()
    sort_by: str | None = None
    sort_order: SortOrder = SortOrder.ASC
    offset: int = 0
    limit: int = DEFAULT_LIMIT
    search: str | None = None
    deleted: bool = False
    project_ids: frozenset[str] | None = field(default=None)
    """The projects the caller may read; None means every project."""


def parse_filters(
    expressions: list[str],
    *,
    allowed: frozenset[str],
    expression: re.Pattern[str] = _EXPRESSION,
) -> tuple[Filter, ...]:
    """Parse `filterBy` values (each may hold several comma-separated expressions), at most
    `MAX_FILTER_CLAUSES` in all. `expression`: how one expression is written, with the groups
    `field`, `op` and `value` (the default: a camelCase field, as most collections name
    theirs)."""
    clauses = [clause for raw in expressions for clause in _split(raw, expression)]
    if len(clauses) > MAX_FILTER_CLAUSES:
        raise InvalidRequest.of(
            "filterBy", f"must hold at most {MAX_FILTER_CLAUSES} clauses, not {len(clauses)}"
        )
    filters: list[Filter] = []
    violations: list[Violation] = []
    for clause in clauses:
        match = expression.fullmatch(clause)
        if match is None:
            violations.append(
                Violation(
                    "filterBy",
                    f"{clause!r} is not <field><operator><value> with an operator "
                    "among ==, !=, <=, >=, =@, !@, =^, =$",
                )
            )
            continue
        if match["field"] not in allowed:
            violations.append(
                Violation(
                    "filterBy",
                    f"cannot filter on {match['field']!r}; fields: {', '.join(sorted(allowed))}",
                )
            )
            continue
        filters.append(Filter(match["field"], Operator(match["op"]), match["value"]))
    if violations:
        raise InvalidRequest(violations)
    return tuple(filters)


def _split(raw: str, expression: re.Pattern[str]) -> list[str]:
    """`filterBy` is sent with explode=false: `a==1,b!=2` holds two expressions; a piece that
    does not start one (`b` in `name=@a,b`) belongs to the value before it."""
    parts: list[list[str]] = []
    for piece in raw.split(","):
        if parts and not expression.match(piece):
            parts[-1].append(piece)
        else:
            parts.append([piece])
    return [part for part in (",".join(pieces) for pieces in parts) if part]


OFFSET_RANGE = f"a 32-bit integer, as the Run:ai document types it: from {INT32_MIN} to {INT32_MAX}"


def check_paging(offset: int | None, limit: int | None) -> tuple[int, int]:
    """Validated offset and limit with their defaults. The Run:ai document types `offset` as a
    32-bit integer and sets no minimum: one outside 32 bits is refused, and a negative one
    starts the page at the first item, as 0 does."""
    if offset is not None and offset > INT32_MAX:
        raise InvalidRequest.of(
            "offset", f"must be less than or equal to {INT32_MAX} ({OFFSET_RANGE})"
        )
    if offset is not None and offset < INT32_MIN:
        raise InvalidRequest.of(
            "offset", f"must be greater than or equal to {INT32_MIN} ({OFFSET_RANGE})"
        )
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest.of("limit", f"must be between 1 and {MAX_LIMIT}")
    return max(offset or 0, 0), limit or DEFAULT_LIMIT


def matches(item: Filter, value: object) -> bool:
    """Whether an in-memory `value` satisfies `item` (used for the small organization lists).
    Numbers and date-times compare by value; everything else, and the text operators, by the
    wire form (date-times as ISO-8601 with `Z`)."""
    if value is None:
        return item.operator in {Operator.NOT_EQUALS, Operator.NOT_CONTAINS}
    text = iso(value) if isinstance(value, datetime) else str(value)
    match item.operator:
        case Operator.CONTAINS:
            return item.value in text
        case Operator.NOT_CONTAINS:
            return item.value not in text
        case Operator.STARTS_WITH:
            return text.startswith(item.value)
        case Operator.ENDS_WITH:
            return text.endswith(item.value)
    left, right = _comparable(value, item.value)
    match item.operator:
        case Operator.EQUALS:
            return bool(left == right)
        case Operator.NOT_EQUALS:
            return bool(left != right)
        case Operator.AT_MOST:
            return bool(left <= right)
        case _:
            return bool(left >= right)


def _comparable(value: object, other: str) -> tuple[Any, Any]:
    if isinstance(value, bool):
        return str(value).lower(), other.lower()
    if isinstance(value, int | float):
        try:
            return value, float(other)
        except ValueError as error:
            raise InvalidRequest.of("filterBy", f"{other!r} is not a number") from error
    if isinstance(value, datetime):
        try:
            return value, parse_moment(other)
        except ValueError as error:
            raise InvalidRequest.of(
                "filterBy", f"{other!r} is not an ISO-8601 date-time"
            ) from error
    return str(value), other
