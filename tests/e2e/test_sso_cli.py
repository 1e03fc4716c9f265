"""`lockstep login --sso`, run as a user runs it (a subprocess) against a live server and the
test OpenID Connect provider, with a stand-in for the browser (tests/support/
browser_stand_in.py, as `$BROWSER`) that signs in at the provider's login form: the context
keeps the user and their refresh token, and later commands run as that user; a person whom
lockstep refuses (the provider's mandatory claim) leaves no context behind (exit status 4)."""

from __future__ import annotations

import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import running
from tests.e2e.test_training_cli import Cli
from tests.support.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    OidcProvider,
    Person,
    running_provider,
)
from tests.support.server import LiveServer

ADA = Person("ada", "ada-provider-pass", "ada@example.com", ("ml-team",))
STAND_IN = Path(__file__).parents[1] / "support" / "browser_stand_in.py"


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    with running_provider([ADA]) as started:
        yield started


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str, provider: OidcProvider) -> Iterator[LiveServer]:
    with running(LiveServer(tmp_path / "data", sqlite_url)) as live:
        admin = live.api()
        body = {
            "type": "oidc",
            "oidcData": {
                "clientId": CLIENT_ID,
                "clientSecret": CLIENT_SECRET,
                "discoverDocumentUrl": provider.discovery_url,
                "scopes": ["openid", "email", "groups"],
            },
        }
        assert admin.post("/api/v1/idps", json=body).status_code == 201
        provider.redirect_uris.append(admin.get("/api/v1/idps/oidc").json()["redirectUri"])
        rule = {
            "subjectType": "group",
            "subjectId": "ml-team",
            "roleId": 5,
            "scopeType": "project",
            "scopeId": "1",
        }
        assert admin.post("/api/v1/authorization/access-rules", json=rule).status_code == 201
        yield live


def browser_env(cli: Cli, password: str) -> dict[str, str]:
    return cli.env(
        BROWSER=f"{sys.executable} {STAND_IN} %s",
        STAND_IN_USER=ADA.username,
        STAND_IN_PASSWORD=password,
    )


def test_a_person_logs_in_through_the_provider_in_the_browser(
    server: LiveServer, tmp_path: Path
) -> None:
    cli = Cli(server, tmp_path)
    done = cli("login", "--url", server.url, "--sso", "oidc", env=browser_env(cli, ADA.password))
    assert done.stdout.startswith(f"logged in to {server.url} as context ")
    assert f"{server.url}/sso/oidc/sign-in?" in done.stderr
    rows = [line.split() for line in cli("config", "get-contexts").stdout.splitlines()]
    assert rows[1][3:] == ["user", ADA.email]
    assert stat.S_IMODE(cli.config.stat().st_mode) == 0o600
    assert ADA.password not in cli.config.read_text()
    assert [str(p["id"]) for p in cli.json("project", "list", "--json")] == ["1"]


def test_a_refused_sign_in_saves_nothing(
    server: LiveServer, provider: OidcProvider, tmp_path: Path
) -> None:
    admin = server.api()
    shown = admin.get("/api/v1/idps/oidc").json()
    demand = {"mandatoryClaim": {"claim": "department", "values": ["research"]}}
    replaced = {"type": "oidc", "oidcData": shown["oidcData"] | demand}
    assert admin.put("/api/v1/idps/oidc", json=replaced).status_code == 200
    cli = Cli(server, tmp_path)
    env = browser_env(cli, ADA.password)
    done = cli("login", "--url", server.url, "--sso", "oidc", env=env, status=4)
    assert "refused the sign-in" in done.stderr
    assert "department" in done.stderr
    assert not cli.config.exists()
