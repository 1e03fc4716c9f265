"""Users for tests: made by an administrator over the API, signed in with the password grant,
and given a role through the in-process server's identity service."""

from __future__ import annotations

from typing import Any

import httpx

from lockstep.domain.identity import Role, ScopeType
from lockstep.services.identity import IdentityService
from tests.support.api import Api

PASSWORD = "Correct-Horse-7-Battery"
"""A password that keeps the policy."""


def new_user(admin: Api, email: str) -> tuple[str, str]:
    """A new user's id and one-time password."""
    response = admin.post("/api/v1/users", json={"email": email})
    assert response.status_code == 201, response.text
    created = response.json()
    return str(created["id"]), str(created["tempPassword"])


def sign_in(client: httpx.Client, email: str, password: str) -> httpx.Response:
    return client.post(
        "/api/v1/token", json={"grantType": "password", "username": email, "password": password}
    )


def tokens(client: httpx.Client, email: str, password: str) -> dict[str, Any]:
    response = sign_in(client, email, password)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def user_with_role(
    admin: Api,
    email: str,
    role: Role,
    scope_id: str,
    *,
    scope: ScopeType = ScopeType.PROJECT,
) -> tuple[str, Api]:
    """A new user holding `role` on the scope, signed in with their one-time password: their
    id and a client with their access token."""
    user_id, password = new_user(admin, email)
    identity: IdentityService = admin.client.app.state.services.identity  # type: ignore[attr-defined]
    identity.grant(user=email, role=role, scope_type=scope, scope_id=scope_id)
    return user_id, Api(admin.client, tokens(admin.client, email, password)["accessToken"])
