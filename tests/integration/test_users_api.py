"""`/api/v1/users`, `/api/v1/me/password` and the `password` and `refresh_token` grants of
`POST /api/v1/token`, over HTTP on both stores: an administrator creates, lists, reads, resets,
signs out and deletes users; a person signs in, renews, changes their password; failed sign-ins
make the user (or an unknown name) wait; every answer keeps the contract's shape."""

from __future__ import annotations

import base64
import functools
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from lockstep.domain.identity import Role
from lockstep.domain.users import FREE_FAILURES
from lockstep.services.identity import IdentityService
from tests.support.api import Api, poll
from tests.support.contract import assert_conforms
from tests.support.users import PASSWORD, new_user, sign_in, tokens, user_with_role


@pytest.fixture
def admin(module_api: Api) -> Iterator[Api]:
    """The module's administrator; every user a test made is deleted after it."""
    before = {u["id"] for u in module_api.get("/api/v1/users").json()}
    yield module_api
    for user in module_api.get("/api/v1/users").json():
        if user["id"] not in before:
            assert module_api.delete(f"/api/v1/users/{user['id']}").status_code == 204


def email(name: str) -> str:
    """A new address for each test (the module's server outlives a test)."""
    return f"{name}-{uuid.uuid4().hex[:8]}@example.com"


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * 4))
    return decoded


def identity(api: Api) -> IdentityService:
    service: IdentityService = api.client.app.state.services.identity  # type: ignore[attr-defined]
    return service


def refused(api: Api, path: str) -> bool | None:
    """True once `api`'s token is refused (401) on `path`."""
    return True if api.get(path).status_code == 401 else None


def test_an_administrator_creates_reads_lists_and_deletes_a_user(admin: Api) -> None:
    address = email("Ada")
    created = admin.post("/api/v1/users", json={"email": address, "notify": False})
    body = assert_conforms(created, "/api/v1/users")
    assert created.status_code == 201
    assert set(body) == {"id", "username", "tempPassword"}
    assert body["username"] == address.lower()
    user_id = body["id"]

    read = admin.get(f"/api/v1/users/{user_id}")
    user = assert_conforms(read, "/api/v1/users/{userId}")
    assert user["username"] == address.lower()
    assert user["createdBy"] == "admin"
    assert user["isLocal"] is True and user["lastLogin"] is None and user["groups"] == []
    listed = assert_conforms(admin.get("/api/v1/users"), "/api/v1/users")
    assert user in listed

    deleted = admin.delete(f"/api/v1/users/{user_id}")
    assert deleted.status_code == 204 and deleted.content == b""
    gone = admin.get(f"/api/v1/users/{user_id}")
    assert gone.status_code == 404
    assert gone.json() == {"code": 404, "message": f"no user has the id {user_id!r}"}
    assert user_id not in {u["id"] for u in admin.get("/api/v1/users").json()}
    assert admin.delete(f"/api/v1/users/{user_id}").status_code == 404


def test_an_email_names_one_user_whatever_its_case(admin: Api) -> None:
    address = email("grace")
    new_user(admin, address)
    again = admin.post("/api/v1/users", json={"email": address.upper()})
    assert again.status_code == 409
    assert again.json() == {
        "code": 409,
        "message": f"a user named {address.lower()!r} already exists",
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"email": "not-an-email"}, "email: must be a valid email address"),
        ({"email": ""}, "email: must be a valid email address"),
        ({"email": "a@b.c"}, "email: must be a valid email address"),
        ({"email": "x" * 250 + "@example.com"}, "email: string should have at most 254"),
        ({}, "email: required"),
        ({"email": 7}, "email: input should be a valid string"),
        ({"email": "ok@example.com", "role": "admin"}, "role: is not a known field"),
        ({"email": "ok@example.com", "notify": "yes"}, "notify: input should be a valid boolean"),
    ],
    ids=[
        "pattern",
        "empty",
        "short top-level domain",
        "too long",
        "missing",
        "number",
        "extra",
        "notify",
    ],
)
def test_a_bad_user_is_refused_naming_the_field_and_nothing_is_stored(
    admin: Api, body: dict[str, Any], message: str
) -> None:
    before = admin.get("/api/v1/users").json()
    response = admin.post("/api/v1/users", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == 400
    assert message in response.json()["message"]
    assert admin.get("/api/v1/users").json() == before


def test_a_user_signs_in_with_the_one_time_password_and_renews_with_the_refresh_token(
    admin: Api,
) -> None:
    address = email("linus")
    user_id, password = new_user(admin, address)
    answer = tokens(admin.client, address.upper(), password)
    assert set(answer) == {"accessToken", "refreshToken", "expiresIn"}
    assert answer["expiresIn"] == 900
    access, refresh = claims(answer["accessToken"]), claims(answer["refreshToken"])
    assert access["typ"] == "user" and access["sub"] == address.lower()
    assert access["uid"] == user_id and access["exp"] - access["iat"] == 900
    assert refresh["use"] == "refresh" and refresh["exp"] - refresh["iat"] == 7 * 86400

    me = Api(admin.client, answer["accessToken"])
    assert me.get(f"/api/v1/users/{user_id}").json()["lastLogin"] is not None
    as_bearer = Api(admin.client, answer["refreshToken"]).get(f"/api/v1/users/{user_id}")
    assert as_bearer.status_code == 401
    assert "good only for the refresh_token grant" in as_bearer.json()["message"]

    renewed = admin.client.post(
        "/api/v1/token", json={"grantType": "refresh_token", "refreshToken": answer["refreshToken"]}
    )
    assert renewed.status_code == 200, renewed.text
    assert (
        Api(admin.client, renewed.json()["accessToken"]).get(f"/api/v1/users/{user_id}").status_code
        == 200
    )
    wrong_kind = admin.client.post(
        "/api/v1/token", json={"grantType": "refresh_token", "refreshToken": answer["accessToken"]}
    )
    assert wrong_kind.status_code == 401
    assert "it is an access token" in wrong_kind.json()["message"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"grantType": "password", "password": "x"}, "username: required for the password grant"),
        ({"grantType": "password", "username": "a@b.co"}, "password: required for the password"),
        ({"grantType": "password", "username": "a@b.co", "password": 5}, "password: must be a str"),
        ({"grantType": "refresh_token"}, "refreshToken: required for the refresh_token grant"),
        ({"grantType": "refresh_token", "refreshToken": "x" * 5000}, "at most 4096 characters"),
    ],
    ids=["no username", "no password", "number", "no refresh token", "long refresh token"],
)
def test_a_bad_sign_in_request_is_refused_naming_the_key(
    admin: Api, body: dict[str, Any], message: str
) -> None:
    response = admin.client.post("/api/v1/token", json=body)
    assert response.status_code == 400
    assert message in response.json()["message"]


def test_a_wrong_password_and_an_unknown_user_get_the_same_answer(admin: Api) -> None:
    address = email("alan")
    new_user(admin, address)
    wrong = sign_in(admin.client, address, "Not-the-password-1")
    unknown = sign_in(admin.client, email("nobody"), "Not-the-password-1")
    assert wrong.status_code == unknown.status_code == 401
    assert (
        wrong.json()
        == unknown.json()
        == {
            "code": 401,
            "message": "the user name or password is not valid",
        }
    )


def test_a_researcher_manages_no_users_but_reads_and_signs_out_themself(admin: Api) -> None:
    other_id, _ = new_user(admin, email("other"))
    my_id, me = user_with_role(admin, email("me"), Role.L1_RESEARCHER, "1")
    for method, path in [
        ("GET", "/api/v1/users"),
        ("POST", "/api/v1/users"),
        ("GET", f"/api/v1/users/{other_id}"),
        ("DELETE", f"/api/v1/users/{other_id}"),
        ("POST", f"/api/v1/users/{other_id}/password"),
        ("POST", f"/api/v1/users/{other_id}/logout"),
        ("POST", f"/api/v1/users/{my_id}/password"),
        ("DELETE", f"/api/v1/users/{my_id}"),
    ]:
        response = me.request(method, path, json={"email": email("new")})
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["message"].startswith("you may not")
    assert me.get(f"/api/v1/users/{my_id}").status_code == 200
    assert [p["id"] for p in me.get("/api/v1/org-unit/projects").json()["projects"]] == ["1"]

    logout = me.post(f"/api/v1/users/{my_id}/logout")
    assert logout.status_code == 200 and logout.json() == {}
    after = me.get(f"/api/v1/users/{my_id}")
    assert after.status_code == 401
    assert after.json()["message"] == ("the access token's user has been signed out: sign in again")


def test_an_administrator_signs_a_user_out_of_every_session(admin: Api) -> None:
    address = email("barbara")
    user_id, password = new_user(admin, address)
    sessions = [tokens(admin.client, address, password) for _ in range(2)]
    clients = [Api(admin.client, s["accessToken"]) for s in sessions]
    assert all(c.get(f"/api/v1/users/{user_id}").status_code == 200 for c in clients)

    assert admin.post(f"/api/v1/users/{user_id}/logout").status_code == 200
    for client in clients:
        poll(functools.partial(refused, client, f"/api/v1/users/{user_id}"), timeout=5, what="401")
    for session in sessions:
        renewal = admin.client.post(
            "/api/v1/token",
            json={"grantType": "refresh_token", "refreshToken": session["refreshToken"]},
        )
        assert renewal.status_code == 401
        assert renewal.json()["message"] == "the refresh token's user has been signed out"
    again = Api(admin.client, tokens(admin.client, address, password)["accessToken"])
    assert again.get(f"/api/v1/users/{user_id}").status_code == 200
    assert admin.post(f"/api/v1/users/{uuid.uuid4()}/logout").status_code == 404


def test_a_reset_password_replaces_the_old_one_and_ends_every_session(admin: Api) -> None:
    address = email("edsger")
    user_id, first = new_user(admin, address)
    session = Api(admin.client, tokens(admin.client, address, first)["accessToken"])
    reset = admin.post(f"/api/v1/users/{user_id}/password")
    body = assert_conforms(reset, "/api/v1/users/{userId}/password")
    second = body["tempPassword"]
    assert second != first and len(second) == 20
    assert session.get(f"/api/v1/users/{user_id}").status_code == 401
    assert sign_in(admin.client, address, first).status_code == 401
    assert sign_in(admin.client, address, second).status_code == 200
    assert admin.post(f"/api/v1/users/{uuid.uuid4()}/password").status_code == 404


def test_a_user_changes_their_own_password(admin: Api) -> None:
    address = email("margaret")
    user_id, temporary = new_user(admin, address)
    me = Api(admin.client, tokens(admin.client, address, temporary)["accessToken"])
    for body, message in [
        ({"currentPassword": "Wrong-password-1", "newPassword": PASSWORD}, "currentPassword: is"),
        ({"currentPassword": temporary, "newPassword": "short"}, "newPassword: must be from 8"),
        ({"currentPassword": temporary, "newPassword": "alllowercase1!"}, "newPassword: must"),
        ({"currentPassword": temporary, "newPassword": temporary}, "newPassword: must differ"),
        ({"currentPassword": temporary}, "newPassword: required"),
    ]:
        response = me.post("/api/v1/me/password", json=body)
        assert response.status_code == 400, response.text
        assert message in response.json()["message"]

    changed = me.post(
        "/api/v1/me/password", json={"currentPassword": temporary, "newPassword": PASSWORD}
    )
    assert changed.status_code == 200 and changed.json() == {}
    assert me.get(f"/api/v1/users/{user_id}").status_code == 401
    assert sign_in(admin.client, address, temporary).status_code == 401
    assert sign_in(admin.client, address, PASSWORD).status_code == 200
    not_a_user = admin.post(
        "/api/v1/me/password", json={"currentPassword": "a", "newPassword": PASSWORD}
    )
    assert not_a_user.status_code == 403
    assert not_a_user.json()["message"] == (
        "only a user has a password: sign in as one to change it"
    )


@pytest.mark.parametrize("known", [True, False], ids=["user", "unknown name"])
def test_failed_sign_ins_make_the_name_wait(admin: Api, known: bool) -> None:
    address = email("mallory")
    password = new_user(admin, address)[1] if known else PASSWORD
    for _ in range(FREE_FAILURES):
        assert sign_in(admin.client, address, "Guess-number-1").status_code == 401
    waiting = sign_in(admin.client, address, password)
    assert waiting.status_code == 429
    assert waiting.headers["retry-after"] == "1"
    assert waiting.json()["message"] == ("too many failed sign-ins for this user: try again in 1 s")
    if not known:
        return
    # Once the wait is over the right password signs in, and the count starts again.
    poll(
        lambda: True if sign_in(admin.client, address, password).status_code == 200 else None,
        timeout=10,
        what="the wait to end",
    )
    assert sign_in(admin.client, address, "Guess-number-1").status_code == 401


def test_deleting_a_user_revokes_their_tokens_and_their_access_rules(admin: Api) -> None:
    address = email("ken")
    user_id, me = user_with_role(admin, address, Role.VIEWER, "1")
    assert me.get("/api/v1/org-unit/projects/1").status_code == 200
    assert admin.delete(f"/api/v1/users/{user_id}").status_code == 204
    gone = me.get("/api/v1/org-unit/projects/1")
    assert gone.status_code == 401
    assert gone.json()["message"] == "the access token's user no longer exists"
    assert not [r for r in identity(admin).rules() if r.subject_id == address]

    _, password = new_user(admin, address)
    again = Api(admin.client, tokens(admin.client, address, password)["accessToken"])
    assert again.get("/api/v1/org-unit/projects/1").status_code == 403


def test_the_list_filters_sorts_searches_and_pages(admin: Api) -> None:
    tag = uuid.uuid4().hex[:8]
    names = [f"{letter}-{tag}@example.com" for letter in "cab"]
    for name in names:
        new_user(admin, name)

    def listed(**params: Any) -> list[str]:
        response = admin.get("/api/v1/users", params=params)
        assert response.status_code == 200, response.text
        return [u["username"] for u in response.json()]

    mine = sorted(names)
    assert listed(filterBy=f"username=@{tag}", sortBy="username") == mine
    assert listed(filterBy=f"username=@{tag}", sortBy="username", sortOrder="desc") == mine[::-1]
    assert listed(search=tag.upper(), sortBy="username", offset=1, limit=1) == mine[1:2]
    assert listed(filterBy=f"username=@{tag},isLocal==true", sortBy="creationTime") == names
    assert listed(filterBy=f"username=@{tag},isLocal==false") == []
    assert listed(filter="runai.is_local:false") == []
    assert set(mine) <= set(listed(filter="runai.is_local:true"))
    assert listed(filterBy=f"username=@{tag}", sortBy="lastLogin") != []

    for params, message in [
        ({"sortBy": "password"}, "sortBy: cannot sort by 'password'"),
        ({"filterBy": "passwordHash==x"}, "filterBy: cannot filter on 'passwordHash'"),
        ({"limit": 501}, "limit: must be between 1 and 500"),
        ({"filter": "role:admin"}, "filter: must be runai.is_local:true or"),
        ({"filterBy": f"username=@{tag},creationTime>=yesterday"}, "is not an ISO-8601 date-time"),
    ]:
        response = admin.get("/api/v1/users", params=params)
        assert response.status_code == 400, (params, response.text)
        assert message in response.json()["message"]
