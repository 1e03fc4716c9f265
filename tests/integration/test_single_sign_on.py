"""Single sign-on over HTTP on both stores, against a real OpenID Connect provider on loopback
(tests/support/oidc_provider.py, authlib's server): an administrator manages `/api/v1/idps`
in the contract's shapes; a person signs in through the provider (authorization code with
PKCE and a nonce), lockstep makes them a user with the provider's groups, and a group's access
rule reaches them; every way a sign-in can go wrong ends in a refusal that says why."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from tests.support.api import Api
from tests.support.contract import assert_conforms
from tests.support.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    OidcProvider,
    Person,
    running_provider,
)
from tests.support.users import PASSWORD, sign_in

IDPS = "/api/v1/idps"
ADA = Person("ada", "ada-provider-pass", "Ada@Example.com", ("ml-team", "readers"))
BOB = Person("bob", "bob-provider-pass", "bob@example.com", (), {"department": "finance"})


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    with running_provider([ADA, BOB]) as running:
        yield running


@pytest.fixture
def idp(module_api: Api, provider: OidcProvider) -> Iterator[str]:
    """The provider configured in lockstep as `oidc`, removed after the test."""
    created = module_api.post(IDPS, json=oidc_body(provider))
    assert created.status_code == 201, created.text
    alias = str(created.json()["alias"])
    redirect = module_api.get(f"{IDPS}/{alias}").json()["redirectUri"]
    provider.redirect_uris.append(redirect)
    yield alias
    provider.redirect_uris.remove(redirect)
    assert module_api.delete(f"{IDPS}/{alias}").status_code == 200


def oidc_body(provider: OidcProvider, **oidc: Any) -> dict[str, Any]:
    return {
        "type": "oidc",
        "oidcData": {
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
            "discoverDocumentUrl": provider.discovery_url,
            "scopes": ["openid email", "groups"],
        }
        | oidc,
        "mappers": {"email": "email", "groups": "groups"},
    }


class Browser:
    """Follows redirects between lockstep (the in-process server, with its cookies) and the
    provider (over the network), as a browser would, and fills the provider's login form."""

    def __init__(self, lockstep: httpx.Client, provider: OidcProvider) -> None:
        self.lockstep = lockstep
        self.provider_url = provider.url
        self.outside = httpx.Client(follow_redirects=False)
        self.visited: list[str] = []

    def go(self, url: str, *, method: str = "GET", data: dict[str, str] | None = None) -> str:
        """Where the browser stops: the first address off both servers' redirects, or the
        provider's login page (returned as the URL it was served at)."""
        while True:
            self.visited.append(url)
            if url.startswith(self.provider_url):
                response = self.outside.request(method, url, data=data)
            else:
                response = self.lockstep.request(method, url, data=data, follow_redirects=False)
            method, data = "GET", None
            if response.status_code not in {301, 302, 303, 307}:
                assert response.status_code in {200, 401}, (self.visited, response.text)
                return url
            url = urljoin(url, response.headers["location"])
            if urlsplit(url).path == "/console/":
                return url

    def sign_in_at_provider(self, login_page: str, person: Person) -> str:
        return self.go(
            login_page,
            method="POST",
            data={"username": person.username, "password": person.password},
        )


def outcome(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def signed_in(browser: Browser, alias: str, person: Person, *, state: str = "s-1") -> str:
    """The one-time code a sign-in through the provider ends with at the console."""
    login = browser.go(f"/sso/{alias}/sign-in?redirect_uri=/console/&state={state}")
    assert login.startswith(browser.provider_url + "/authorize")
    back = browser.sign_in_at_provider(login, person)
    assert back.startswith("http://testserver/console/?"), back
    answer = outcome(back)
    assert answer["state"] == state, answer
    assert "error" not in answer, answer
    return answer["code"]


def exchanged(client: httpx.Client, code: str, redirect_uri: str = "/console/") -> httpx.Response:
    return client.post(
        "/api/v1/token",
        json={"grantType": "exchange_token", "code": code, "redirectUri": redirect_uri},
    )


def test_an_administrator_manages_identity_providers(
    module_api: Api, provider: OidcProvider
) -> None:
    created = module_api.post(IDPS, json=oidc_body(provider) | {"name": "corp"})
    assert assert_conforms(created, IDPS, "post") == {"alias": "corp"}
    assert created.status_code == 201
    again = module_api.post(IDPS, json=oidc_body(provider) | {"name": "corp"})
    assert again.status_code == 409

    listed = assert_conforms(module_api.get(IDPS), IDPS)
    assert [p["alias"] for p in listed] == ["corp"]
    shown = module_api.get(f"{IDPS}/corp").json()
    assert shown == listed[0], "the document gives no schema here: the list's item is the one"
    assert shown["type"] == "oidc"
    assert shown["redirectUri"] == "http://testserver/sso/corp/callback"
    assert shown["oidcData"] == {
        "clientId": CLIENT_ID,
        "clientSecret": "*******",
        "discoverDocumentUrl": provider.discovery_url,
        "scopes": ["openid", "email", "groups"],
    }
    assert CLIENT_SECRET not in module_api.get(IDPS).text

    mappers = f"{IDPS}/corp/mappers"
    assert module_api.put(mappers, json={"email": "mail", "groups": "roles"}).status_code == 202
    assert assert_conforms(module_api.get(mappers), f"{IDPS}/{{idp}}/mappers") == {
        "alias": "corp",
        "email": "mail",
        "groups": "roles",
    }

    replaced = shown | {"oidcData": shown["oidcData"] | {"clientId": "another"}}
    del replaced["alias"], replaced["redirectUri"]
    assert module_api.put(f"{IDPS}/corp", json=replaced).status_code == 200
    now = module_api.get(f"{IDPS}/corp").json()
    assert now["oidcData"]["clientId"] == "another"

    assert module_api.get("/sso").json() == [{"alias": "corp"}]
    assert module_api.delete(f"{IDPS}/corp").status_code == 200
    assert module_api.get(f"{IDPS}/corp").status_code == 404
    assert module_api.delete(f"{IDPS}/corp").status_code == 404
    assert module_api.get(IDPS).json() == []


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"type": "saml"}, "type", "OpenID Connect"),
        ({"oidcData": None}, "oidcData", "required"),
        ({"name": "Not An Alias"}, "name", "a-z"),
        (
            {"oidcData": {"discoverDocumentUrl": "http://idp.example.com/.well-known/x"}},
            "oidcData.discoverDocumentUrl",
            "https",
        ),
        ({"oidcData": {"clientSecret": "*******"}}, "oidcData.clientSecret", "secret"),
        ({"oidcData": {"scopes": ["openid email!"]}}, "oidcData.scopes", "match"),
    ],
)
def test_a_bad_provider_is_refused_naming_the_field(
    module_api: Api, provider: OidcProvider, change: dict[str, Any], field: str, rule: str
) -> None:
    body = oidc_body(provider)
    for key, value in change.items():
        body[key] = body[key] | value if isinstance(value, dict) else value
    refused = module_api.post(IDPS, json=body)
    assert refused.status_code == 400, refused.text
    assert field in refused.json()["message"]
    assert rule in refused.json()["message"]
    assert module_api.get(IDPS).json() == []


def test_a_person_signs_in_through_the_provider_and_their_group_rule_reaches_them(
    module_api: Api, provider: OidcProvider, idp: str
) -> None:
    rule = module_api.post(
        "/api/v1/authorization/access-rules",
        json={
            "subjectType": "group",
            "subjectId": "ml-team",
            "roleId": 8,
            "scopeType": "project",
            "scopeId": "1",
        },
    )
    assert rule.status_code == 201, rule.text
    browser = Browser(module_api.client, provider)
    try:
        code = signed_in(browser, idp, ADA)
        asked = provider.authorizations[-1]
        assert asked["code_challenge_method"] == "S256"
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", asked["code_challenge"])
        assert asked["nonce"] and asked["state"]
        assert asked["scope"] == "openid email groups"
        assert asked["redirect_uri"] == f"http://testserver/sso/{idp}/callback"

        assert exchanged(module_api.client, code, "http://127.0.0.1:1/cb").status_code == 401
        tokens = exchanged(module_api.client, code)
        assert tokens.status_code == 401, "a code is refused for good once misused"

        code = signed_in(browser, idp, ADA, state="s-2")
        tokens = exchanged(module_api.client, code)
        assert tokens.status_code == 200, tokens.text
        body = tokens.json()
        assert set(body) == {"accessToken", "refreshToken", "expiresIn"}
        assert exchanged(module_api.client, code).status_code == 401, "one use"

        ada = Api(module_api.client, body["accessToken"])
        assert ada.get("/api/v1/org-unit/projects/1").status_code == 200
        mine = ada.get("/api/v1/authorization/me/access-rules").json()["accessRules"]
        assert [r["subjectId"] for r in mine["accessRules"]] == ["ml-team"]
        users = module_api.get("/api/v1/users", params={"filterBy": "username==ada@example.com"})
        [user] = users.json()
        assert user["isLocal"] is False
        assert user["groups"] == ["ml-team", "readers"]
        assert user["lastLogin"] is not None
        refused = sign_in(module_api.client, "ada@example.com", PASSWORD)
        assert refused.status_code == 401, "a person of the provider has no password here"
        renewed = module_api.client.post(
            "/api/v1/token",
            json={"grantType": "refresh_token", "refreshToken": body["refreshToken"]},
        )
        assert renewed.status_code == 200
    finally:
        module_api.delete(f"/api/v1/authorization/access-rules/{rule.json()['id']}")
        for user in module_api.get("/api/v1/users").json():
            if not user["isLocal"]:
                module_api.delete(f"/api/v1/users/{user['id']}")


def test_a_sign_in_is_refused_when_the_mandatory_claim_is_missing(
    module_api: Api, provider: OidcProvider, idp: str
) -> None:
    shown = module_api.get(f"{IDPS}/{idp}").json()
    demand = {"mandatoryClaim": {"claim": "department", "values": ["research"]}}
    replaced = {
        "type": "oidc",
        "oidcData": shown["oidcData"] | demand,
        "mappers": shown["mappers"],
    }
    assert module_api.put(f"{IDPS}/{idp}", json=replaced).status_code == 200
    browser = Browser(module_api.client, provider)
    login = browser.go(f"/sso/{idp}/sign-in?state=m")
    back = outcome(browser.sign_in_at_provider(login, BOB))
    assert back["error"] == "access_denied"
    assert "department" in back["error_description"]
    assert "code" not in back
    users = module_api.get("/api/v1/users", params={"filterBy": "username==bob@example.com"})
    assert users.json() == []


def test_a_sign_in_finished_in_another_browser_is_refused(
    module_api: Api, provider: OidcProvider, idp: str
) -> None:
    browser = Browser(module_api.client, provider)
    login = browser.go(f"/sso/{idp}/sign-in?state=x")
    module_api.client.cookies.clear()
    back = outcome(browser.sign_in_at_provider(login, ADA))
    assert back["error"] == "access_denied"
    assert "another browser" in back["error_description"]


def test_the_sign_in_steps_refuse_what_they_cannot_trust(
    module_api: Api, provider: OidcProvider, idp: str
) -> None:
    client = module_api.client
    outside = client.get(
        f"/sso/{idp}/sign-in",
        params={"redirect_uri": "https://evil.example"},
        follow_redirects=False,
    )
    assert outside.status_code == 400
    assert "redirect_uri" in outside.json()["message"]
    assert client.get("/sso/nobody/sign-in", follow_redirects=False).status_code == 404
    unknown = client.get(
        f"/sso/{idp}/callback", params={"state": "forged", "code": "c"}, follow_redirects=False
    )
    assert unknown.status_code == 400
    assert "state" in unknown.json()["message"]
    assert exchanged(client, "never-issued").status_code == 401
    missing = client.post("/api/v1/token", json={"grantType": "exchange_token", "code": "c"})
    assert missing.status_code == 400
    assert "redirectUri" in missing.json()["message"]


def test_an_unreachable_provider_answers_502(module_api: Api, provider: OidcProvider) -> None:
    body = oidc_body(provider) | {"name": "gone"}
    body["oidcData"]["discoverDocumentUrl"] = "http://127.0.0.1:9/.well-known/openid-configuration"
    assert module_api.post(IDPS, json=body).status_code == 201
    try:
        answer = module_api.client.get("/sso/gone/sign-in", follow_redirects=False)
        assert answer.status_code == 502
        assert "127.0.0.1:9" in answer.json()["message"]
    finally:
        module_api.delete(f"{IDPS}/gone")


def test_only_an_administrator_manages_providers(module_api: Api, provider: OidcProvider) -> None:
    from lockstep.domain.identity import Role
    from tests.support.users import user_with_role

    _, viewer = user_with_role(module_api, "viewer-idp@example.com", Role.VIEWER, "1")
    try:
        assert viewer.get(IDPS).status_code == 403
        assert viewer.post(IDPS, json=oidc_body(provider)).status_code == 403
        assert module_api.client.get(IDPS).status_code == 401
    finally:
        for user in module_api.get("/api/v1/users").json():
            if user["username"] == "viewer-idp@example.com":
                module_api.delete(f"/api/v1/users/{user['id']}")
