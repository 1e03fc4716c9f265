"""`/api/v1/workloads/distributed`: create, get, delete, suspend and resume."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, ServicesDep, WorkloadId
from lockstep.api.responses import ACCEPTED, json_response, parse_body
from lockstep.schemas.distributed import DistributedCreationRequest

router = APIRouter(prefix="/api/v1/workloads/distributed", tags=["distributed"])


@router.post("", status_code=202)
async def create_distributed(caller: CallerDep, services: ServicesDep, body: BodyDep) -> Response:
    request = parse_body(DistributedCreationRequest, body)
    workload = await services.calls.store(services.workloads.create, caller, request)
    return json_response(views.distributed_workload(workload), 202)


@router.get("/{workloadId}")
async def get_distributed(
    workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
) -> Response:
    workload = await services.calls.store(services.workloads.get, caller, str(workload_id))
    return json_response(views.distributed_workload(workload))


@router.delete("/{workloadId}", status_code=202)
async def delete_distributed(
    workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.workloads.delete, caller, str(workload_id))
    return json_response(ACCEPTED, 202)


@router.post("/{workloadId}/suspend", status_code=202)
async def suspend_distributed(
    workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.workloads.suspend, caller, str(workload_id))
    return json_response(ACCEPTED, 202)


@router.post("/{workloadId}/resume", status_code=202)
async def resume_distributed(
    workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
) -> Response:
    await services.calls.store(services.workloads.resume, caller, str(workload_id))
    return json_response(ACCEPTED, 202)
