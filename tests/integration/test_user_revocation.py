"""A user's tokens are refused on every API process within a second of their logout, their
deletion or the removal of their last access rule: `lockstep serve` with two API processes on
PostgreSQL, each asked over connections of its own (so that both serve the user before and
after), the change made through the other process or the store.

Each process trusts what it read of a user for at most half a second
(services/user_standing.py), so every request sent a second after the change must be refused;
the delay each test saw is printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.conftest import fresh_database, running
from tests.support.api import Api
from tests.support.server import LiveServer
from tests.support.users import tokens

API_PROCESSES = 2
PROBES = 16
"""Requests, each on a new connection, that one look at the servers sends: enough that both
processes answer some."""
BOUND_SECONDS = 1.0


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("revocation")
    with (
        fresh_database(request, "postgresql", directory) as url,
        running(
            LiveServer(directory / "data", url, settings={"API_PROCESSES": str(API_PROCESSES)})
        ) as live,
    ):
        yield live


def statuses(server: LiveServer, token: str, path: str) -> list[int]:
    """The answers to `PROBES` requests, each on a connection of its own."""
    answers = []
    for _ in range(PROBES):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            response = client.get(path, headers={"Authorization": f"Bearer {token}"})
        answers.append(response.status_code)
    return answers


def refused_within_the_bound(
    server: LiveServer, token: str, path: str, change: Callable[[], None], refusal: int
) -> float:
    """Make `change`, then look until a second has passed since it returned and once more:
    every answer of that last look is `refusal`. Returns the delay until the first look whose
    every answer was a refusal."""
    assert set(statuses(server, token, path)) == {200}
    change()
    changed = time.monotonic()
    first_refused: float | None = None
    while True:
        looked_at = time.monotonic()
        answers = statuses(server, token, path)
        if first_refused is None and set(answers) == {refusal}:
            first_refused = looked_at - changed
        if looked_at - changed >= BOUND_SECONDS:
            assert set(answers) == {refusal}, answers
            assert first_refused is not None
            print(f"refused on every process {first_refused:.3f} s after the change")
            return first_refused


def new_user(admin: Api, email: str) -> tuple[str, str]:
    created = admin.post("/api/v1/users", json={"email": email})
    assert created.status_code == 201, created.text
    user_id, password = created.json()["id"], created.json()["tempPassword"]
    return str(user_id), str(password)


def admin_command(server: LiveServer, *arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "lockstep", "admin", *arguments],
        env={**server.environment(), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=True,
        cwd=server.cwd,
    )
    return result.stdout


def test_logout_refuses_the_users_token_on_every_process(server: LiveServer) -> None:
    admin = server.api()
    user_id, password = new_user(admin, "logout@example.com")
    token = tokens(admin.client, "logout@example.com", password)["accessToken"]

    def logout() -> None:
        assert admin.post(f"/api/v1/users/{user_id}/logout").status_code == 200

    refused_within_the_bound(server, token, f"/api/v1/users/{user_id}", logout, 401)


def test_deletion_refuses_the_users_token_on_every_process(server: LiveServer) -> None:
    admin = server.api()
    user_id, password = new_user(admin, "deleted@example.com")
    token = tokens(admin.client, "deleted@example.com", password)["accessToken"]

    def delete() -> None:
        assert admin.delete(f"/api/v1/users/{user_id}").status_code == 204

    refused_within_the_bound(server, token, f"/api/v1/users/{user_id}", delete, 401)


def test_removing_the_last_rule_refuses_the_user_on_every_process(server: LiveServer) -> None:
    admin = server.api()
    _, password = new_user(admin, "viewer@example.com")
    granted = admin_command(
        server, "grant", "--user", "viewer@example.com", "--role", "Viewer", "--scope", "project:1"
    )
    rule_id = str(json.loads(granted)["accessRuleId"])
    token = tokens(admin.client, "viewer@example.com", password)["accessToken"]

    def revoke() -> None:
        admin_command(server, "revoke", rule_id)

    refused_within_the_bound(server, token, "/api/v1/org-unit/projects/1", revoke, 403)
