"""`GET /api/v1/scheduling/queue` (an extension, behind `lockstep queue`): per project the
shares the last scheduling cycle found in each node pool and the waiting workloads in the
order they will be admitted, each with why it waits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.responses import Response

from lockstep.api.deps import CallerDep, ServicesDep
from lockstep.api.responses import json_response
from lockstep.services.scheduling import ProjectQueue

router = APIRouter(tags=["scheduling"])

ProjectFilter = Annotated[str | None, Query(alias="projectId", max_length=20, pattern=r"^\d+$")]


@router.get("/api/v1/scheduling/queue")
async def get_queue(
    caller: CallerDep, services: ServicesDep, project_id: ProjectFilter = None
) -> Response:
    queues = await services.calls.store(services.scheduling.queue, caller, project_id)
    return json_response({"projects": [_project_queue(q) for q in queues]})


def _project_queue(queue: ProjectQueue) -> dict[str, Any]:
    project = queue.project
    return {
        "projectId": project.id,
        "projectName": project.name,
        "departmentId": project.department_id,
        "nodePools": [
            {"nodePool": pool, **shares} for pool, shares in sorted(queue.shares.items())
        ],
        "waiting": [
            {
                "workloadId": w.workload.id,
                "name": w.workload.name,
                "position": w.position,
                "phase": w.workload.actual_phase.value,
                "phaseMessage": w.workload.phase_message,
                "phaseReason": w.workload.phase_reason,
                "priority": w.workload.priority,
                "priorityClassName": w.workload.priority_class,
            }
            for w in queue.waiting
        ],
    }
