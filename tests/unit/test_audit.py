"""The audit log's pure parts: what a route's template says of a call (its action and entity),
what a creation's answer gives of its entity, the checks of `filterBy`, `sortBy` and the time
range, and the CSV file's cells."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lockstep.domain.audit import (
    AuditAction,
    AuditResult,
    CallDescription,
    call_url,
    check_sort,
    clipped,
    created_entity,
    describe_call,
    parse_audit_filters,
    parse_time_range,
    result_of,
    spreadsheet_safe,
    to_the_millisecond,
)
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import Filter, Operator

A = AuditAction
WORKLOAD_ID = "0b7a3c4e-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    ("method", "template", "params", "expected"),
    [
        ("POST", "/api/v1/workloads/distributed", {}, CallDescription(A.CREATE, "workload")),
        (
            "DELETE",
            "/api/v1/workloads/trainings/{workloadId}",
            {"workloadId": WORKLOAD_ID},
            CallDescription(A.DELETE, "workload", WORKLOAD_ID),
        ),
        (
            "POST",
            "/api/v1/workloads/workspaces/{workloadId}/suspend",
            {"workloadId": WORKLOAD_ID},
            CallDescription(A.UPDATE, "workload", WORKLOAD_ID),
        ),
        (
            "POST",
            "/api/v1/workloads/distributed/{workloadId}/resume",
            {"workloadId": WORKLOAD_ID},
            CallDescription(A.UPDATE, "workload", WORKLOAD_ID),
        ),
        ("POST", "/api/v1/org-unit/projects", {}, CallDescription(A.CREATE, "project")),
        (
            "PUT",
            "/api/v1/org-unit/projects/{projectId}",
            {"projectId": "7"},
            CallDescription(A.UPDATE, "project", "7"),
        ),
        (
            "PATCH",
            "/api/v1/org-unit/projects/{projectId}/resources",
            {"projectId": "7"},
            CallDescription(A.UPDATE, "project", "7"),
        ),
        (
            "DELETE",
            "/api/v1/org-unit/departments/{departmentId}",
            {"departmentId": "2"},
            CallDescription(A.DELETE, "department", "2"),
        ),
        (
            "PUT",
            "/api/v1/org-unit/projects/{projectId}/secrets/{name}",
            {"projectId": "7", "name": "token"},
            CallDescription(A.UPDATE, "secret", None, "token"),
        ),
        (
            "DELETE",
            "/api/v1/org-unit/projects/{projectId}/claims/{name}",
            {"projectId": "7", "name": "data"},
            CallDescription(A.DELETE, "claim", None, "data"),
        ),
        (
            "POST",
            "/api/v1/org-unit/projects/{projectId}/configmaps",
            {"projectId": "7"},
            CallDescription(A.CREATE, "config-map"),
        ),
        (
            "PATCH",
            "/api/v1/node-pools/{nodepoolId}",
            {"nodepoolId": "3"},
            CallDescription(A.UPDATE, "nodepool", "3"),
        ),
        (
            "POST",
            "/api/v1/users/{userId}/logout",
            {"userId": "u1"},
            CallDescription(A.SIGN_OUT, "user", "u1"),
        ),
        (
            "POST",
            "/api/v1/users/{userId}/password",
            {"userId": "u1"},
            CallDescription(A.RESET_PASSWORD, "user", "u1"),
        ),
        ("POST", "/api/v1/me/password", {}, CallDescription(A.RESET_PASSWORD, "user")),
        (
            "POST",
            "/api/v1/service-accounts/{serviceAccountId}/secret",
            {"serviceAccountId": "s1"},
            CallDescription(A.UPDATE, "service-account", "s1"),
        ),
        (
            "DELETE",
            "/api/v1/administration/access-keys/{accessKeyId}",
            {"accessKeyId": "k1"},
            CallDescription(A.DELETE, "access-key", "k1"),
        ),
        (
            "DELETE",
            "/api/v1/authorization/access-rules/{accessRuleId}",
            {"accessRuleId": 12},
            CallDescription(A.DELETE, "access-rule", "12"),
        ),
        ("POST", "/api/v1/token", {}, CallDescription(A.SIGN_IN)),
        ("POST", None, {}, CallDescription(A.CREATE)),
        ("DELETE", None, {}, CallDescription(A.DELETE)),
        ("PUT", "/api/v1/something-new/{id}", {"id": "x"}, CallDescription(A.UPDATE)),
    ],
)
def test_a_route_says_what_a_call_does_and_to_what(
    method: str, template: str | None, params: dict[str, object], expected: CallDescription
) -> None:
    assert describe_call(method, template, params) == expected


def test_a_long_path_value_is_clipped() -> None:
    described = describe_call(
        "DELETE", "/api/v1/org-unit/projects/{projectId}/secrets/{name}", {"name": "n" * 1000}
    )
    assert described.entity_name is not None and len(described.entity_name) == 255
    assert described.entity_name.endswith("…")
    assert clipped("short") == "short"


def test_a_creation_answer_gives_only_its_id_and_name() -> None:
    assert created_entity({"id": 3, "name": "vision", "secret": "s3cr3t"}) == ("3", "vision")
    assert created_entity({"workloadId": "w", "name": "train"}) == ("w", "train")
    assert created_entity({"id": "u", "username": "ada@example.com", "tempPassword": "p"}) == (
        "u",
        "ada@example.com",
    )
    assert created_entity({"id": True, "name": {"nested": 1}}) == (None, None)
    assert created_entity([{"id": 1}]) == (None, None)
    assert created_entity(None) == (None, None)


def test_the_result_is_succeeded_for_2xx_only() -> None:
    assert [result_of(status) for status in (200, 202, 204)] == [AuditResult.SUCCEEDED] * 3
    assert [result_of(status) for status in (301, 400, 401, 403, 500)] == [AuditResult.FAILED] * 5


def test_a_timestamp_is_kept_to_the_millisecond() -> None:
    moment = datetime(2026, 12, 6, 12, 0, 0, 123456, tzinfo=UTC)
    assert to_the_millisecond(moment) == datetime(2026, 12, 6, 12, 0, 0, 123000, tzinfo=UTC)


def test_filters_of_the_audit_log() -> None:
    texts, times = parse_audit_filters(
        ["subject_type==User,entity_name=@a,b", "timestamp>=2026-12-06T00:00:00Z"]
    )
    assert texts == (
        Filter("subject_type", Operator.EQUALS, "User"),
        Filter("entity_name", Operator.CONTAINS, "a,b"),
    )
    assert [(t.operator, t.moment) for t in times] == [
        (Operator.AT_LEAST, datetime(2026, 12, 6, tzinfo=UTC))
    ]
    assert parse_audit_filters([]) == ((), ())


@pytest.mark.parametrize(
    ("expression", "rule"),
    [
        ("http_method==POST", "cannot filter on 'http_method'"),
        ("subjectType==User", "cannot filter on 'subjectType'"),
        ("subject", "is not <field><operator><value>"),
        ("timestamp=^2026", "a date takes only ==, !=, <= and >="),
        ("timestamp==yesterday", "'yesterday' is not an ISO 8601 date-time"),
    ],
)
def test_a_bad_filter_names_the_rule(expression: str, rule: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_audit_filters([expression])
    assert refused.value.violations[0].field == "filterBy"
    assert rule in str(refused.value)


def test_sorting_and_the_time_range() -> None:
    assert check_sort(None) == "timestamp"
    assert check_sort("entity_id") == "entity_id"
    with pytest.raises(InvalidRequest, match="sortBy"):
        check_sort("cluster_name")
    start, end = parse_time_range("2026-12-06T00:00:00Z", "2026-12-06T01:00:00+01:00")
    assert start == end
    with pytest.raises(InvalidRequest, match="end: must not be before start"):
        parse_time_range("2026-12-06T00:00:01Z", "2026-12-06T00:00:00Z")
    with pytest.raises(InvalidRequest, match="start: 'today'"):
        parse_time_range("today", "2026-12-06T00:00:00Z")


def test_a_csv_cell_never_holds_a_formula() -> None:
    assert spreadsheet_safe("=1+2") == "'=1+2"
    assert [spreadsheet_safe(text) for text in ("+1", "-1", "@x")] == ["'+1", "'-1", "'@x"]
    assert spreadsheet_safe("ada@example.com") == "ada@example.com"


def test_a_call_url_is_an_absolute_uri() -> None:
    def url(host: str | None, path: str, query: str = "") -> str:
        return call_url(scheme="http", host=host, server="10.0.0.1:8080", path=path, query=query)

    assert (
        url("lockstep.example.com", "/api/v1/token") == "http://lockstep.example.com/api/v1/token"
    )
    assert url("[::1]:8080", "/api/v1/x", "dryRun=true") == "http://[::1]:8080/api/v1/x?dryRun=true"
    assert url(None, "/a b/é") == "http://10.0.0.1:8080/a%20b/%C3%A9"
    assert url("evil host/", "/p") == "http://10.0.0.1:8080/p"
    assert url("h", "/p", "a=1&b=x%20y&c=%zz&d") == "http://h/p?a=1&b=x%20y&c=%25zz&d="
    long = url("h", "/p", "q=" + "é" * 2000)
    assert len(long) <= 2048 and not long.endswith(("%", "%C")) and long.startswith("http://h/p?q=")
