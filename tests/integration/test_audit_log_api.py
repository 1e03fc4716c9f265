"""`GET /api/v1/audit/log` and `GET /api/v1/audit/log/file` over HTTP, on both stores: the
calls that change something and the sign-ins are recorded (who, from where, what, on which
entity, with what result), read back by time range with `filterBy`, `sortBy`, `sortOrder`,
`offset` and `numberOfSamples`, downloaded as CSV and JSON; bad queries get 400 naming the
parameter, a caller without the permission 403, one without a token 401; and no password,
secret or token is in any record."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from lockstep.domain.clock import iso
from lockstep.domain.identity import Role, ScopeType
from tests.support.access import app_with_role, new_project
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.contract import assert_conforms
from tests.support.requests import distributed
from tests.support.users import PASSWORD, new_user, sign_in, tokens

LOG = "/api/v1/audit/log"
FILE = "/api/v1/audit/log/file"


def window() -> dict[str, str]:
    """A range holding everything a test did."""
    now = datetime.now(UTC)
    return {"start": iso(now - timedelta(hours=1)), "end": iso(now + timedelta(hours=1))}


def records(api: Api, **params: Any) -> list[dict[str, Any]]:
    response = api.get(LOG, params={**window(), "numberOfSamples": 1000, **params})
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["audit_logs"]
    return found


def recorded(
    api: Api, wanted: Callable[[dict[str, Any]], bool], *, count: int = 1, **params: Any
) -> list[dict[str, Any]]:
    """The records `wanted` picks, once there are `count` of them (the writer stores records a
    moment after their calls are answered)."""

    def found() -> list[dict[str, Any]] | None:
        chosen = [record for record in records(api, **params) if wanted(record)]
        return chosen if len(chosen) >= count else None

    return poll(found, timeout=20, what=f"{count} audit record(s)")


def test_changing_calls_and_sign_ins_are_recorded(api: Api) -> None:
    cluster = api.cluster_id()
    project_name = "audited"
    created = api.post(
        "/api/v1/org-unit/projects",
        json={"name": project_name, "clusterId": cluster, "resources": []},
    )
    assert created.status_code == 201, created.text
    project_id = str(created.json()["id"])
    waits = distributed(
        cluster, name="audited", project_id=project_id, compute={"cpuCoreRequest": 100000}
    )
    submitted = api.post("/api/v1/workloads/distributed", json=waits)
    assert submitted.status_code == 202, submitted.text
    workload_id = submitted.json()["workloadId"]
    deleted = api.delete(f"/api/v1/workloads/distributed/{workload_id}")
    assert deleted.status_code == 202, deleted.text
    email = "ada@example.com"
    user_id, password = new_user(api, email)
    refused = sign_in(api.client, email, "not-her-password")
    assert refused.status_code == 401
    signed_in = tokens(api.client, email, password)
    renewed = api.client.post(
        "/api/v1/token",
        json={"grantType": "refresh_token", "refreshToken": signed_in["refreshToken"]},
    )
    assert renewed.status_code == 200, renewed.text
    ada = Api(api.client, signed_in["accessToken"])
    changed = ada.post(
        "/api/v1/me/password", json={"currentPassword": password, "newPassword": PASSWORD}
    )
    assert changed.status_code == 200, changed.text
    logout = api.post(f"/api/v1/users/{user_id}/logout")
    assert logout.status_code == 200, logout.text
    nobody = api.client.post("/api/v1/org-unit/departments", json={"name": "nobody's"})
    assert nobody.status_code == 401

    def record_of(response: httpx.Response) -> Callable[[dict[str, Any]], bool]:
        return lambda record: record["request_id"] == response.headers["x-request-id"]

    (project,) = recorded(api, record_of(created))
    assert project["subject"] == ADMIN_ID and project["subject_type"] == "App"
    assert project["action"] == "create" and project["result"] == "Succeeded"
    assert project["http_method"] == "POST" and project["http_status_code"] == 201
    assert project["url"] == "http://testserver/api/v1/org-unit/projects"
    assert (project["entity_type"], project["entity_id"], project["entity_name"]) == (
        "project",
        project_id,
        project_name,
    )
    assert project["cluster_id"] == cluster and project["cluster_name"]
    assert project["source_ip"] and project["tenant_id"] == "1"
    (submission,) = recorded(api, record_of(submitted))
    assert (submission["action"], submission["entity_type"], submission["entity_id"]) == (
        "create",
        "workload",
        workload_id,
    )
    (deletion,) = recorded(api, record_of(deleted))
    assert (deletion["action"], deletion["entity_id"], deletion["http_method"]) == (
        "delete",
        workload_id,
        "DELETE",
    )
    (failed,) = recorded(api, lambda r: r["action"] == "sign-in" and r["result"] == "Failed")
    assert (failed["subject"], failed["subject_type"], failed["http_status_code"]) == (
        email,
        "User",
        401,
    )
    sign_ins = recorded(
        api,
        lambda r: r["subject"] == email and r["action"] == "sign-in" and r["result"] == "Succeeded",
        count=2,
    )
    assert {r["metadata"]["grantType"] for r in sign_ins} == {"password", "refresh_token"}
    (signed_out,) = recorded(api, record_of(logout))
    assert (signed_out["action"], signed_out["entity_type"], signed_out["entity_id"]) == (
        "sign-out",
        "user",
        user_id,
    )
    (own,) = recorded(api, record_of(changed))
    assert (own["subject"], own["subject_type"], own["action"]) == (email, "User", "reset-password")
    assert (own["entity_type"], own["entity_id"], own["entity_name"]) == ("user", user_id, email)
    (user,) = recorded(api, lambda r: r.get("entity_type") == "user" and r["action"] == "create")
    assert (user["entity_id"], user["entity_name"]) == (user_id, email)

    page = api.get(LOG, params={**window(), "numberOfSamples": 1000})
    in_process = frozenset(
        f"{key}/{index}/source_ip" for key in ("audit_logs", "logs") for index in range(100)
    )  # the in-process client's address is `testclient`, not an IPv4 address
    body = assert_conforms(page, LOG, tolerate=in_process)
    assert body["logs"] == body["audit_logs"] and body["total"] == len(body["logs"])
    assert not any(r["url"].endswith("/api/v1/org-unit/departments") for r in body["logs"])
    everything = page.text + _file(api, "CSV") + _file(api, "JSON")
    for secret in (
        password,
        PASSWORD,
        "not-her-password",
        ADMIN_SECRET,
        api.token or "",
        signed_in["accessToken"],
        signed_in["refreshToken"],
        renewed.json()["refreshToken"],
    ):
        assert secret not in everything


def _file(api: Api, file_type: str, **params: Any) -> str:
    response = api.get(FILE, params={**window(), "file_type": file_type, **params})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/octet-stream"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="audit-log-')
    assert disposition.endswith(f'.{file_type.lower()}"')
    return response.text


def _failed_sign_ins(api: Api, names: list[str]) -> None:
    for name in names:
        assert sign_in(api.client, name, "wrong").status_code == 401


def test_filters_sorting_and_paging(api: Api) -> None:
    names = ["carol@example.com", "alice@example.com", "bob@example.org"]
    _failed_sign_ins(api, names)
    failed = recorded(api, lambda r: r["result"] == "Failed", count=3)
    first = min(r["timestamp"] for r in failed)

    def subjects(*filters: str, **params: Any) -> list[str]:
        chosen = records(api, filterBy=",".join(filters), **params)
        return [r["subject"] for r in chosen]

    assert subjects("action==sign-in,result==Failed") == names
    assert subjects("subject==bob@example.org") == ["bob@example.org"]
    assert subjects("subject=@example.com,result!=Succeeded") == names[:2]
    assert subjects("subject!@example.com,result==Failed") == ["bob@example.org"]
    assert subjects("subject=^alice,action==sign-in") == ["alice@example.com"]
    assert subjects("subject=$.org") == ["bob@example.org"]
    assert subjects("subject_type==User,result==Failed", sortBy="subject") == sorted(names)
    assert subjects("result==Failed", sortBy="subject", sortOrder="desc") == sorted(
        names, reverse=True
    )
    assert subjects(f"timestamp>={first},result==Failed") == names
    assert subjects(f"timestamp<={first},result==Failed") == names[:1]
    assert subjects(f"timestamp!={first},result==Failed") == names[1:]
    assert subjects(f"timestamp=={first}") == names[:1]
    assert subjects("url=@/token,source_ip!=nowhere,entity_name!=x,result==Failed") == names
    assert subjects("cluster_name==nowhere") == []

    params = {**window(), "filterBy": "result==Failed", "numberOfSamples": 2}
    page = api.get(LOG, params=params).json()
    assert (page["total"], page["next"]) == (3, 2)
    assert [r["subject"] for r in page["logs"]] == names[:2]
    rest = api.get(LOG, params={**params, "offset": 2}).json()
    assert [r["subject"] for r in rest["logs"]] == names[2:] and "next" not in rest
    empty = api.get(LOG, params={**params, "numberOfSamples": 0}).json()
    assert empty["logs"] == [] and empty["total"] == 3
    default = api.get(LOG, params={**window(), "filterBy": "result==Failed"}).json()
    assert len(default["logs"]) == 3
    long_ago = {"start": "2001-01-01T00:00:00Z", "end": "2001-01-02T00:00:00Z"}
    assert api.get(LOG, params=long_ago).json() == {"total": 0, "audit_logs": [], "logs": []}


def test_files_hold_the_records_as_csv_and_json(api: Api) -> None:
    names = ['=hyperlink("http://example.com")@example.com', "plain@example.com"]
    _failed_sign_ins(api, names)
    recorded(api, lambda r: r["result"] == "Failed", count=2)
    rows = list(csv.DictReader(io.StringIO(_file(api, "CSV", filterBy="result==Failed"))))
    assert [row["subject"] for row in rows] == ["'" + names[0], names[1]]
    assert all(row["action"] == "sign-in" and row["http_status_code"] == "401" for row in rows)
    assert json.loads(rows[0]["metadata"]) == {"grantType": "password"}
    as_json = json.loads(_file(api, "JSON", filterBy="result==Failed"))
    assert [r["subject"] for r in as_json] == names
    assert as_json == records(api, filterBy="result==Failed")
    assert (
        json.loads(_file(api, "JSON", filterBy="result==Failed", numberOfSamples=1)) == as_json[:1]
    )
    assert json.loads(_file(api, "JSON", filterBy="subject==nobody")) == []
    header = _file(api, "CSV", filterBy="subject==nobody")
    assert header.startswith("id,timestamp,tenant_id,subject,") and header.count("\n") == 1


DAY = {"start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}


@pytest.mark.parametrize(
    ("params", "parameter", "rule"),
    [
        ({"end": DAY["end"]}, "start", "required"),
        ({"start": DAY["start"]}, "end", "required"),
        ({**DAY, "start": "yesterday"}, "start", "ISO 8601"),
        ({**DAY, "start": "2026-01-03T00:00:00Z"}, "end", "before"),
        ({**DAY, "filterBy": "password==x"}, "filterBy", "cannot filter on 'password'"),
        ({**DAY, "filterBy": "subject~x"}, "filterBy", "is not <field><operator><value>"),
        ({**DAY, "filterBy": "timestamp=@2026"}, "filterBy", "a date takes only"),
        ({**DAY, "filterBy": "timestamp>=soon"}, "filterBy", "not an ISO 8601"),
        ({**DAY, "numberOfSamples": 1001}, "numberOfSamples", "1000"),
        ({**DAY, "numberOfSamples": -1}, "numberOfSamples", "0"),
        ({**DAY, "sortBy": "password"}, "sortBy", "cannot sort by 'password'"),
        ({**DAY, "sortOrder": "up"}, "sortOrder", "asc"),
        ({**DAY, "file_type": "XML"}, "file_type", "CSV"),
    ],
)
def test_bad_queries_are_refused_naming_the_parameter(
    module_api: Api, params: dict[str, Any], parameter: str, rule: str
) -> None:
    paths = {"sortBy": [LOG], "sortOrder": [LOG], "file_type": [FILE]}.get(parameter, [LOG, FILE])
    for path in paths:
        response = module_api.get(path, params=params)
        assert response.status_code == 400, (path, response.text)
        body = response.json()
        assert body["code"] == 400 and parameter in body["message"], body
        assert rule in body["message"], body


def test_only_a_system_administrator_reads_it(api: Api) -> None:
    viewer = app_with_role(api, "viewer", Role.VIEWER, new_project(api, "viewed"))
    department_admin = app_with_role(
        api, "dept-admin", Role.DEPARTMENT_ADMINISTRATOR, "1", scope=ScopeType.DEPARTMENT
    )
    for path in (LOG, FILE):
        for caller in (viewer, department_admin):
            refused = caller.get(path, params=window())
            assert refused.status_code == 403, refused.text
            assert refused.json()["message"] == "you may not read the audit log in this tenant"
        anonymous = api.client.get(path, params=window())
        assert anonymous.status_code == 401
    refused_change = viewer.post(
        "/api/v1/org-unit/departments", json={"name": "not-mine", "clusterId": api.cluster_id()}
    )
    assert refused_change.status_code == 403
    (failed,) = recorded(api, lambda r: r["request_id"] == refused_change.headers["x-request-id"])
    assert (failed["subject"], failed["result"], failed["http_status_code"]) == (
        "viewer",
        "Failed",
        403,
    )
    assert (failed["action"], failed["entity_type"]) == ("create", "department")
    permissions = api.get("/api/v1/authorization/permissions").json()
    assert {
        "resourceType": "events-history",
        "displayName": "Event history",
        "groupId": "iam",
        "actions": ["read"],
    } in permissions
