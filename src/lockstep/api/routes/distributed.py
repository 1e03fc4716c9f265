"""`/api/v1/workloads/distributed`: create, get, delete, suspend and resume."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep
from lockstep.api.responses import ACCEPTED, json_response, parse_body
from lockstep.schemas.distributed import DistributedCreationRequest

router = APIRouter(prefix="/api/v1/workloads/distributed", tags=["distributed"])


@router.post("", status_code=202)
def create_distributed(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = parse_body(DistributedCreationRequest, body)
    row = services.workloads.create(caller, request)
    return json_response(views.distributed_workload(row.workload), 202)


@router.get("/{workloadId}")
def get_distributed(workloadId: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    row = services.workloads.get(caller, str(workloadId))
    return json_response(views.distributed_workload(row.workload))


@router.delete("/{workloadId}", status_code=202)
def delete_distributed(workloadId: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    services.workloads.delete(caller, str(workloadId))
    return json_response(ACCEPTED, 202)


@router.post("/{workloadId}/suspend", status_code=202)
def suspend_distributed(workloadId: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    services.workloads.suspend(caller, str(workloadId))
    return json_response(ACCEPTED, 202)


@router.post("/{workloadId}/resume", status_code=202)
def resume_distributed(workloadId: UUID, caller: CallerDep, services: ServicesDep) -> Response:  # noqa: N803
    services.workloads.resume(caller, str(workloadId))
    return json_response(ACCEPTED, 202)
