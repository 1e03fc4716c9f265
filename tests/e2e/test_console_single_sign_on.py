"""The console's sign-in through an identity provider, in headless Chromium against a real
`lockstep serve` and the test OpenID Connect provider (tests/support/oidc_provider.py): a
person presses "Sign in with oidc", signs in at the provider's own page, comes back signed in
to the console as themselves, and sees what their provider group's access rule grants; a
person the provider vouches for but the mandatory claim refuses comes back with the reason."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.conftest import running
from tests.e2e.test_console import browser, checked, element, until
from tests.support.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    OidcProvider,
    Person,
    running_provider,
)
from tests.support.server import LiveServer

__all__ = ["browser"]  # the fixture, used by name

ADA = Person("ada", "ada-provider-pass", "ada@example.com", ("ml-team",))


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    with running_provider([ADA]) as started:
        yield started


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str, provider: OidcProvider) -> Iterator[LiveServer]:
    with running(LiveServer(tmp_path / "data", sqlite_url)) as live:
        admin = live.api()
        created = admin.post("/api/v1/idps", json=provider_body(provider))
        assert created.status_code == 201, created.text
        provider.redirect_uris.append(admin.get("/api/v1/idps/oidc").json()["redirectUri"])
        rule = {
            "subjectType": "group",
            "subjectId": "ml-team",
            "roleId": 8,
            "scopeType": "project",
            "scopeId": "1",
        }
        granted = admin.post("/api/v1/authorization/access-rules", json=rule)
        assert granted.status_code == 201, granted.text
        yield live


def provider_body(provider: OidcProvider, **more: Any) -> dict[str, Any]:
    return {
        "type": "oidc",
        "oidcData": {
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
            "discoverDocumentUrl": provider.discovery_url,
            "scopes": ["openid", "email", "groups"],
        }
        | more,
    }


def at_the_provider(browser: webdriver.Chrome, server: LiveServer, provider: OidcProvider) -> None:
    """From the console's sign-in page through the provider's login form."""
    browser.get(f"{server.url}/")
    button = element(browser, "#sso-oidc")
    assert button.text == "Sign in with oidc"
    checked(browser, "sign-in-with-provider")
    button.click()
    until(browser, lambda: browser.current_url.startswith(provider.url), "the provider's page")
    element(browser, "#provider-username").send_keys(ADA.username)
    element(browser, "#provider-password").send_keys(ADA.password)
    element(browser, "#provider-sign-in").click()
    until(browser, lambda: browser.current_url.startswith(server.url), "back at the console")


def test_a_person_signs_in_through_the_provider(
    server: LiveServer, provider: OidcProvider, browser: webdriver.Chrome
) -> None:
    at_the_provider(browser, server, provider)
    element(browser, "#workload-rows")
    assert browser.current_url == f"{server.url}/console/#/workloads", "the code is gone"
    token = browser.execute_script("return sessionStorage.getItem('lockstep.token')")
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == ADA.email
    asked = provider.authorizations[-1]
    assert asked["code_challenge_method"] == "S256"
    checked(browser, "workloads-after-provider-sign-in")

    browser.get(f"{server.url}/console/#/access")
    until(
        browser,
        lambda: "ml-team" in browser.find_element(By.CSS_SELECTOR, "#view").text,
        "the group's rule among the person's own",
    )
    checked(browser, "access-of-a-provider-group")
    [user] = [u for u in server.api().get("/api/v1/users").json() if u["username"] == ADA.email]
    assert user["isLocal"] is False
    assert user["groups"] == ["ml-team"]


def test_a_refused_person_is_told_why(
    server: LiveServer, provider: OidcProvider, browser: webdriver.Chrome
) -> None:
    demand = {"mandatoryClaim": {"claim": "department", "values": ["research"]}}
    replaced = server.api().put("/api/v1/idps/oidc", json=provider_body(provider, **demand))
    assert replaced.status_code == 200, replaced.text
    at_the_provider(browser, server, provider)
    refusal = element(browser, "#sign-in-error")
    until(browser, lambda: "department" in refusal.text, "the reason shown")
    assert browser.execute_script("return sessionStorage.getItem('lockstep.token')") is None
    checked(browser, "sign-in-refused-by-mandatory-claim")
