"""Callers with a role, and projects to give them, for tests of who may do what: an
application granted a role on a scope through the in-process server's identity service, or
through `lockstep admin` for a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

from lockstep.domain.identity import Role, ScopeType
from lockstep.services.identity import IdentityService
from tests.support.api import Api
from tests.support.server import LiveServer


def app_with_role(
    api: Api, name: str, role: Role, scope_id: str, *, scope: ScopeType = ScopeType.PROJECT
) -> Api:
    """A client logged in as a new application holding `role` on the scope."""
    identity: IdentityService = api.client.app.state.services.identity  # type: ignore[attr-defined]
    _, secret = identity.create_application(name)
    identity.grant(client_id=name, role=role, scope_type=scope, scope_id=scope_id)
    return Api.login(api.client, name, secret)


def live_application(server: LiveServer, name: str, role: str, scope: str) -> Api:
    """A new application of a live server holding `role` on `scope` (`project:1`), made with
    `lockstep admin` as an administrator would, logged in on a client of its own (close it)."""
    command = [sys.executable, "-m", "lockstep", "admin", "create-application", name]
    result = subprocess.run(
        [*command, "--role", role, "--scope", scope],
        env={**server.environment(), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=True,
        cwd=server.cwd,
    )
    created = json.loads(result.stdout)
    client = httpx.Client(base_url=server.url, timeout=30.0)
    return Api.login(client, str(created["clientId"]), str(created["clientSecret"]))


def new_project(api: Api, name: str) -> str:
    """A new project of the server's cluster; its id."""
    response = api.post(
        "/api/v1/org-unit/projects",
        json={"name": name, "clusterId": api.cluster_id(), "resources": []},
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def make_privileged(api: Api, project_id: str = "1") -> None:
    """Let a project's pods ask for anything (Pod Security level privileged), as an
    administrator would for the documentation's example, which mounts host paths."""
    from lockstep.auth.tokens import OPERATOR
    from lockstep.domain.pod_security import PodSecurityLevel
    from lockstep.services.organization import OrganizationService

    organization: OrganizationService = api.client.app.state.services.organization  # type: ignore[attr-defined]
    organization.set_pod_security_level(OPERATOR, project_id, PodSecurityLevel.PRIVILEGED)
