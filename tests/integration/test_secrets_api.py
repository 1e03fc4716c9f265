"""The secrets and config maps endpoints (a lockstep extension), on SQLite and PostgreSQL:
round trips, the errors in the Run:ai body, who may do what, and that no response, nor the
store in clear, ever holds a secret's values."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from lockstep.config import Settings
from lockstep.domain.identity import Role
from lockstep.services.secrets import SecretService
from lockstep.store.database import normalize_url
from tests.support.access import app_with_role, new_project
from tests.support.api import Api

KINDS = ("secrets", "configmaps")
KIND_NAME = {"secrets": "secret", "configmaps": "config map"}
RESOURCE = {"secrets": "secrets", "configmaps": "config maps"}


def path(kind: str, project: str = "1", name: str | None = None) -> str:
    base = f"/api/v1/org-unit/projects/{project}/{kind}"
    return base if name is None else f"{base}/{name}"


def secrets_of(api: Api) -> SecretService:
    service: SecretService = api.client.app.state.services.secrets  # type: ignore[attr-defined]
    return service


def error(response: httpx.Response, code: int) -> str:
    assert response.status_code == code, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"code", "message"} and body["code"] == code
    return str(body["message"])


def test_a_secret_round_trips_and_no_response_carries_its_values(module_api: Api) -> None:
    api = module_api
    password, changed = f"pw-{uuid.uuid4().hex}", f"pw2-{uuid.uuid4().hex}"
    seen: list[httpx.Response] = []

    def call(method: str, url: str, **kwargs: Any) -> httpx.Response:
        seen.append(api.request(method, url, **kwargs))
        return seen[-1]

    data = {"user": "alice", "password": password}
    created = call("POST", path("secrets"), json={"name": "db", "data": data})
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"name", "projectId", "keys", "createdAt", "createdBy", "updatedAt"}
    assert (body["name"], body["projectId"], body["keys"]) == ("db", "1", ["password", "user"])
    assert body["createdBy"] == "admin" and body["createdAt"].endswith("Z")
    assert call("GET", path("secrets")).json() == {"secrets": [body]}
    assert call("GET", path("secrets", name="db")).json() == body

    replaced = call("PUT", path("secrets", name="db"), json={"data": {"password": changed}})
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["keys"] == ["password"]
    assert replaced.json()["createdAt"] == body["createdAt"]
    again = call(
        "PUT", path("secrets", name="db"), json={"name": "db", "data": {"password": changed}}
    )
    assert again.status_code == 200, again.text
    values = secrets_of(api).for_project("1")
    assert values.secrets == {"db": {"password": changed}}

    deleted = call("DELETE", path("secrets", name="db"))
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert (
        error(call("GET", path("secrets", name="db")), 404) == "project 1 has no secret named 'db'"
    )
    assert call("GET", path("secrets")).json() == {"secrets": []}
    assert secrets_of(api).for_project("1").secrets == {}
    for response in seen:
        assert password not in response.text
        assert changed not in response.text


def test_a_config_map_round_trips_with_its_data(module_api: Api) -> None:
    api = module_api
    created = api.post(path("configmaps"), json={"name": "cfg", "data": {"mode": "fast"}})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["data"] == {"mode": "fast"} and body["projectId"] == "1"
    assert api.get(path("configmaps")).json() == {"configMaps": [body]}
    assert api.get(path("configmaps", name="cfg")).json() == body
    replaced = api.put(path("configmaps", name="cfg"), json={"data": {"level": "3"}})
    assert replaced.json()["data"] == {"level": "3"}
    assert secrets_of(api).for_project("1").config_maps == {"cfg": {"level": "3"}}
    assert api.delete(path("configmaps", name="cfg")).status_code == 204
    assert api.get(path("configmaps")).json() == {"configMaps": []}


BAD_BODIES: list[tuple[str, str, Any, str]] = [
    ("POST", "", {"data": {}}, "name: required"),
    ("POST", "", {"name": "x"}, "data: required"),
    ("POST", "", {"name": "Bad_Name", "data": {}}, "name: must be a DNS-1123 label"),
    ("POST", "", {"name": "x", "data": {"a b": "s3cr3t"}}, "data: the key 'a b' must consist"),
    ("POST", "", {"name": "x", "data": {"n": 1}}, "data.n: input should be a valid string"),
    ("POST", "", {"name": "x", "data": {"n": ["s3cr3t"]}}, "data.n: input should be a valid"),
    ("POST", "", {"name": "x", "data": {}, "type": "Opaque"}, "type: is not a known field"),
    ("POST", "", b'{"name": "x", "data": {"k": "s3cr3t"', "body: is not valid JSON"),
    ("POST", "", b"", "body: a JSON object is required"),
    ("PUT", "/x", {"name": "y", "data": {}}, "name: must be 'x', the name in the path"),
    ("PUT", "/x", {"name": "x"}, "data: required"),
    ("PUT", "/X", {"data": {}}, "name: must be a DNS-1123 label"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", BAD_BODIES, ids=[case[3] for case in BAD_BODIES])
def test_bad_bodies_are_400_naming_the_field(
    module_api: Api, kind: str, bad: tuple[str, str, Any, str]
) -> None:
    method, suffix, body, message = bad
    content = body if isinstance(body, bytes) else None
    json_body = None if isinstance(body, bytes) else body
    response = module_api.request(method, path(kind) + suffix, content=content, json=json_body)
    assert message in error(response, 400)
    assert "s3cr3t" not in response.text
    assert module_api.get(path(kind)).json() == {
        "secrets" if kind == "secrets" else "configMaps": []
    }


ENDPOINTS = [
    (method, path(kind, name=name) if name else path(kind))
    for kind in KINDS
    for method, name in (("GET", None), ("POST", None), ("GET", "a"), ("PUT", "a"), ("DELETE", "a"))
]


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_every_secrets_endpoint_needs_a_token(module_api: Api, method: str, url: str) -> None:
    response = module_api.client.request(method, url, json={"name": "a", "data": {}})
    assert "bearer token is required" in error(response, 401)


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_projects_and_names_are_404(module_api: Api, kind: str) -> None:
    api, body = module_api, {"name": "a", "data": {"k": "v"}}
    for project in ("999", "abc"):
        expected = f"no project has the id {project!r}"
        assert error(api.get(path(kind, project)), 404) == expected
        assert error(api.post(path(kind, project), json=body), 404) == expected
        assert error(api.delete(path(kind, project, "a")), 404) == expected
    missing = f"project 1 has no {KIND_NAME[kind]} named 'nope'"
    assert error(api.get(path(kind, name="nope")), 404) == missing
    assert error(api.put(path(kind, name="nope"), json={"data": {}}), 404) == missing
    assert error(api.delete(path(kind, name="nope")), 404) == missing


@pytest.mark.parametrize("kind", KINDS)
def test_creating_an_existing_name_is_409_and_keeps_the_first(module_api: Api, kind: str) -> None:
    api = module_api
    assert api.post(path(kind), json={"name": "dup", "data": {"k": "first"}}).status_code == 201
    again = api.post(path(kind), json={"name": "dup", "data": {"k": "second"}})
    assert error(again, 409) == f"project 1 already has a {KIND_NAME[kind]} named 'dup'"
    values = secrets_of(api).for_project("1")
    kept = values.secret("dup", "k") if kind == "secrets" else values.config_map("dup", "k")
    assert kept == "first"
    assert api.delete(path(kind, name="dup")).status_code == 204


def test_a_researcher_manages_only_its_own_project(api: Api) -> None:
    other = new_project(api, "other")
    researcher = app_with_role(api, "researcher", Role.L1_RESEARCHER, other)
    for kind in KINDS:
        assert api.post(path(kind), json={"name": "theirs", "data": {"k": "v"}}).status_code == 201
        mine = researcher.post(path(kind, other), json={"name": "mine", "data": {"k": "v"}})
        assert mine.status_code == 201, mine.text
        assert mine.json()["createdBy"] == "researcher"
        assert researcher.get(path(kind, other, "mine")).status_code == 200
        assert researcher.put(path(kind, other, "mine"), json={"data": {}}).status_code == 200
        assert len(next(iter(researcher.get(path(kind, other)).json().values()))) == 1
        assert researcher.delete(path(kind, other, "mine")).status_code == 204

        resource = RESOURCE[kind]
        assert error(researcher.get(path(kind)), 403) == f"you may not read {resource} in project 1"
        for name in ("theirs", "nope"):
            assert error(researcher.get(path(kind, name=name)), 403).startswith("you may not read")
        created = researcher.post(path(kind), json={"name": "sneak", "data": {}})
        assert error(created, 403) == f"you may not create {resource} in project 1"
        replaced = researcher.put(path(kind, name="theirs"), json={"data": {}})
        assert error(replaced, 403) == f"you may not update {resource} in project 1"
        deleted = researcher.delete(path(kind, name="theirs"))
        assert error(deleted, 403) == f"you may not delete {resource} in project 1"
    values = secrets_of(api).for_project("1")
    assert values.secrets == {"theirs": {"k": "v"}}
    assert values.config_maps == {"theirs": {"k": "v"}}


def test_a_viewer_reads_names_and_keys_but_changes_nothing(api: Api) -> None:
    password = f"pw-{uuid.uuid4().hex}"
    viewer = app_with_role(api, "viewer", Role.VIEWER, "1")
    assert (
        api.post(path("secrets"), json={"name": "db", "data": {"pw": password}}).status_code == 201
    )
    assert api.post(path("configmaps"), json={"name": "cfg", "data": {"m": "x"}}).status_code == 201

    listed = viewer.get(path("secrets"))
    assert [(s["name"], s["keys"]) for s in listed.json()["secrets"]] == [("db", ["pw"])]
    assert viewer.get(path("secrets", name="db")).json()["keys"] == ["pw"]
    assert password not in listed.text + viewer.get(path("secrets", name="db")).text
    assert viewer.get(path("configmaps", name="cfg")).json()["data"] == {"m": "x"}
    for kind, name in (("secrets", "db"), ("configmaps", "cfg")):
        resource = RESOURCE[kind]
        created = viewer.post(path(kind), json={"name": "mine", "data": {}})
        assert error(created, 403) == f"you may not create {resource} in project 1"
        assert error(viewer.put(path(kind, name=name), json={"data": {}}), 403).startswith(
            f"you may not update {resource}"
        )
        assert error(viewer.delete(path(kind, name=name)), 403).startswith(
            f"you may not delete {resource}"
        )
    values = secrets_of(api).for_project("1")
    assert values.secrets == {"db": {"pw": password}}
    assert values.config_maps == {"cfg": {"m": "x"}}


def test_secret_values_are_sealed_in_the_store(api: Api, settings: Settings) -> None:
    password = f"pw-{uuid.uuid4().hex}"
    created = api.post(path("secrets"), json={"name": "db", "data": {"pw": password}})
    assert created.status_code == 201
    assert secrets_of(api).for_project("1").secret("db", "pw") == password
    assert stat.S_IMODE(settings.sealing_key_path.stat().st_mode) == 0o600

    url = settings.resolved_database_url
    engine = create_engine(normalize_url(url))
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT * FROM secrets")).all()
    finally:
        engine.dispose()
    assert len(rows) == 1
    assert password not in " ".join(str(value) for value in rows[0])
    if url.startswith("sqlite"):
        store = Path(url.removeprefix("sqlite:///"))
        stored = b"".join(p.read_bytes() for p in store.parent.glob(store.name + "*"))
        assert b'"pw"' in stored, "the scan sees the keys, kept in clear"
        assert password.encode() not in stored
