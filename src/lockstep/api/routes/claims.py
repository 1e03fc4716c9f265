"""`/api/v1/org-unit/projects/{projectId}/claims`: a lockstep extension (the Run:ai document has
no such endpoints) to create, list, get and delete the claims that workloads' `pvc` storage
mounts with `existingPvc: true` — those lockstep made for `existingPvc: false` are listed too.

    POST   …/claims          {"name": "data", "size": "10Gi"}   → 201, the claim
    GET    …/claims                                             → {"claims": [claim, …]}
    GET    …/claims/{name}                                      → the claim
    DELETE …/claims/{name}                                      → 204

A claim: `{"name", "projectId", "size" (a quantity, or null), "used" (a quantity), "createdAt",
"conditions"}`; `conditions` holds `OverSize` while it uses more than its size. Claims are
directories on this machine, measured when asked for: the service runs on a worker thread.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import field_validator
from starlette.responses import Response

from lockstep.api.deps import BodyDep, CallerDep, ProjectId, ServicesDep
from lockstep.api.responses import json_response, parse_body
from lockstep.domain.claims import Claim, readable
from lockstep.domain.clock import iso
from lockstep.domain.quantities import binary_quantity
from lockstep.schemas.base import WireModel

router = APIRouter(tags=["claims"])

CLAIMS = "/api/v1/org-unit/projects/{projectId}/claims"
OVER_SIZE = "OverSize"
Name = Annotated[str, Path(alias="name")]


class ClaimCreationRequest(WireModel):
    """`POST …/claims`: a name (a DNS-1123 label) and, optionally, a size (a Kubernetes
    quantity of bytes; a JSON number is taken as bytes)."""

    name: str
    size: str | None = None

    @field_validator("size", mode="before")
    @classmethod
    def _bytes(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value


def claim_view(claim: Claim) -> dict[str, Any]:
    """A claim as the API shows it."""
    conditions = []
    if claim.over_size:
        assert claim.size_bytes is not None
        conditions.append(
            {
                "type": OVER_SIZE,
                "status": "True",
                "message": f"uses {readable(claim.used_bytes)} of its {readable(claim.size_bytes)}",
            }
        )
    return {
        "name": claim.name,
        "projectId": claim.project_id,
        "size": None if claim.size_bytes is None else binary_quantity(claim.size_bytes),
        "used": binary_quantity(claim.used_bytes),
        "createdAt": iso(claim.created_at),
        "conditions": conditions,
    }


@router.get(CLAIMS)
async def get_claims(project_id: ProjectId, caller: CallerDep, services: ServicesDep) -> Response:
    claims = await services.calls.blocking(services.claims.claims, caller, project_id)
    return json_response({"claims": [claim_view(c) for c in claims]})


@router.post(CLAIMS, status_code=201)
async def create_claim(
    project_id: ProjectId, caller: CallerDep, services: ServicesDep, body: BodyDep
) -> Response:
    request = await parse_body(ClaimCreationRequest, body)
    claim = await services.calls.blocking(
        services.claims.create, caller, project_id, name=request.name, size=request.size
    )
    return json_response(claim_view(claim), 201)


@router.get(CLAIMS + "/{name}")
async def get_claim(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    claim = await services.calls.blocking(services.claims.claim, caller, project_id, name)
    return json_response(claim_view(claim))


@router.delete(CLAIMS + "/{name}", status_code=204)
async def delete_claim(
    project_id: ProjectId, name: Name, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.blocking(services.claims.delete, caller, project_id, name)
    return Response(status_code=204)
