"""Clients over HTTP on both stores: service accounts (and the deprecated `/api/v1/apps`)
made, listed, disabled, given a new secret and deleted by an administrator, each change
refusing the tokens it should; a user's access keys (and the deprecated user applications)
whose tokens act as the user; an administrator's view of everyone's keys; every answer in the
contract's shape, and no secret ever shown twice."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.identity import Role
from tests.support.api import Api
from tests.support.contract import assert_conforms
from tests.support.users import user_with_role

ACCOUNTS = "/api/v1/service-accounts"
KEYS = "/api/v1/access-keys"


def token_for(api: Api, client_id: str, secret: str, grant: str = "client_credentials") -> Any:
    body = (
        {"grantType": grant, "clientId": client_id, "clientSecret": secret}
        if grant == "client_credentials"
        else {"grantType": grant, "AppId": client_id, "AppSecret": secret}
    )
    return api.client.post("/api/v1/token", json=body)


def signed_in(api: Api, client_id: str, secret: str) -> Api:
    response = token_for(api, client_id, secret)
    assert response.status_code == 200, response.text
    return Api(api.client, response.json()["accessToken"])


def test_a_service_account_lives_from_creation_to_deletion(api: Api) -> None:
    created = api.post(ACCOUNTS, json={"name": "ci-bot"})
    body = assert_conforms(created, ACCOUNTS)
    assert created.status_code == 201
    assert set(body) == {"id", "name", "clientId", "clientSecret"}
    assert body["clientId"] == body["name"] == "ci-bot"
    account_id, secret = body["id"], body["clientSecret"]

    listed = assert_conforms(api.get(ACCOUNTS), ACCOUNTS)
    assert [a["name"] for a in listed] == ["admin", "ci-bot"]
    assert all("secret" not in str(a).lower() for a in listed)
    one = assert_conforms(api.get(f"{ACCOUNTS}/{account_id}"), f"{ACCOUNTS}/{{serviceAccountId}}")
    assert one["enabled"] is True and one["lastLogin"] is None and one["createdBy"] == "admin"

    bot = signed_in(api, "ci-bot", secret)
    assert token_for(api, "ci-bot", secret, grant="app_token").status_code == 200
    assert api.get(f"{ACCOUNTS}/{account_id}").json()["lastLogin"] is not None
    assert bot.get("/api/v1/org-unit/projects").status_code == 200

    regenerated = api.post(f"{ACCOUNTS}/{account_id}/secret")
    new_secret = assert_conforms(regenerated, f"{ACCOUNTS}/{{serviceAccountId}}/secret")[
        "clientSecret"
    ]
    assert new_secret != secret
    refused = bot.get("/api/v1/org-unit/projects")
    assert refused.status_code == 401
    assert refused.json()["message"] == (
        "the access token's client secret has been regenerated: obtain a new token"
    )
    assert token_for(api, "ci-bot", secret).status_code == 401
    bot = signed_in(api, "ci-bot", new_secret)

    disabled = api.request("PATCH", f"{ACCOUNTS}/{account_id}", json={"enabled": False})
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    assert bot.get("/api/v1/org-unit/projects").status_code == 401
    off = token_for(api, "ci-bot", new_secret)
    assert off.status_code == 401 and off.json()["message"] == "the client is disabled"
    enabled = api.request("PATCH", f"{ACCOUNTS}/{account_id}", json={"enabled": True})
    assert enabled.json()["enabled"] is True
    bot = signed_in(api, "ci-bot", new_secret)

    assert api.delete(f"{ACCOUNTS}/{account_id}").status_code == 204
    gone = bot.get("/api/v1/org-unit/projects")
    assert gone.status_code == 401
    assert gone.json()["message"] == "the access token's client no longer exists or is disabled"
    assert api.get(f"{ACCOUNTS}/{account_id}").status_code == 404
    assert api.delete(f"{ACCOUNTS}/{account_id}").status_code == 404


def test_the_deprecated_apps_are_the_service_accounts(api: Api) -> None:
    created = api.post("/api/v1/apps", json={"name": "old-client"})
    body = assert_conforms(created, "/api/v1/apps")
    assert set(body) == {"id", "name", "clientId", "secret"}
    listed = {a["name"] for a in assert_conforms(api.get("/api/v1/apps"), "/api/v1/apps")}
    assert listed == {a["name"] for a in api.get(ACCOUNTS).json()} == {"admin", "old-client"}
    assert api.get(f"{ACCOUNTS}/{body['id']}").json()["name"] == "old-client"
    again = assert_conforms(
        api.post(f"/api/v1/apps/{body['id']}/secret"), "/api/v1/apps/{appId}/secret"
    )
    assert token_for(api, "old-client", again["secret"], grant="app_token").status_code == 200
    assert api.delete(f"/api/v1/apps/{body['id']}").status_code == 204


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"name": "Bad_Name"}, 400, "name: must start with a lowercase letter"),
        ({"name": "a"}, 400, "name: must start with a lowercase letter"),
        ({"name": "x" * 64}, 400, "name: must be at most 63 characters"),
        ({}, 400, "name: required"),
        ({"name": "admin"}, 409, "an application named 'admin' already exists"),
    ],
    ids=["pattern", "one letter", "long", "missing", "taken"],
)
def test_a_bad_service_account_is_refused_and_nothing_is_stored(
    api: Api, body: dict[str, Any], status: int, message: str
) -> None:
    response = api.post(ACCOUNTS, json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["message"]
    assert [a["name"] for a in api.get(ACCOUNTS).json()] == ["admin"]


def test_the_last_administrator_is_kept(api: Api) -> None:
    (admin,) = api.get(ACCOUNTS).json()
    for refused in (
        api.delete(f"{ACCOUNTS}/{admin['id']}"),
        api.request("PATCH", f"{ACCOUNTS}/{admin['id']}", json={"enabled": False}),
    ):
        assert refused.status_code == 403
        assert "holds the last System administrator rule" in refused.json()["message"]


def test_only_an_administrator_manages_service_accounts(api: Api) -> None:
    _, researcher = user_with_role(api, "rita@example.com", Role.L1_RESEARCHER, "1")
    (admin,) = api.get(ACCOUNTS).json()
    for method, path, body in [
        ("GET", ACCOUNTS, None),
        ("POST", ACCOUNTS, {"name": "mine"}),
        ("GET", f"{ACCOUNTS}/{admin['id']}", None),
        ("PATCH", f"{ACCOUNTS}/{admin['id']}", {"enabled": False}),
        ("DELETE", f"{ACCOUNTS}/{admin['id']}", None),
        ("POST", f"{ACCOUNTS}/{admin['id']}/secret", None),
        ("GET", "/api/v1/administration/access-keys", None),
    ]:
        response = researcher.request(method, path, json=body)
        assert response.status_code == 403, (method, path, response.text)


def test_a_users_access_key_acts_as_the_user(api: Api) -> None:
    user_id, ada = user_with_role(api, "ada@example.com", Role.L1_RESEARCHER, "1")
    _, bob = user_with_role(api, "bob@example.com", Role.VIEWER, "1")
    created = ada.post(KEYS, json={"name": "laptop"})
    key = assert_conforms(created, KEYS)
    assert set(key) == {"id", "name", "clientId", "clientSecret", "createdAt"}
    assert ada.post(KEYS, json={"name": "laptop"}).status_code == 409

    through_key = signed_in(api, key["clientId"], key["clientSecret"])
    mine = through_key.get("/api/v1/authorization/me/access-rules").json()["accessRules"]
    assert [r["roleName"] for r in mine["accessRules"]] == ["L1 researcher"]
    listed = assert_conforms(ada.get(KEYS), KEYS)["accessKeys"]
    assert [k["name"] for k in listed] == ["laptop"] and listed[0]["lastLogin"] is not None
    assert bob.get(KEYS).json() == {"accessKeys": []}
    assert bob.get(f"{KEYS}/{key['id']}").status_code == 404
    assert bob.delete(f"{KEYS}/{key['id']}").status_code == 404
    assert api.get(KEYS).status_code == 403  # an application has no keys

    everyone = assert_conforms(
        api.get("/api/v1/administration/access-keys", params={"createdBy": "ada@example.com"}),
        "/api/v1/administration/access-keys",
    )["accessKeys"]
    assert [(k["name"], k["createdBy"]) for k in everyone] == [("laptop", "ada@example.com")]

    regenerated = ada.post(f"{KEYS}/{key['id']}/secret")
    secret = assert_conforms(regenerated, f"{KEYS}/{{accessKeyId}}/secret")["clientSecret"]
    assert through_key.get("/api/v1/org-unit/projects").status_code == 401
    through_key = signed_in(api, key["clientId"], secret)

    # Signing the user out refuses the key's tokens too; the key itself still works.
    assert api.post(f"/api/v1/users/{user_id}/logout").status_code == 200
    assert through_key.get("/api/v1/org-unit/projects").status_code == 401
    through_key = signed_in(api, key["clientId"], secret)
    assert api.delete(f"/api/v1/administration/access-keys/{key['id']}").status_code == 204
    assert through_key.get("/api/v1/org-unit/projects").status_code == 401
    assert token_for(api, key["clientId"], secret).status_code == 401


def test_the_deprecated_user_applications_are_the_access_keys(api: Api) -> None:
    user_id, ada = user_with_role(api, "ada@example.com", Role.VIEWER, "1")
    created = ada.post("/api/v1/user-applications", json={"name": "script"})
    app = assert_conforms(created, "/api/v1/user-applications")
    assert set(app) == {"id", "name", "clientId", "secret", "createdAt"}
    listed = assert_conforms(ada.get("/api/v1/user-applications"), "/api/v1/user-applications")
    assert [a["id"] for a in listed] == [a["id"] for a in ada.get(KEYS).json()["accessKeys"]]
    administered = api.get("/api/v1/administration/user-applications")
    assert [
        a["createdBy"]
        for a in assert_conforms(administered, "/api/v1/administration/user-applications")
    ] == ["ada@example.com"]
    assert signed_in(api, app["clientId"], app["secret"]).get(KEYS).status_code == 200
    # Deleting the user deletes their keys.
    assert api.delete(f"/api/v1/users/{user_id}").status_code == 204
    assert api.get("/api/v1/administration/user-applications").json() == []
    assert token_for(api, app["clientId"], app["secret"]).status_code == 401
