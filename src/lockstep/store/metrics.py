"""The metrics repository: the sampler's samples, their retention, and what the metrics
service reads of them and of the workloads (their current figures, for telemetry).

Retention, done a bounded slice at a time by each sampling round (`maintain`): samples are
kept as taken for a day; older ones are replaced by 5-minute averages (weighted by how many
samples each averages), which are kept for 30 days.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, delete, insert, select
from sqlalchemy.sql import Select

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.metrics import Sample, Sampled, expiry_horizon, roll_up, rollup_horizon
from lockstep.domain.phases import Phase
from lockstep.store.tables import metric_samples, workloads

MAINTENANCE_ROWS = 5000
"""The most samples one round rolls up, and the most averages it removes."""


@dataclass(frozen=True, slots=True)
class SampleScope:
    """Whose samples: any of the criteria given (None: any)."""

    workload_id: str | None = None
    pod: str | None = None
    nodes: Collection[str] | None = None
    project_ids: Collection[str] | None = None
    department_id: str | None = None
    cluster_id: str | None = None


@dataclass(frozen=True, slots=True)
class CurrentWorkload:
    """A workload not deleted, as telemetry counts it."""

    id: str
    project_id: str
    department_id: str | None
    cluster_id: str
    kind: WorkloadKind
    phase: Phase
    category: str | None
    allocated_gpus: float
    phase_updated_at: datetime


class MetricsRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def insert(self, samples: Sequence[Sample], *, rolled_up: bool = False) -> None:
        if not samples:
            return
        self._db.execute(insert(metric_samples), [_row(s, rolled_up) for s in samples])

    def maintain(self, now: datetime, *, limit: int = MAINTENANCE_ROWS) -> int:
        """Roll up the oldest full-resolution samples past a day (at most `limit`), and
        remove the 5-minute averages past 30 days (at most `limit`); how many rows changed."""
        horizon = rollup_horizon(now)
        old = self._db.execute(
            select(metric_samples)
            .where(metric_samples.c.rolled_up.is_(False), metric_samples.c.at < horizon)
            .order_by(metric_samples.c.at)
            .limit(limit)
        ).all()
        if old:
            ids = [r.id for r in old]
            self._db.execute(delete(metric_samples).where(metric_samples.c.id.in_(ids)))
            self.insert(roll_up(_sample(r) for r in old), rolled_up=True)
        expired_ids = (
            select(metric_samples.c.id)
            .where(
                metric_samples.c.rolled_up.is_(True),
                metric_samples.c.at < expiry_horizon(now),
            )
            .limit(limit)
            .scalar_subquery()
        )
        removed = self._db.execute(
            delete(metric_samples).where(metric_samples.c.id.in_(expired_ids))
        ).rowcount
        return len(old) + int(removed or 0)

    def samples(
        self,
        scope: SampleScope,
        metrics: Collection[Sampled],
        *,
        start: datetime,
        end: datetime,
    ) -> list[Sample]:
        """The samples of `metrics` in `[start, end]` within `scope`, oldest first."""
        query: Select[Any] = select(metric_samples).where(
            metric_samples.c.metric.in_([m.value for m in metrics]),
            metric_samples.c.at >= start,
            metric_samples.c.at <= end,
        )
        if scope.workload_id is not None:
            query = query.where(metric_samples.c.workload_id == scope.workload_id)
        if scope.pod is not None:
            query = query.where(metric_samples.c.pod == scope.pod)
        if scope.nodes is not None:
            query = query.where(metric_samples.c.node.in_(list(scope.nodes)))
        owners: list[ColumnElement[bool]] = []
        if scope.project_ids is not None:
            owners.append(workloads.c.project_id.in_([int(p) for p in scope.project_ids]))
        if scope.department_id is not None:
            owners.append(workloads.c.department_id == int(scope.department_id))
        if scope.cluster_id is not None:
            owners.append(workloads.c.cluster_id == scope.cluster_id)
        if owners:
            query = query.where(
                metric_samples.c.workload_id.in_(select(workloads.c.id).where(*owners))
            )
        return [_sample(r) for r in self._db.execute(query.order_by(metric_samples.c.at))]

    def current_workloads(self) -> list[CurrentWorkload]:
        rows = self._db.execute(
            select(
                workloads.c.id,
                workloads.c.project_id,
                workloads.c.department_id,
                workloads.c.cluster_id,
                workloads.c.kind,
                workloads.c.actual_phase,
                workloads.c.category,
                workloads.c.allocated_gpus,
                workloads.c.phase_updated_at,
            ).where(workloads.c.deleted_at.is_(None))
        )
        return [
            CurrentWorkload(
                id=r.id,
                project_id=str(r.project_id),
                department_id=None if r.department_id is None else str(r.department_id),
                cluster_id=r.cluster_id,
                kind=WorkloadKind(r.kind),
                phase=Phase(r.actual_phase),
                category=r.category,
                allocated_gpus=float(r.allocated_gpus),
                phase_updated_at=r.phase_updated_at,
            )
            for r in rows
        ]


def _row(sample: Sample, rolled_up: bool) -> dict[str, Any]:
    return {
        "at": sample.at,
        "workload_id": sample.workload_id,
        "pod": sample.pod,
        "node": sample.node,
        "metric": sample.metric.value,
        "gpu": sample.gpu,
        "value": sample.value,
        "weight": sample.weight,
        "rolled_up": rolled_up,
    }


def _sample(row: Row[Any]) -> Sample:
    return Sample(
        at=row.at,
        workload_id=row.workload_id,
        pod=row.pod,
        node=row.node,
        metric=Sampled(row.metric),
        value=float(row.value),
        gpu=row.gpu,
        weight=int(row.weight),
    )
