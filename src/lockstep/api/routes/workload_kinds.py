"""`/api/v1/workloads/distributed`, `/trainings` and `/workspaces`: create (or, with
`dryRun=true`, render), get, delete, suspend and resume — the same five routes for every kind,
built from one table of kinds and their request bodies."""

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
from lockstep.domain.kinds import TRAITS, WorkloadKind
from lockstep.schemas.distributed import DistributedCreationRequest
from lockstep.schemas.single_pod import (
    CreationRequest,
    TrainingCreationRequest,
    WorkspaceCreationRequest,
)

REQUEST_MODELS: dict[WorkloadKind, type[CreationRequest]] = {
    WorkloadKind.DISTRIBUTED: DistributedCreationRequest,
    WorkloadKind.TRAINING: TrainingCreationRequest,
    WorkloadKind.WORKSPACE: WorkspaceCreationRequest,
}

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


def router_for(kind: WorkloadKind) -> APIRouter:
    """The five routes of one kind's collection."""
    traits = TRAITS[kind]
    model = REQUEST_MODELS[kind]
    router = APIRouter(prefix=f"/api/v1/workloads/{traits.path}", tags=[traits.path])

    @router.post("", status_code=202, name=f"create_{traits.path}")
    async def create(
        caller: CallerDep,
        services: ServicesDep,
        body: BodyDep,
        dry_run: DryRun = False,
        runtime: RuntimeName = None,
    ) -> Response:
        request = await parse_body(model, body, bounds=services.bounds)
        large = len(body) > LARGE_BODY_BYTES
        if dry_run:
            return await _dry_run(caller, services, request, runtime, large=large)
        # Checking a large request's rules takes long enough to be done off the event loop.
        store = services.calls.store_off_loop if large else services.calls.store
        workload = await store(services.workloads.create, caller, request)
        return json_response(views.workload_body(workload), 202)

    @router.get("/{workloadId}", name=f"get_{traits.path}")
    async def get(workload_id: WorkloadId, caller: CallerDep, services: ServicesDep) -> Response:
        workload = await services.calls.store(
            services.workloads.get, caller, str(workload_id), kind
        )
        return json_response(views.workload_body(workload))

    @router.delete("/{workloadId}", status_code=202, name=f"delete_{traits.path}")
    async def delete(workload_id: WorkloadId, caller: CallerDep, services: ServicesDep) -> Response:
        await services.calls.store(services.workloads.delete, caller, str(workload_id), kind)
        return json_response(ACCEPTED, 202)

    @router.post("/{workloadId}/suspend", status_code=202, name=f"suspend_{traits.path}")
    async def suspend(
        workload_id: WorkloadId, caller: CallerDep, services: ServicesDep
    ) -> Response:
        await services.calls.store(services.workloads.suspend, caller, str(workload_id), kind)
        return json_response(ACCEPTED, 202)

    @router.post("/{workloadId}/resume", status_code=202, name=f"resume_{traits.path}")
    async def resume(workload_id: WorkloadId, caller: CallerDep, services: ServicesDep) -> Response:
        await services.calls.store(services.workloads.resume, caller, str(workload_id), kind)
        return json_response(ACCEPTED, 202)

    return router


async def _dry_run(
    caller: Principal,
    services: Services,
    request: CreationRequest,
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


routers = [router_for(kind) for kind in WorkloadKind]
