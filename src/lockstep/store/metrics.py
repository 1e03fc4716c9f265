"""The metrics repository: the sampler's samples, their retention, and what the metrics use
cases (services/metrics/) read of them and of the workloads (their current figures, for
telemetry).

Retention, done a bounded slice at a time by each sampling round (`maintain`): samples are
kept as taken for a day; older ones are replaced by 5-minute averages (weighted by how many
samples each averages), which are kept for 30 days.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    Row,
    bindparam,
    delete,
    func,
    insert,
    select,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import Select
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.metrics import (
    IDLE_WINDOW,
    PhaseTimes,
    Sample,
    Sampled,
    WorkloadFigures,
    expiry_horizon,
    figures_of,
    idle_devices,
    latest_utilization,
    roll_up,
    rollup_horizon,
)
from lockstep.domain.phases import Phase
from lockstep.store.tables import metric_samples, phase_changes, workloads

MAINTENANCE_ROWS = 5000
"""The most samples one round rolls up, and the most averages it removes."""
IDS_PER_STATEMENT = 500
"""The most workload ids one statement names (SQLite caps a statement's parameters)."""


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


_HISTORIES = (
    select(phase_changes.c.workload_id, phase_changes.c.created_at, phase_changes.c.phase)
    .where(phase_changes.c.workload_id.in_(bindparam("ids", expanding=True)))
    .order_by(phase_changes.c.workload_id, phase_changes.c.id)
)
_RECENT_UTILIZATION = select(metric_samples).where(
    metric_samples.c.workload_id.in_(bindparam("ids", expanding=True)),
    metric_samples.c.metric == Sampled.GPU_UTILIZATION_PER_GPU.value,
    metric_samples.c.at >= bindparam("since"),
)


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), IDS_PER_STATEMENT):
        yield ids[start : start + IDS_PER_STATEMENT]


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

    def figures(self, workload_ids: Sequence[str], now: datetime) -> dict[str, WorkloadFigures]:
        """The figures of each workload: its time Pending and Running (from its phase
        history), its idle GPUs and its GPUs' latest utilization (from the last `IDLE_WINDOW`
        of samples)."""
        times = self.phase_times(workload_ids)
        utilization = self._recent_utilization(workload_ids, now)
        return {
            i: figures_of(
                times[i],
                idle_devices(utilization[i]),
                now,
                gpu_utilization=latest_utilization(utilization[i]),
            )
            for i in workload_ids
        }

    def phase_times(self, workload_ids: Sequence[str]) -> dict[str, PhaseTimes]:
        """Each workload's time in its phases, from its phase history."""
        changes: dict[str, list[tuple[datetime, str]]] = {i: [] for i in workload_ids}
        for chunk in _chunks(list(changes)):
            for row in self._db.execute(_HISTORIES, {"ids": chunk}):
                changes[row.workload_id].append((row.created_at, row.phase))
        return {i: PhaseTimes.of(history) for i, history in changes.items()}

    def idle_gpus(self, workload_ids: Sequence[str], now: datetime) -> dict[str, int | None]:
        """How many of each workload's devices were idle over the last `IDLE_WINDOW` of
        samples; None for one none of whose devices was sampled then."""
        utilization = self._recent_utilization(workload_ids, now)
        return {i: idle_devices(samples) for i, samples in utilization.items()}

    def _recent_utilization(
        self, workload_ids: Sequence[str], now: datetime
    ) -> dict[str, list[Sample]]:
        utilization: dict[str, list[Sample]] = {i: [] for i in workload_ids}
        for chunk in _chunks(list(utilization)):
            recent = {"ids": chunk, "since": now - IDLE_WINDOW}
            for found in self._db.execute(_RECENT_UTILIZATION, recent):
                utilization[found.workload_id].append(_sample(found))
        return utilization

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


class _SecondsBetween(FunctionElement[float]):
    """`later - earlier` in seconds, in each backend's words."""

    type = Float()
    inherit_cache = True
    name = "seconds_between"


@compiles(_SecondsBetween, "sqlite")
def _seconds_on_sqlite(element: _SecondsBetween, compiler: SQLCompiler, **kw: Any) -> str:
    later, earlier = (compiler.process(c, **kw) for c in element.clauses)
    return f"((julianday({later}) - julianday({earlier})) * 86400.0)"


@compiles(_SecondsBetween, "postgresql")
def _seconds_on_postgresql(element: _SecondsBetween, compiler: SQLCompiler, **kw: Any) -> str:
    later, earlier = (compiler.process(c, **kw) for c in element.clauses)
    return f"EXTRACT(EPOCH FROM ({later} - {earlier}))"


def time_in_phase(phase: Phase) -> ColumnElement[float]:
    """A workload's seconds in `phase` from its phase history, as `PhaseTimes` counts
    them (until the database's clock for its current phase): what the list filters and
    sorts `totalPendingTimeSeconds` and `totalRunningTimeSeconds` by."""
    spent = phase_changes.alias("spent")
    following = phase_changes.alias("following")
    until = (
        select(func.min(following.c.created_at))
        .where(following.c.workload_id == spent.c.workload_id, following.c.id > spent.c.id)
        .scalar_subquery()
    )
    seconds = _SecondsBetween(func.coalesce(until, func.current_timestamp()), spent.c.created_at)
    return (
        select(func.coalesce(func.sum(seconds), 0.0))
        .where(spent.c.workload_id == workloads.c.id, spent.c.phase == phase.value)
        .scalar_subquery()
    )
