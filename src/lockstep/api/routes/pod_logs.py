"""`GET /api/v1/workloads/{workloadId}/pods/{podName}/logs`: what a pod printed, as plain text,
chosen by `tailLines` and `sinceSeconds`, optionally time-stamped, and with `follow` streamed as
the pod writes until it ends. An extension of the Run:ai API, shaped like the Kubernetes one.

Every answer is streamed a piece at a time, as the client takes it, so that a client that does
not read costs a piece, not the log; and each holds one of its caller's log streams while it is
open (`request.app.state.log_streams`, services/stream_slots.py): past the caller's share, or
past the server's, it is refused with 429."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from lockstep.api.deps import CallerDep, ServicesDep, WorkloadId
from lockstep.api.held_streams import HeldStream
from lockstep.runtimes.base import LogQuery
from lockstep.schemas.bounds import INT32_MAX, INT64_MAX
from lockstep.services.stream_slots import StreamSlots

router = APIRouter(prefix="/api/v1/workloads", tags=["workloads"])

TEXT = "text/plain; charset=utf-8"


@router.get("/{workloadId}/pods/{podName}/logs")
async def get_pod_logs(
    request: Request,
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
    slots: StreamSlots = request.app.state.log_streams
    slot = slots.take(caller)  # StreamsExhausted: 429
    since = None if since_seconds is None else services.clock() - timedelta(seconds=since_seconds)
    query = LogQuery(tail_lines=tail_lines, since=since, timestamps=timestamps, follow=follow)
    lines = services.logs.stream(str(workload_id), pod_name, query)
    return HeldStream(_pieces(lines), release=slot.release, media_type=TEXT)


async def _pieces(lines: AsyncIterator[str]) -> AsyncGenerator[str, None]:
    """The reader's pieces; the reader is closed when they are (HeldStream closes them)."""
    try:
        async for piece in lines:
            yield piece
    finally:
        if isinstance(lines, AsyncGenerator):
            await lines.aclose()
