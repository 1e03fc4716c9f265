"""The scheduler's view for the people waiting on it: per project, its shares in each node
pool (deserved, fair share, allocated, requested, as the last scheduling cycle found them)
and its waiting workloads in the order they will be admitted, each with why it waits.
Called by the `GET /api/v1/scheduling/queue` route (an extension) behind `lockstep queue`."""

from __future__ import annotations

from dataclasses import dataclass

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.errors import NotFound
from lockstep.domain.organization import Project
from lockstep.domain.workload import Workload
from lockstep.services.access import access_of
from lockstep.store.database import Database
from lockstep.store.scheduling import Shares

QUEUE_LIMIT = 100
"""The most waiting workloads shown per project."""


@dataclass(frozen=True, slots=True)
class Waiting:
    workload: Workload
    position: int | None
    """1: the next of its project to be admitted; None: parked (it could never fit the nodes
    as they are, and waits for them to change)."""


@dataclass(frozen=True, slots=True)
class ProjectQueue:
    project: Project
    shares: dict[str, Shares]
    """Node pool → what the last cycle found."""
    waiting: list[Waiting]


class SchedulingService:
    def __init__(self, database: Database) -> None:
        self._db = database

    def queue(self, caller: Principal, project_id: str | None = None) -> list[ProjectQueue]:
        """Every project the caller may read the workloads of (or the one named)."""
        with self._db.read() as unit:
            access = access_of(unit, caller)
            projects = [
                p
                for p in unit.organization.projects()
                if (project_id is None or p.id == project_id)
                and access.allows(
                    Action.READ,
                    Resource.WORKLOADS,
                    Scope(p.cluster_id, p.department_id, p.id),
                )
            ]
            if project_id is not None and not projects:
                raise NotFound(f"no project you may read has the id {project_id!r}")
            by_project: dict[str, dict[str, Shares]] = {}
            for (kind, org_id, pool), values in unit.scheduling.shares().items():
                if kind == "project":
                    by_project.setdefault(org_id, {})[pool] = values
            queues = []
            for project in projects:
                waiting = unit.workloads.queue_of(project.id, limit=QUEUE_LIMIT)
                queues.append(
                    ProjectQueue(
                        project,
                        by_project.get(project.id, {}),
                        [
                            Waiting(w, None if w.parked else position)
                            for position, w in enumerate(waiting, start=1)
                        ],
                    )
                )
            return queues
