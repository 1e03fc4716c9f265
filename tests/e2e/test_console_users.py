"""The web console's users, in headless Chromium against a real `lockstep serve`: an
administrator creates a user (its one-time password shown once), a person signs in with their
email and password, keeps working when their access token is refused (the refresh token renews
it), is told they may not manage users, changes their password; the administrator signs a user
out and deletes them, grants and revokes access rules and manages service accounts on the
access page, where everyone sees their own rules. Every page is checked as
tests/e2e/test_console.py checks its pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.select import Select

from tests.conftest import running
from tests.e2e.test_console import browser, checked, element, sign_in, until
from tests.support.api import Api, poll
from tests.support.console_checks import browser_errors
from tests.support.server import LiveServer
from tests.support.users import PASSWORD
from tests.support.users import sign_in as password_grant

__all__ = ["browser"]  # the fixture, used by name

EMAIL = "ada@example.com"


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    with running(LiveServer(tmp_path / "data", sqlite_url)) as live:
        yield live


def click(browser: webdriver.Chrome, css: str) -> None:
    """Click `css` once it is there, again if the page redrew it between finding and clicking."""

    def attempt() -> bool:
        browser.find_element(By.CSS_SELECTOR, css).click()
        return True

    until(browser, attempt, f"to click {css}")


def said(browser: webdriver.Chrome, words: str) -> None:
    until(browser, lambda: words in browser.find_element(By.ID, "status").text, repr(words))


def users_listed(browser: webdriver.Chrome) -> list[str]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#users tbody tr")
    return [str(row.get_attribute("data-user")) for row in rows]


def sign_in_as_user(browser: webdriver.Chrome, server: LiveServer, password: str) -> None:
    browser.get(f"{server.url}/#/signin")
    element(browser, "#username").send_keys(EMAIL)
    element(browser, "#password").send_keys(password, Keys.ENTER)
    element(browser, "#workload-rows")


def test_an_administrator_makes_a_user_who_signs_in_and_changes_their_password(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    admin = server.api()
    sign_in(browser, server)
    browser.get(f"{server.url}/#/users")
    element(browser, "#new-user-email").send_keys(EMAIL, Keys.ENTER)
    shown = element(browser, "#one-time-password code").text
    until(browser, lambda: users_listed(browser) == [EMAIL], "the new user listed")
    checked(browser, "users")
    assert password_grant(admin.client, EMAIL, shown).status_code == 200

    click(browser, "#sign-out")
    checked(
        browser, "sign-in-as-user", lambda: [] if element(browser, "#username") else ["no form"]
    )
    sign_in_as_user(browser, server, shown)
    token = browser.execute_script("return sessionStorage.getItem('lockstep.token')")
    refresh = browser.execute_script("return sessionStorage.getItem('lockstep.refresh')")
    assert token and refresh and not browser.get_cookies()

    # A refused access token is renewed with the refresh token, and the page still loads.
    browser.execute_script("sessionStorage.setItem('lockstep.token', 'x.e30.y')")
    browser.get(f"{server.url}/#/users")
    assert "Only a System administrator manages users." in element(browser, "#not-allowed").text
    renewed = browser.execute_script("return sessionStorage.getItem('lockstep.token')")
    assert renewed not in {token, "x.e30.y"}
    # The browser reports the two refusals the page expects, and nothing else: the forged
    # token's 401 (then renewed) and the 403 of a user who may not list users.
    refusals = [e.split(" - ")[-1] for e in browser_errors(browser)]
    assert refusals == [
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)",
        "Failed to load resource: the server responded with a status of 403 (Forbidden)",
    ]
    checked(browser, "users-not-allowed")

    element(browser, "#current-password").send_keys(shown)
    element(browser, "#new-password").send_keys(PASSWORD, Keys.ENTER)
    element(browser, "#sign-in")
    assert "password changed" in browser.find_element(By.ID, "status").text
    assert password_grant(admin.client, EMAIL, shown).status_code == 401
    sign_in_as_user(browser, server, PASSWORD)
    checked(browser, "workloads-as-user")


def test_an_administrator_signs_a_user_out_and_deletes_them(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    admin = server.api()
    created = admin.post("/api/v1/users", json={"email": EMAIL})
    assert created.status_code == 201, created.text
    user_id, password = created.json()["id"], created.json()["tempPassword"]
    session = Api(admin.client, password_grant(admin.client, EMAIL, password).json()["accessToken"])
    assert session.get(f"/api/v1/users/{user_id}").status_code == 200

    sign_in(browser, server)
    browser.get(f"{server.url}/#/users")
    click(browser, f'tr[data-user="{EMAIL}"] button.sign-out')
    said(browser, f"signed out {EMAIL}: done")
    poll(
        lambda: True if session.get(f"/api/v1/users/{user_id}").status_code == 401 else None,
        timeout=5,
        what="the user's token to be refused",
    )
    click(browser, f'tr[data-user="{EMAIL}"] button.reset')
    said(browser, f"reset the password of {EMAIL}: done")
    again = element(browser, "#one-time-password code").text
    assert again != password
    assert password_grant(admin.client, EMAIL, again).status_code == 200

    click(browser, f'tr[data-user="{EMAIL}"] button.delete')
    click(browser, "#confirm-ok")
    until(browser, lambda: users_listed(browser) == [], "the user gone from the list")
    checked(browser, "users-after-delete")
    assert admin.get(f"/api/v1/users/{user_id}").status_code == 404


def test_the_access_page_grants_revokes_and_manages_service_accounts(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    admin = server.api()
    created = admin.post("/api/v1/users", json={"email": EMAIL})
    assert created.status_code == 201, created.text
    sign_in(browser, server)
    browser.get(f"{server.url}/#/access")
    own = until(
        browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#own-rules tbody tr"), "own rules"
    )
    assert "System administrator" in own[0].text

    element(browser, "#grant-subject-id").send_keys(EMAIL)
    Select(element(browser, "#grant-role")).select_by_visible_text("L1 researcher")
    element(browser, "#grant-scope-id").send_keys("1", Keys.ENTER)
    said(browser, "granted rule")
    rules = admin.get("/api/v1/authorization/access-rules", params={"subjectIds": EMAIL}).json()
    (granted,) = rules["accessRules"]
    assert (granted["roleName"], granted["scopeId"]) == ("L1 researcher", "1")
    element(browser, f'tr[data-rule="{granted["id"]}"]')

    element(browser, "#new-account-name").send_keys("ci-bot", Keys.ENTER)
    secret = element(browser, "#client-secret code").text
    token = admin.client.post(
        "/api/v1/token",
        json={"grantType": "client_credentials", "clientId": "ci-bot", "clientSecret": secret},
    )
    assert token.status_code == 200
    click(browser, 'tr[data-account="ci-bot"] button.toggle')
    said(browser, "disabled ci-bot: done")
    accounts = {a["name"]: a for a in admin.get("/api/v1/service-accounts").json()}
    assert accounts["ci-bot"]["enabled"] is False
    checked(browser, "access")
    click(browser, 'tr[data-account="ci-bot"] button.delete')
    click(browser, "#confirm-ok")
    said(browser, "deleted ci-bot: done")
    assert [a["name"] for a in admin.get("/api/v1/service-accounts").json()] == ["admin"]

    # The user sees their own rule, and nothing to grant or manage.
    password = admin.post(f"/api/v1/users/{created.json()['id']}/password").json()["tempPassword"]
    click(browser, "#sign-out")
    sign_in_as_user(browser, server, password)
    browser.get(f"{server.url}/#/access")
    mine = until(
        browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#own-rules tbody tr"), "own rules"
    )
    assert [row.text for row in mine] == [f"user {EMAIL} L1 researcher project default"]
    assert not browser.find_elements(By.ID, "grant")
    assert not browser.find_elements(By.ID, "service-accounts")
    checked(browser, "access-as-user")

    # Revoked by the administrator, the rule is gone from the user's page.
    assert admin.delete(f"/api/v1/authorization/access-rules/{granted['id']}").status_code == 204
    browser.refresh()
    until(
        browser,
        lambda: (
            browser.find_elements(By.CSS_SELECTOR, "#own-rules tbody")
            and not browser.find_elements(By.CSS_SELECTOR, "#own-rules tbody tr")
        ),
        "no rule left",
    )
