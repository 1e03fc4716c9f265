"""Request dependencies: the services built by `create_app`, the caller (kept in the request's
state for the audit trail, api/audit_trail.py), the raw body (checked storable), and the check
every request's path and query pass (no NUL characters)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from anyio import to_thread
from fastapi import Depends, Path, Request

from lockstep.api.calls import Calls
from lockstep.api.responses import LARGE_BODY_BYTES
from lockstep.api.storable_json import NUL_RULE, check_storable
from lockstep.api.token_guard import TokenGuard
from lockstep.auth.tokens import Principal, TokenAuthority
from lockstep.config import RuntimeKind
from lockstep.domain.clock import Clock
from lockstep.domain.errors import InvalidRequest, Unauthenticated, Violation
from lockstep.domain.workload import Workload
from lockstep.runtimes.backend import Renderer
from lockstep.runtimes.base import PodLogs
from lockstep.schemas.bounds import RequestBounds
from lockstep.services.access_rules import AccessRuleService
from lockstep.services.audit import AuditLogService
from lockstep.services.claims import ClaimService
from lockstep.services.clients import ClientService
from lockstep.services.identity import IdentityService
from lockstep.services.identity_providers import IdentityProviderService
from lockstep.services.metrics.series import MetricsService
from lockstep.services.metrics.telemetry import TelemetryService
from lockstep.services.node_pools import NodePoolService
from lockstep.services.nodes import NodeService
from lockstep.services.organization import OrganizationService
from lockstep.services.scheduling import SchedulingService
from lockstep.services.secrets import SecretService
from lockstep.services.single_sign_on import SingleSignOn
from lockstep.services.token_standing import TokenStanding
from lockstep.services.users import UserService
from lockstep.services.workload_list import WorkloadList
from lockstep.services.workloads import WorkloadService


@dataclass(frozen=True, slots=True)
class Services:
    workloads: WorkloadService
    workload_list: WorkloadList
    """The list's pages, each workload's item rendered once per version."""
    organization: OrganizationService
    scheduling: SchedulingService
    identity: IdentityService
    access_rules: AccessRuleService
    clients: ClientService
    users: UserService
    identity_providers: IdentityProviderService
    single_sign_on: SingleSignOn
    standing: TokenStanding
    """Whether a token still stands (its user's logout, its client's new secret, …)."""
    secrets: SecretService
    claims: ClaimService
    nodes: NodeService
    node_pools: NodePoolService
    metrics: MetricsService
    telemetry: TelemetryService
    tokens: TokenAuthority
    calls: Calls
    logs: PodLogs
    renderers: Mapping[RuntimeKind, Renderer]
    """The dry run of each runtime."""
    runtime: RuntimeKind
    """The runtime this server drives."""
    image_environments: Mapping[str, pathlib.Path]
    unapplied: Callable[[Workload], list[str]]
    """What of a workload the backend does not apply (the local runtime without a sandbox:
    what it asks that only a sandbox gives)."""
    public_host: str
    public_url: str | None
    """lockstep's URL as browsers reach it (LOCKSTEP_PUBLIC_URL), or None: each request's."""
    clock: Clock
    version: str
    bounds: RequestBounds
    """What a request may hold (LOCKSTEP_MAX_*)."""
    token_guard: TokenGuard
    """The rates and turns of checks of a secret (LOCKSTEP_TOKEN_*)."""
    audit: AuditLogService


async def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def _caller(request: Request) -> Principal:
    header = request.headers.get("authorization")
    if not header:
        raise Unauthenticated("a bearer token is required: send 'Authorization: Bearer <token>'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    services: Services = request.app.state.services
    principal = services.tokens.verify(token.strip())
    if not services.standing.is_fresh(principal):
        await services.calls.store(services.standing.refresh, principal)
    services.standing.check(principal)
    setattr(request.state, PRINCIPAL_STATE, principal)
    return principal


PRINCIPAL_STATE = "principal"
"""Where `_caller` leaves the caller in the request's state (the audit trail reads it)."""


def client_address(request: Request) -> str:
    """The address the request came from, as uvicorn reports it (behind a proxy it trusts,
    `FORWARDED_ALLOW_IPS`, the one the proxy names)."""
    return request.client.host if request.client is not None else "unknown"


async def _body(request: Request) -> bytes:
    """The body, every value of it storable (api/storable_json.py): checked on a worker thread
    when it is large, so that no request holds the event loop for long."""
    body = await request.body()
    if len(body) > LARGE_BODY_BYTES:
        await to_thread.run_sync(check_storable, body)
    else:
        check_storable(body)
    return body


async def no_nul_in_url(request: Request) -> None:
    """Refuse NUL characters in the path's parameters and in the query (names and values),
    naming each: PostgreSQL cannot store or compare them."""
    violations = [
        Violation(name, NUL_RULE)
        for name, value in request.path_params.items()
        if "\x00" in str(value)
    ]
    for name, value in request.query_params.multi_items():
        if "\x00" in name:
            violations.append(Violation("query", f"parameter {name!r}: {NUL_RULE}"))
        elif "\x00" in value:
            violations.append(Violation(name, NUL_RULE))
    if violations:
        raise InvalidRequest(violations)


ServicesDep = Annotated[Services, Depends(_services)]
CallerDep = Annotated[Principal, Depends(_caller)]
BodyDep = Annotated[bytes, Depends(_body)]
WorkloadId = Annotated[UUID, Path(alias="workloadId")]
ProjectId = Annotated[str, Path(alias="projectId")]
DepartmentId = Annotated[str, Path(alias="departmentId")]
NodepoolId = Annotated[str, Path(alias="nodepoolId")]
ClusterUuid = Annotated[UUID, Path(alias="clusterUuid")]
