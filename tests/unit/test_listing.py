"""`filterBy`, paging and in-memory matching (domain/listing.py): the eight Run:ai operators,
comma-joined expressions, values holding commas, errors that name `filterBy`, at most 100
clauses, offset/limit bounds and how each operator compares strings, numbers and dates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    Filter,
    Operator,
    check_paging,
    matches,
    parse_filters,
)

FIELDS = frozenset({"name", "phase", "gpus", "createdAt"})


def parse(*expressions: str) -> tuple[Filter, ...]:
    return parse_filters(list(expressions), allowed=FIELDS)


def rules(error: InvalidRequest) -> list[tuple[str, str]]:
    return [(v.field, v.rule) for v in error.violations]


# --- parse_filters ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "operator", "value"),
    [
        ("name==train", Operator.EQUALS, "train"),
        ("name!=train", Operator.NOT_EQUALS, "train"),
        ("gpus<=4", Operator.AT_MOST, "4"),
        ("gpus>=2", Operator.AT_LEAST, "2"),
        ("name=@rain", Operator.CONTAINS, "rain"),
        ("name!@rain", Operator.NOT_CONTAINS, "rain"),
        ("name=^tr", Operator.STARTS_WITH, "tr"),
        ("name=$in", Operator.ENDS_WITH, "in"),
    ],
)
def test_each_operator(expression: str, operator: Operator, value: str) -> None:
    field = expression[: len(expression) - len(value) - 2]
    assert parse(expression) == (Filter(field, operator, value),)


def test_the_operators_are_exactly_the_eight_of_the_api() -> None:
    assert {o.value for o in Operator} == {"==", "!=", "<=", ">=", "=@", "!@", "=^", "=$"}


def test_value_may_hold_operator_characters() -> None:
    assert parse("name==a==b") == (Filter("name", Operator.EQUALS, "a==b"),)
    assert parse("name=@>=") == (Filter("name", Operator.CONTAINS, ">="),)
    assert parse("createdAt>=2024-01-01T00:00:00Z") == (
        Filter("createdAt", Operator.AT_LEAST, "2024-01-01T00:00:00Z"),
    )


def test_comma_joined_expressions_are_split() -> None:
    assert parse("name=^tr,phase==Running,gpus>=1") == (
        Filter("name", Operator.STARTS_WITH, "tr"),
        Filter("phase", Operator.EQUALS, "Running"),
        Filter("gpus", Operator.AT_LEAST, "1"),
    )


def test_a_comma_inside_a_value_stays_in_the_value() -> None:
    assert parse("name==a,b", "phase!=x,y,gpus<=3") == (
        Filter("name", Operator.EQUALS, "a,b"),
        Filter("phase", Operator.NOT_EQUALS, "x,y"),
        Filter("gpus", Operator.AT_MOST, "3"),
    )


def test_several_filter_by_values_add_up_in_order() -> None:
    assert parse("name==a", "phase==Running") == (
        Filter("name", Operator.EQUALS, "a"),
        Filter("phase", Operator.EQUALS, "Running"),
    )


def test_no_filters() -> None:
    assert parse() == ()
    assert parse("") == ()


@pytest.mark.parametrize(
    "expression",
    ["name", "name=train", "name<train", "name==", "==train", "1name==x", "na-me==x", "name ==x"],
)
def test_malformed_expression_names_filter_by(expression: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse(expression)
    [(field, rule)] = rules(caught.value)
    assert field == "filterBy"
    assert repr(expression) in rule
    assert "==, !=, <=, >=, =@, !@, =^, =$" in rule


def test_unknown_field_names_filter_by_and_lists_the_fields() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse("owner==me")
    assert rules(caught.value) == [
        ("filterBy", "cannot filter on 'owner'; fields: createdAt, gpus, name, phase")
    ]


def test_field_names_are_case_sensitive() -> None:
    with pytest.raises(InvalidRequest):
        parse("Name==x")


def test_every_bad_expression_is_reported_at_once() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse("owner==me", "name==ok", "bogus")
    assert [field for field, _ in rules(caught.value)] == ["filterBy", "filterBy"]
    assert "'owner'" in rules(caught.value)[0][1]
    assert "'bogus'" in rules(caught.value)[1][1]


def test_at_most_a_hundred_clauses_across_every_filter_by() -> None:
    assert len(parse(*["name!=a"] * 60, ",".join(["gpus>=1"] * 40))) == 100
    with pytest.raises(InvalidRequest) as caught:
        parse(*["name!=a"] * 60, ",".join(["gpus>=1"] * 41))
    assert rules(caught.value) == [("filterBy", "must hold at most 100 clauses, not 101")]


def test_a_value_of_many_commas_is_one_clause_split_in_linear_time() -> None:
    # Joining each piece onto the value before it, as pieces arrived, was quadratic: this
    # took over a minute. No timing is asserted.
    (only,) = parse("name==x" + ",y" * 1_000_000)
    assert only.value == "x" + ",y" * 1_000_000


# --- check_paging ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [
        (None, None, (0, DEFAULT_LIMIT)),
        (0, 1, (0, 1)),
        (100, None, (100, DEFAULT_LIMIT)),
        (None, MAX_LIMIT, (0, MAX_LIMIT)),
        (7, 20, (7, 20)),
    ],
)
def test_paging(offset: int | None, limit: int | None, expected: tuple[int, int]) -> None:
    assert check_paging(offset, limit) == expected


def test_paging_defaults_are_the_documented_ones() -> None:
    assert (DEFAULT_LIMIT, MAX_LIMIT) == (50, 500)


def test_a_negative_offset_starts_at_the_first_item() -> None:
    """The Run:ai document types `offset` as a 32-bit integer with no minimum."""
    assert check_paging(-1, None) == (0, DEFAULT_LIMIT)
    assert check_paging(-(2**31), 5) == (0, 5)


def test_an_offset_fits_a_signed_32_bit_integer() -> None:
    assert check_paging(2**31 - 1, None) == (2**31 - 1, DEFAULT_LIMIT)
    range_rule = "a 32-bit integer, as the Run:ai document types it: from -2147483648 to 2147483647"
    for offset in (2**31, 2**63, 10**40):
        with pytest.raises(InvalidRequest) as caught:
            check_paging(offset, None)
        assert rules(caught.value) == [
            ("offset", f"must be less than or equal to 2147483647 ({range_rule})")
        ]
    with pytest.raises(InvalidRequest) as caught:
        check_paging(-(2**31) - 1, None)
    assert rules(caught.value) == [
        ("offset", f"must be greater than or equal to -2147483648 ({range_rule})")
    ]


@pytest.mark.parametrize("limit", [0, -5, MAX_LIMIT + 1, 2**64])
def test_limit_out_of_range(limit: int) -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_paging(None, limit)
    assert rules(caught.value) == [("limit", "must be between 1 and 500")]


# --- matches --------------------------------------------------------------------------------


def f(operator: Operator, value: str) -> Filter:
    return Filter("field", operator, value)


@pytest.mark.parametrize(
    ("operator", "wanted", "value", "expected"),
    [
        (Operator.EQUALS, "train", "train", True),
        (Operator.EQUALS, "train", "Train", False),
        (Operator.NOT_EQUALS, "train", "train", False),
        (Operator.NOT_EQUALS, "train", "test", True),
        (Operator.CONTAINS, "rai", "train", True),
        (Operator.CONTAINS, "x", "train", False),
        (Operator.NOT_CONTAINS, "rai", "train", False),
        (Operator.NOT_CONTAINS, "x", "train", True),
        (Operator.STARTS_WITH, "tr", "train", True),
        (Operator.STARTS_WITH, "ain", "train", False),
        (Operator.ENDS_WITH, "ain", "train", True),
        (Operator.ENDS_WITH, "tr", "train", False),
        # strings compare as strings
        (Operator.AT_MOST, "b", "a", True),
        (Operator.AT_MOST, "b", "c", False),
        (Operator.AT_LEAST, "b", "b", True),
        # numbers compare as numbers, not as text ("10" < "9" as text)
        (Operator.AT_LEAST, "9", 10, True),
        (Operator.AT_MOST, "9", 10, False),
        (Operator.AT_MOST, "2.5", 2.5, True),
        (Operator.AT_LEAST, "2.5", 2, False),
        (Operator.EQUALS, "3", 3, True),
    ],
)
def test_matches(operator: Operator, wanted: str, value: object, expected: bool) -> None:
    assert matches(f(operator, wanted), value) is expected


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        (Operator.EQUALS, False),
        (Operator.NOT_EQUALS, True),
        (Operator.AT_MOST, False),
        (Operator.AT_LEAST, False),
        (Operator.CONTAINS, False),
        (Operator.NOT_CONTAINS, True),
        (Operator.STARTS_WITH, False),
        (Operator.ENDS_WITH, False),
    ],
)
def test_a_missing_value_matches_only_negations(operator: Operator, expected: bool) -> None:
    assert matches(f(operator, "x"), None) is expected


CREATED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("operator", "wanted", "expected"),
    [
        (Operator.AT_LEAST, "2024-05-01T00:00:00Z", True),
        (Operator.AT_LEAST, "2024-05-02T00:00:00Z", False),
        (Operator.AT_MOST, "2024-05-01T12:00:00+00:00", True),
        (Operator.AT_MOST, "2024-05-01T13:00:00+02:00", False),  # 11:00 UTC
    ],
)
def test_dates_compare_as_instants(operator: Operator, wanted: str, expected: bool) -> None:
    assert matches(f(operator, wanted), CREATED) is expected


def test_number_compared_with_text_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequest) as caught:
        matches(f(Operator.AT_LEAST, "many"), 3)
    assert rules(caught.value) == [("filterBy", "'many' is not a number")]


def test_date_compared_with_text_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequest) as caught:
        matches(f(Operator.AT_MOST, "yesterday"), CREATED)
    assert rules(caught.value) == [("filterBy", "'yesterday' is not an ISO-8601 date-time")]


def test_date_without_offset_does_not_crash() -> None:
    assert matches(f(Operator.AT_LEAST, "2024-01-01"), CREATED) is True


def test_date_equality_uses_the_wire_format() -> None:
    assert matches(f(Operator.EQUALS, "2024-05-01T12:00:00Z"), CREATED) is True
