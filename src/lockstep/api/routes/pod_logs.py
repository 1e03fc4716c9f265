"""`GET /api/v1/workloads/{workloadId}/pods/{podName}/logs`: what a pod printed, as plain text,
chosen by `tailLines` and `sinceSeconds`, optionally time-stamped, and with `follow` streamed as
the pod writes until it ends. An extension of the Run:ai API, shaped like the Kubernetes one."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.responses import Response, StreamingResponse

from lockstep.api.deps import CallerDep, ServicesDep, WorkloadId
from lockstep.runtimes.base import LogQuery
from lockstep.schemas.bounds import INT32_MAX, INT64_MAX

router = APIRouter(prefix="/api/v1/workloads", tags=["workloads"])

TEXT = "text/plain; charset=utf-8"


@router.get("/{workloadId}/pods/{podName}/logs")
async def get_pod_logs(
    workload_id: WorkloadId,
    pod_name: Annotated[str, Path(alias="podName")],
    caller: CallerDep,
    services: ServicesDep,
    follow: bool = False,
    tail_lines: Annotated[int | None, Query(alias="tailLines", ge=0, le=INT64_MAX)] = None,
    since_seconds: Annotated[int | None, Query(alias="sinceSeconds", ge=1, le=INT32_MAX)] = None,
    timestamps: bool = False,
) -> Response:
    await services.calls.store(services.workloads.pod, caller, str(workload_id), pod_name)
    since = None if since_seconds is None else services.clock() - timedelta(seconds=since_seconds)
    query = LogQuery(tail_lines=tail_lines, since=since, timestamps=timestamps, follow=follow)
    lines = services.logs.stream(str(workload_id), pod_name, query)
    if follow:
        return StreamingResponse(lines, media_type=TEXT)
    return Response("".join([line async for line in lines]), media_type=TEXT)
