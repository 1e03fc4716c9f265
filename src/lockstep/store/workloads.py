"""The workload repository: workloads, their pods, events and phase history."""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Float,
    Row,
    String,
    and_,
    bindparam,
    cast,
    false,
    func,
    insert,
    literal_column,
    not_,
    null,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Select, Update

from lockstep.domain.clock import parse_moment
from lockstep.domain.cluster import placement_from_json, placement_to_json
from lockstep.domain.errors import Conflict, InvalidRequest
from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.listing import Filter, ListQuery, Operator, SortOrder
from lockstep.domain.phases import TERMINAL, DesiredPhase, Phase
from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.domain.workload import (
    Event,
    EventType,
    PendingMessage,
    PhaseChange,
    Pod,
    PodPhase,
    PortBinding,
    Workload,
    WorkloadUpdate,
)
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.schemas.distributed import DistributedFramework
from lockstep.store.metrics import time_in_phase
from lockstep.store.tables import departments, events, phase_changes, pods, projects, workloads

Version = tuple[Any, ...]
"""What a workload's list item is made of, short of the workload itself (`page_versions`)."""


def _text(column: ColumnElement[Any]) -> ColumnElement[str]:
    return cast(column, String)


_FIELDS: dict[str, tuple[ColumnElement[Any], str]] = {
    "type": (func.lower(workloads.c.kind), "folded"),
    "name": (workloads.c.name, "text"),
    "clusterId": (workloads.c.cluster_id, "text"),
    "projectId": (_text(workloads.c.project_id), "text"),
    "projectName": (projects.c.name, "text"),
    "departmentId": (_text(workloads.c.department_id), "text"),
    "departmentName": (departments.c.name, "text"),
    "createdAt": (workloads.c.created_at, "time"),
    "deletedAt": (workloads.c.deleted_at, "time"),
    "completedAt": (workloads.c.completed_at, "time"),
    "phaseUpdatedAt": (workloads.c.phase_updated_at, "time"),
    "submittedBy": (workloads.c.created_by, "text"),
    "phase": (workloads.c.actual_phase, "text"),
    "distributedFramework": (workloads.c.framework, "text"),
    "category": (workloads.c.category, "text"),
    "priority": (workloads.c.priority, "number"),
    "priorityClassName": (workloads.c.priority_class, "text"),
    "allocatedGPU": (cast(workloads.c.allocated_gpus, Float), "number"),
}
_FIELDS["totalPendingTimeSeconds"] = (time_in_phase(Phase.PENDING), "number")
_FIELDS["totalRunningTimeSeconds"] = (time_in_phase(Phase.RUNNING), "number")
_UNKNOWN = (
    "nodepool",
    "idleAllocatedGpus",
    "guaranteedRuntimeEndsAt",
    "aiApplicationId",
    "aiApplicationName",
)
"""Fields of the document's `filterBy` and `sortBy` that lockstep has no value for: null for
every workload, so a filter on them matches only with `!=` and `!@`, and sorting by them
keeps the order of creation."""
_FIELDS.update({name: (cast(null(), String), "text") for name in _UNKNOWN})

_UNSORTED = ("idleGpus",)
"""Fields of the document's `sortBy` that each item shows, worked out from the samples at each
request rather than kept in the store: sorting by them keeps the order of creation, as
sorting by `_UNKNOWN` ones does; a filter on them is refused."""

FILTER_FIELDS = frozenset(_FIELDS)
SORT_FIELDS = frozenset(_FIELDS) | frozenset(_UNSORTED)


def _condition(item: Filter) -> ColumnElement[bool]:
    column, kind = _FIELDS[item.field]
    value: Any = item.value
    if kind == "folded":  # compared in any letter case: type==Training, type==training
        value = item.value.lower()
    elif kind == "time":
        try:
            value = parse_moment(item.value)
        except ValueError as error:
            raise InvalidRequest.of(
                "filterBy", f"{item.field}: {item.value!r} is not an ISO-8601 date-time"
            ) from error
    elif kind == "number" and item.operator not in _TEXT_OPERATORS:
        try:
            value = float(item.value)
        except ValueError as error:
            raise InvalidRequest.of(
                "filterBy", f"{item.field}: {item.value!r} is not a number"
            ) from error
    text = _text(column)
    match item.operator:
        case Operator.EQUALS:
            return cast(column == value, Boolean)
        case Operator.NOT_EQUALS:
            return or_(column != value, column.is_(None))
        case Operator.AT_MOST:
            return cast(column <= value, Boolean)
        case Operator.AT_LEAST:
            return cast(column >= value, Boolean)
        case Operator.CONTAINS:
            return text.contains(item.value, autoescape=True)
        case Operator.NOT_CONTAINS:
            return or_(not_(text.contains(item.value, autoescape=True)), column.is_(None))
        case Operator.STARTS_WITH:
            return text.startswith(item.value, autoescape=True)
        case Operator.ENDS_WITH:
            return text.endswith(item.value, autoescape=True)


_TEXT_OPERATORS = frozenset(
    {Operator.CONTAINS, Operator.NOT_CONTAINS, Operator.STARTS_WITH, Operator.ENDS_WITH}
)


def _pod(row: Row[Any]) -> Pod:
    return Pod(
        id=row.id,
        workload_id=row.workload_id,
        name=row.name,
        role=row.role,
        index=row.replica_index,
        phase=PodPhase(row.phase),
        image=row.image,
        created_at=row.created_at,
        node_name=row.node_name,
        ip=row.ip,
        started_at=row.started_at,
        completed_at=row.completed_at,
        restarts=row.restarts,
        exit_code=row.exit_code,
        message=row.message,
        reason=row.reason,
        ready=row.ready,
        ports=tuple(PortBinding(**port) for port in orjson.loads(row.ports)),
    )


def _event(row: Row[Any]) -> Event:
    return Event(
        id=row.id,
        workload_id=row.workload_id,
        created_at=row.created_at,
        type=EventType(row.type),
        reason=row.reason,
        message=row.message,
        object_kind=row.object_kind,
        object_name=row.object_name,
        source=row.source,
    )


_JOINED = (
    select(
        workloads,
        projects.c.name.label("project_name"),
        departments.c.name.label("department_name"),
        projects.c.pod_security_level,
        func.coalesce(projects.c.requested_namespace, "runai-" + projects.c.name).label(
            "namespace"
        ),
    )
    .join(projects, projects.c.id == workloads.c.project_id)
    .join(departments, departments.c.id == projects.c.department_id)
)
"""A workload with its project's and department's names: every read of workloads uses it."""

_WORKLOAD_FIELDS = (
    "id", "name", "requested_name", "project_id", "department_id", "cluster_id", "created_by",
    "created_at", "desired_phase", "actual_phase", "phase_message", "phase_updated_at",
    "framework", "request", "priority_class", "priority", "category", "allocated_gpus",
    "deleted_at", "completed_at", "running_pods", "namespace", "project_name",
    "department_name", "parked", "auto_delete_at", "placement", "pod_security_level",
    "pending_messages", "kind",
)  # fmt: skip
_POSITIONS = {column.key: index for index, column in enumerate(_JOINED.selected_columns)}
_workload_values = operator.itemgetter(*(_POSITIONS[name] for name in _WORKLOAD_FIELDS))
"""Rows are read by position: attribute access on a row costs ten times more, per field."""

_VERSION_FIELDS = ("updated_at", "department_id", "project_name", "department_name", "namespace")
_version_values = operator.itemgetter(*(_POSITIONS[name] for name in _VERSION_FIELDS))
"""What a workload's list item is made of changes only with these: every write of a workload
moves its `updated_at`; its project's and department's names and its namespace are read from
them."""

_NAMESPACE = func.coalesce(projects.c.requested_namespace, "runai-" + projects.c.name)
_VERSIONS = (
    select(
        workloads.c.id,
        workloads.c.updated_at,
        workloads.c.department_id,
        projects.c.name,
        departments.c.name,
        _NAMESPACE,
    )
    .join(projects, projects.c.id == workloads.c.project_id)
    .join(departments, departments.c.id == projects.c.department_id)
)


def _workload(row: Row[Any]) -> Workload:
    (
        workload_id, name, requested_name, project_id, department_id, cluster_id, created_by,
        created_at, desired_phase, actual_phase, phase_message, phase_updated_at,
        framework, request, priority_class, priority, category, allocated_gpus,
        deleted_at, completed_at, running_pods, namespace, project_name,
        department_name, parked, auto_delete_at, placement, pod_security_level,
        pending_messages, kind,
    ) = _workload_values(row)  # fmt: skip
    return Workload(
        id=workload_id,
        name=name,
        requested_name=requested_name,
        project_id=str(project_id),
        department_id=None if department_id is None else str(department_id),
        cluster_id=cluster_id,
        created_by=created_by,
        created_at=created_at,
        desired_phase=DesiredPhase(desired_phase),
        actual_phase=Phase(actual_phase),
        phase_message=phase_message,
        phase_updated_at=phase_updated_at,
        framework=DistributedFramework(framework) if framework else None,
        kind=WorkloadKind(kind),
        request=WorkloadRequest(WorkloadKind(kind), orjson.loads(request)),
        priority_class=priority_class,
        priority=priority,
        category=category,
        allocated_gpus=allocated_gpus,
        deleted_at=deleted_at,
        completed_at=completed_at,
        running_pods=running_pods,
        namespace=namespace,
        project_name=project_name,
        department_name=department_name or "",
        parked=parked,
        auto_delete_at=auto_delete_at,
        placement=None if placement is None else placement_from_json(orjson.loads(placement)),
        pod_security=PodSecurityLevel(pod_security_level),
        pending=_pending(pending_messages),
    )


def _pending(stored: str | None) -> tuple[PendingMessage, ...]:
    if not stored:
        return ()
    return tuple(PendingMessage.from_json(message) for message in orjson.loads(stored))


_BY_ID = _JOINED.where(workloads.c.id == bindparam("id"))
_LIVE_BY_ID = _BY_ID.where(workloads.c.deleted_at.is_(None))
_BY_IDS = _JOINED.where(workloads.c.id.in_(bindparam("ids", expanding=True)))
_IDS_PER_QUERY = 500
_WAITING = (
    workloads.c.deleted_at.is_(None),
    workloads.c.actual_phase.in_([Phase.CREATING.value, Phase.PENDING.value]),
    workloads.c.desired_phase == DesiredPhase.RUNNING.value,
)
"""Waiting to be admitted (parked ones too)."""
_IN_QUEUE = (*_WAITING, workloads.c.parked == false())
_QUEUE_ORDER = (workloads.c.priority.desc(), workloads.c.created_at, workloads.c.id)
"""A project's queue: by priority, then in submission order."""
_RANKED = (
    select(
        workloads.c.id,
        func.row_number()
        .over(partition_by=workloads.c.project_id, order_by=_QUEUE_ORDER)
        .label("rank"),
    )
    .where(*_IN_QUEUE)
    .subquery()
)
_QUEUE_HEADS = (
    _JOINED.join(_RANKED, _RANKED.c.id == workloads.c.id)
    .where(_RANKED.c.rank <= bindparam("per_project"))
    .order_by(*_QUEUE_ORDER)
    .limit(bindparam("limit"))
)
_AHEAD_IN_PROJECT = select(func.count()).where(
    *_IN_QUEUE,
    workloads.c.project_id == bindparam("project_id"),
    or_(
        workloads.c.priority > bindparam("priority"),
        and_(
            workloads.c.priority == bindparam("priority"),
            or_(
                workloads.c.created_at < bindparam("created_at"),
                and_(
                    workloads.c.created_at == bindparam("created_at"),
                    workloads.c.id < bindparam("id"),
                ),
            ),
        ),
    ),
)
_INSERT_WORKLOAD = insert(workloads)
_INSERT_EVENT = insert(events)
_INSERT_PHASE = insert(phase_changes)
_COUNT_RUNNING_PODS = select(func.count()).where(
    pods.c.workload_id == bindparam("id"),
    pods.c.deleted_at.is_(None),
    pods.c.phase == PodPhase.RUNNING.value,
)


_POD_STATUS_COLUMNS = (
    "phase", "image", "node_name", "ip", "started_at", "completed_at", "restarts",
    "exit_code", "message", "reason", "ready", "ports",
)  # fmt: skip
_POD_IDENTITY_COLUMNS = ("id", "role", "replica_index", "created_at", "deleted_at")
_OF_POD = (
    pods.c.workload_id == bindparam("key_workload"),
    pods.c.name == bindparam("key_name"),
)
_UPDATE_LIVE_POD = (
    update(pods)
    .where(*_OF_POD, pods.c.deleted_at.is_(None))
    .values({name: bindparam(name) for name in _POD_STATUS_COLUMNS})
)
"""A new status of a pod that is there."""
_REPLACE_REMOVED_POD = (
    update(pods)
    .where(*_OF_POD, pods.c.deleted_at.is_not(None))
    .values({name: bindparam(name) for name in (*_POD_STATUS_COLUMNS, *_POD_IDENTITY_COLUMNS)})
)
"""A pod started again under the name of one that was removed (the workload was suspended
or preempted, and runs again): as on Kubernetes, it is a new pod, with an id, a creation
time and a status of its own; the removed one's row is its slot (a name is unique within
its workload)."""


@functools.cache
def _update_of(columns: frozenset[str]) -> Update:
    """An UPDATE of these columns of one workload (`key`), built once per set of columns."""
    values: dict[str, Any] = {name: bindparam(name) for name in sorted(columns)}
    return update(workloads).where(workloads.c.id == bindparam("key")).values(values)


def _listed_by(query: Select[Any], spec: ListQuery) -> Select[Any]:
    """`query` narrowed to the workloads the list `spec` shows (not its order or paging)."""
    if spec.deleted:
        query = query.where(workloads.c.deleted_at.is_not(None))
    else:
        query = query.where(workloads.c.deleted_at.is_(None))
    if spec.project_ids is not None:
        query = query.where(workloads.c.project_id.in_([int(p) for p in spec.project_ids]))
    if spec.search:
        query = query.where(
            or_(
                workloads.c.name.contains(spec.search, autoescape=True),
                projects.c.name.contains(spec.search, autoescape=True),
            )
        )
    conditions = [_condition(f) for f in spec.filters]
    return query.where(and_(*conditions)) if conditions else query


@functools.lru_cache(maxsize=256)
def _paged(query: Select[Any], spec: ListQuery) -> Select[Any]:
    """`query` as the page `spec` asks: filtered, ordered and cut. Remembered for the lists
    asked again and again (a console's, a script's): building a statement and its cache key
    costs more than running it."""
    query = _listed_by(query, spec)
    known = spec.sort_by is not None and spec.sort_by not in (*_UNKNOWN, *_UNSORTED)
    column = _FIELDS[spec.sort_by][0] if spec.sort_by and known else workloads.c.created_at
    order = column.desc() if spec.sort_order is SortOrder.DESC else column.asc()
    tie = workloads.c.id.desc() if spec.sort_order is SortOrder.DESC else workloads.c.id.asc()
    return query.order_by(order, tie).offset(spec.offset).limit(spec.limit + 1)


class WorkloadRepository:
    """Reads and writes workloads within the caller's transaction."""

    def __init__(self, connection: Connection) -> None:
        self._db = connection

    # --- writes -------------------------------------------------------------------------

    def insert(self, workload: Workload) -> None:
        """Store a new workload and its first phase; `Conflict` if the name is taken."""
        values = {
            "id": workload.id,
            "name": workload.name,
            "requested_name": workload.requested_name,
            "project_id": int(workload.project_id),
            "department_id": None
            if workload.department_id is None
            else int(workload.department_id),
            "cluster_id": workload.cluster_id,
            "created_by": workload.created_by,
            "created_at": workload.created_at,
            "updated_at": workload.created_at,
            "desired_phase": workload.desired_phase.value,
            "actual_phase": workload.actual_phase.value,
            "phase_message": workload.phase_message,
            "phase_updated_at": workload.phase_updated_at,
            "framework": "" if workload.framework is None else workload.framework.value,
            "kind": workload.kind.value,
            "category": workload.category,
            "priority_class": workload.priority_class,
            "priority": workload.priority,
            "request": orjson.dumps(workload.request.wire).decode(),
        }
        try:
            self._db.execute(_INSERT_WORKLOAD, values)
        except IntegrityError as error:
            raise Conflict(
                f"a workload named {workload.name!r} already exists in project "
                f"{workload.project_id}"
            ) from error
        self._record_phase(
            workload.id, workload.actual_phase, workload.phase_message, workload.created_at
        )

    def set_desired_phase(self, workload_id: str, desired: DesiredPhase, now: datetime) -> None:
        self._db.execute(
            update(workloads)
            .where(workloads.c.id == workload_id)
            .values(desired_phase=desired.value, updated_at=now, parked=False)
        )

    def apply(self, workload: Workload, change: WorkloadUpdate, now: datetime) -> None:
        """Write what one reconcile pass decided about `workload`."""
        values: dict[str, Any] = {"updated_at": now}
        phase = change.phase or workload.actual_phase
        message = workload.phase_message if change.message is None else change.message
        if change.phase is not None and change.phase != workload.actual_phase:
            values.update(actual_phase=phase.value, phase_updated_at=now)
            if phase.is_terminal:
                values["completed_at"] = now
        if change.through is not None:
            self._record_phase(workload.id, change.through, "", now)
        if phase != workload.actual_phase or message != workload.phase_message:
            values["phase_message"] = message
            self._record_phase(workload.id, phase, message, now)
        if change.parked is not None:
            values["parked"] = change.parked
        if change.pending is not None and phase is Phase.PENDING:
            values["pending_messages"] = (
                orjson.dumps([m.to_json() for m in change.pending]).decode()
                if change.pending
                else None
            )
            values["phase_reason"] = change.pending[0].phase_reason if change.pending else None
        elif phase is not Phase.PENDING and workload.pending:
            values["pending_messages"] = values["phase_reason"] = None
        if change.auto_delete_at is not None:
            values["auto_delete_at"] = change.auto_delete_at
        if change.placement is not None:
            values["placement"] = orjson.dumps(placement_to_json(change.placement)).decode()
            values["allocated_gpus"] = float(sum(a.gpu_amount for a in change.placement.values()))
        elif change.deleted or not phase.has_pods:
            values["placement"] = None
            values["allocated_gpus"] = 0.0
        if change.deleted:
            values["deleted_at"] = now
            values["desired_phase"] = DesiredPhase.DELETED.value
        for pod in change.pods:
            self._upsert_pod(pod)
        if change.pods:
            values["running_pods"] = self._db.execute(
                _COUNT_RUNNING_PODS, {"id": workload.id}
            ).scalar_one()
        if change.deleted or change.pods_removed:  # after their last status: it is theirs
            self.mark_pods_deleted(workload.id, now)
            values["running_pods"] = 0
        if change.events:
            self._db.execute(
                _INSERT_EVENT,
                [
                    {
                        "id": e.id,
                        "workload_id": e.workload_id,
                        "created_at": e.created_at,
                        "type": e.type.value,
                        "reason": e.reason,
                        "message": e.message,
                        "object_kind": e.object_kind,
                        "object_name": e.object_name,
                        "source": e.source,
                    }
                    for e in change.events
                ],
            )
        self._db.execute(_update_of(frozenset(values)), {**values, "key": workload.id})

    def _record_phase(self, workload_id: str, phase: Phase, message: str, now: datetime) -> None:
        self._db.execute(
            _INSERT_PHASE,
            {
                "workload_id": workload_id,
                "created_at": now,
                "phase": phase.value,
                "message": message,
            },
        )

    def _upsert_pod(self, pod: Pod) -> None:
        values = {
            "phase": pod.phase.value,
            "image": pod.image,
            "node_name": pod.node_name,
            "ip": pod.ip,
            "started_at": pod.started_at,
            "completed_at": pod.completed_at,
            "restarts": pod.restarts,
            "exit_code": pod.exit_code,
            "message": pod.message,
            "reason": pod.reason,
            "ready": pod.ready,
            "ports": orjson.dumps([port.to_json() for port in pod.ports]).decode(),
        }
        changed = self._db.execute(
            _UPDATE_LIVE_POD, {**values, "key_workload": pod.workload_id, "key_name": pod.name}
        ).rowcount
        if changed:
            return
        identity = {
            "id": pod.id,
            "role": pod.role,
            "replica_index": pod.index,
            "created_at": pod.created_at,
            "deleted_at": None,
        }
        replaced = self._db.execute(
            _REPLACE_REMOVED_POD,
            {**values, **identity, "key_workload": pod.workload_id, "key_name": pod.name},
        ).rowcount
        if not replaced:
            self._db.execute(
                insert(pods),
                {**values, **identity, "workload_id": pod.workload_id, "name": pod.name},
            )

    def mark_pods_deleted(self, workload_id: str, now: datetime) -> None:
        self._db.execute(
            update(pods)
            .where(pods.c.workload_id == workload_id, pods.c.deleted_at.is_(None))
            .values(deleted_at=now)
        )

    # --- reads --------------------------------------------------------------------------

    def get(self, workload_id: str, *, include_deleted: bool = False) -> Workload | None:
        """A workload by id; None if there is none (or it is deleted, unless included)."""
        query = _BY_ID if include_deleted else _LIVE_BY_ID
        row = self._db.execute(query, {"id": workload_id}).first()
        return None if row is None else _workload(row)

    def where(self, query: Select[Any], spec: ListQuery) -> Select[Any]:
        """`query` narrowed to the workloads the list `spec` shows (not its order or paging)."""
        return _listed_by(query, spec)

    def get_many(self, workload_ids: Sequence[str]) -> dict[str, Workload]:
        """The workloads (deleted ones included) among these ids, by id."""
        found: dict[str, Workload] = {}
        for start in range(0, len(workload_ids), _IDS_PER_QUERY):
            chunk = list(workload_ids[start : start + _IDS_PER_QUERY])
            for row in self._db.execute(_BY_IDS, {"ids": chunk}):
                found[row.id] = _workload(row)
        return found

    def page(self, spec: ListQuery) -> tuple[list[Workload], bool]:
        """One page of workloads and whether another page follows."""
        rows = self._db.execute(_paged(_JOINED, spec)).all()
        items = [_workload(r) for r in rows]
        return items[: spec.limit], len(items) > spec.limit

    def page_versions(self, spec: ListQuery) -> tuple[list[tuple[str, Version]], bool]:
        """One page as (id, version) of each workload, and whether another page follows: a
        version changes whenever what the list shows of the workload may have changed."""
        rows = self._db.execute(_paged(_VERSIONS, spec)).all()
        return [(r[0], tuple(r[1:])) for r in rows[: spec.limit]], len(rows) > spec.limit

    def versioned(self, workload_ids: Sequence[str]) -> dict[str, tuple[Version, Workload]]:
        """The workloads (deleted ones included) among these ids with their versions, by id."""
        found: dict[str, tuple[Version, Workload]] = {}
        for start in range(0, len(workload_ids), _IDS_PER_QUERY):
            chunk = list(workload_ids[start : start + _IDS_PER_QUERY])
            for row in self._db.execute(_BY_IDS, {"ids": chunk}):
                found[row.id] = (_version_values(row), _workload(row))
        return found

    def count(self, spec: ListQuery) -> int:
        query = self.where(
            select(func.count())
            .select_from(workloads)
            .join(projects, projects.c.id == workloads.c.project_id)
            .join(departments, departments.c.id == projects.c.department_id),
            spec,
        )
        return int(self._db.execute(query).scalar_one())

    def pods(self, workload_id: str, *, deleted: bool | None = None) -> list[Pod]:
        query = select(pods).where(pods.c.workload_id == workload_id)
        if deleted is True:
            query = query.where(pods.c.deleted_at.is_not(None))
        elif deleted is False:
            query = query.where(pods.c.deleted_at.is_(None))
        query = query.order_by(pods.c.role, pods.c.replica_index)
        return [_pod(r) for r in self._db.execute(query).all()]

    def pods_in(
        self, project_ids: frozenset[str] | None, *, deleted: bool
    ) -> list[tuple[Pod, datetime | None]]:
        """The pods of the workloads of these projects (every project: None), live ones or
        deleted ones, each with when it was deleted."""
        query = select(pods).select_from(pods.join(workloads, workloads.c.id == pods.c.workload_id))
        if project_ids is not None:
            query = query.where(workloads.c.project_id.in_([int(p) for p in project_ids]))
        query = query.where(
            pods.c.deleted_at.is_not(None) if deleted else pods.c.deleted_at.is_(None)
        )
        query = query.order_by(
            pods.c.created_at, pods.c.workload_id, pods.c.role, pods.c.replica_index
        )
        return [(_pod(r), r.deleted_at) for r in self._db.execute(query).all()]

    def events(self, workload_id: str, *, offset: int, limit: int, order: SortOrder) -> list[Event]:
        key = events.c.created_at.desc() if order is SortOrder.DESC else events.c.created_at.asc()
        query = (
            select(events)
            .where(events.c.workload_id == workload_id)
            .order_by(key, events.c.id)
            .offset(offset)
            .limit(limit)
        )
        return [_event(r) for r in self._db.execute(query).all()]

    def history(self, workload_id: str, *, offset: int, limit: int) -> list[PhaseChange | Event]:
        """Phase changes and events of a workload, oldest first (a phase change before an
        event of the same moment, phase changes in the order they were recorded)."""
        phase_rows = select(
            literal_column("'PhaseUpdate'").label("kind"),
            phase_changes.c.created_at,
            phase_changes.c.id.label("sequence"),
            literal_column("NULL").label("event_id"),
            phase_changes.c.phase,
            phase_changes.c.message,
        ).where(phase_changes.c.workload_id == workload_id)
        event_rows = select(
            literal_column("'Event'").label("kind"),
            events.c.created_at,
            literal_column("0").label("sequence"),
            events.c.id.label("event_id"),
            literal_column("NULL").label("phase"),
            literal_column("NULL").label("message"),
        ).where(events.c.workload_id == workload_id)
        merged = union_all(phase_rows, event_rows).subquery()
        query = (
            select(merged)
            .order_by(
                merged.c.created_at, merged.c.kind.desc(), merged.c.sequence, merged.c.event_id
            )
            .offset(offset)
            .limit(limit)
        )
        rows = self._db.execute(query).all()
        event_ids = [r.event_id for r in rows if r.kind == "Event"]
        found = self._db.execute(select(events).where(events.c.id.in_(event_ids))).all()
        by_id = {event.id: event for event in map(_event, found)}
        return [
            PhaseChange(workload_id, r.created_at, Phase(r.phase), r.message)
            if r.kind == "PhaseUpdate"
            else by_id[r.event_id]
            for r in rows
        ]

    def ids_to_reconcile(self) -> list[str]:
        """Workloads whose actual phase may still change: live and not finished."""
        query = select(workloads.c.id).where(
            workloads.c.deleted_at.is_(None),
            or_(
                workloads.c.actual_phase.not_in([p.value for p in (Phase.COMPLETED, Phase.FAILED)]),
                workloads.c.desired_phase == DesiredPhase.DELETED.value,
                workloads.c.running_pods > 0,
                workloads.c.auto_delete_at.is_not(None),
            ),
            not_(and_(workloads.c.parked, workloads.c.actual_phase == Phase.PENDING.value)),
        )
        return list(self._db.execute(query.order_by(workloads.c.created_at)).scalars())

    def queue_heads(self, *, per_project: int, limit: int) -> list[Workload]:
        """The scheduler's queue: new (Creating) and Pending workloads that are wanted Running
        and not parked, the first `per_project` of each project's queue (by priority, then
        oldest first), at most `limit` in all — so that no project's long queue hides another
        project's head."""
        rows = self._db.execute(_QUEUE_HEADS, {"per_project": per_project, "limit": limit})
        return [_workload(r) for r in rows.all()]

    def queue_of(self, project_id: str, *, limit: int) -> list[Workload]:
        """A project's waiting workloads in the order they will be admitted, those parked
        (which could never fit the nodes as they are) last."""
        query = (
            _JOINED.where(*_WAITING, workloads.c.project_id == int(project_id))
            .order_by(workloads.c.parked, *_QUEUE_ORDER)
            .limit(limit)
        )
        return [_workload(r) for r in self._db.execute(query).all()]

    def queue_position(self, workload: Workload) -> int:
        """Its 1-based position in its project's queue (the workloads ahead of it, plus one)."""
        ahead = self._db.execute(
            _AHEAD_IN_PROJECT,
            {
                "project_id": int(workload.project_id),
                "priority": workload.priority,
                "created_at": workload.created_at,
                "id": workload.id,
            },
        ).scalar_one()
        return int(ahead) + 1

    def admitted(self) -> list[Workload]:
        """Workloads holding resources: those whose pods may exist."""
        phases = [p.value for p in Phase if p.has_pods]
        query = _JOINED.where(
            workloads.c.deleted_at.is_(None), workloads.c.actual_phase.in_(phases)
        )
        return [_workload(r) for r in self._db.execute(query).all()]

    def unfinished(self) -> list[Workload]:
        """Workloads not deleted that have not finished (neither Completed nor Failed):
        waiting, admitted or stopped."""
        query = _JOINED.where(
            workloads.c.deleted_at.is_(None),
            workloads.c.actual_phase.not_in([p.value for p in TERMINAL]),
        )
        return [_workload(r) for r in self._db.execute(query).all()]

    def count_unfinished(self, project_id: str) -> int:
        """How many workloads of the project are not deleted and have not finished (the
        per-project workload limit counts them): one index seek per phase, however many
        finished workloads the project keeps."""
        query = select(func.count()).where(
            workloads.c.project_id == int(project_id),
            workloads.c.actual_phase.in_([p.value for p in Phase if p not in TERMINAL]),
            workloads.c.deleted_at.is_(None),
        )
        return int(self._db.execute(query).scalar_one())

    def unpark_all(self) -> None:
        """Put every parked workload back in the scheduler's queue."""
        self._db.execute(update(workloads).where(workloads.c.parked).values(parked=False))

    def pending(self) -> list[Workload]:
        """Workloads waiting to be admitted (new or Pending, wanted Running), parked or not."""
        query = _JOINED.where(
            workloads.c.deleted_at.is_(None),
            workloads.c.actual_phase.in_([Phase.CREATING.value, Phase.PENDING.value]),
            workloads.c.desired_phase == DesiredPhase.RUNNING.value,
        )
        return [_workload(r) for r in self._db.execute(query).all()]
