"""What changed among workloads since a moment, read for the change stream
(services/workload_watch.py): every write of a workload moves its `updated_at`, so one query
over that column finds every change, whichever process (an API replica, the reconciler) made
it, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import datetime

from sqlalchemy import Connection, func, select

from lockstep.domain.listing import ListQuery
from lockstep.store.tables import departments, projects, workloads
from lockstep.store.workloads import WorkloadRepository

_CHANGED = select(workloads.c.id, workloads.c.updated_at)
_MATCHING = (
    select(workloads.c.id)
    .select_from(workloads)
    .join(projects, projects.c.id == workloads.c.project_id)
    .join(departments, departments.c.id == projects.c.department_id)
)


class WorkloadChanges:
    """Reads within the caller's transaction."""

    def __init__(self, connection: Connection) -> None:
        self._db = connection
        self._workloads = WorkloadRepository(connection)

    def since(self, moment: datetime) -> list[tuple[str, datetime]]:
        """Each workload (deleted ones too) written after `moment`, with when it was written."""
        rows = self._db.execute(_CHANGED.where(workloads.c.updated_at > moment))
        return [(row.id, row.updated_at) for row in rows]

    def newest(self) -> datetime | None:
        """When a workload was last written; None when there is none."""
        return self._db.execute(select(func.max(workloads.c.updated_at))).scalar_one_or_none()

    def matching(self, workload_ids: Collection[str], query: ListQuery) -> set[str]:
        """Those of `workload_ids` that the list `query` would show (its filters, search,
        projects and deletion state; not its paging)."""
        if not workload_ids:
            return set()
        spec = replace(query, offset=0)
        chosen = self._workloads.where(_MATCHING, spec).where(
            workloads.c.id.in_(list(workload_ids))
        )
        return set(self._db.execute(chosen).scalars())
