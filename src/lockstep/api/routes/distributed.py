"""`/api/v1/workloads/distributed`: create (or, with `dryRun=true`, render), get, delete,
suspend and resume."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api import views
from lockstep.api.deps import BodyDep, CallerDep, Services, ServicesDep, WorkloadId
from lockstep.api.responses import ACCEPTED, LARGE_BODY_BYTES, json_response, parse_body
from lockstep.auth.tokens import Principal
from lockstep.config import RuntimeKind
from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.distributed import DistributedCreationRequest

router = APIRouter(prefix="/api/v1/workloads/distributed", tags=["distributed"])


DryRun = Annotated[
    bool,
    Query(
        alias="dryRun",
        description="Check and render the workload (an extension); store and run nothing.",
    ),
]
RuntimeName = Annotated[
    str | None,
    Query(description="With dryRun: the runtime to render for (local or kubernetes)."),
]


@router.post("", status_code=202)
async def create_distributed(
    caller: CallerDep,
    services: ServicesDep,
    body: BodyDep,
    dry_run: DryRun = False,
    runtime: RuntimeName = None,
) -> Response:
    request = await parse_body(DistributedCreationRequest, body, bounds=services.bounds)
    large = len(body) > LARGE_BODY_BYTES
    if dry_run:
        return await _dry_run(caller, services, request, runtime, large=large)
    # Checking a large request's rules takes long enough to be done off the event loop.
    store = services.calls.store_off_loop if large else services.calls.store
    workload = await store(services.workloads.create, caller, request)
    return json_response(views.distributed_workload(workload), 202)


async def _dry_run(
    caller: Principal,
    services: Services,
    request: DistributedCreationRequest,
    runtime: str | None,
    *,
    large: bool,
) -> Response:
    """200 with what the runtime would run: the checks of a creation, nothing stored."""
    try:
        kind = services.runtime if runtime is None else RuntimeKind(runtime)
    except ValueError:
        choices = " or ".join(kind.value for kind in RuntimeKind)
        raise InvalidRequest.of("runtime", f"must be {choices}, not {runtime!r}") from None
    store = services.calls.store_off_loop if large else services.calls.store
    workload = await store(services.workloads.prepare, caller, request)
    # Rendering a large gang (every pod's launch or manifest) is heavy: off the event loop.
    return json_response(await services.calls.blocking(services.renderers[kind], workload))


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
