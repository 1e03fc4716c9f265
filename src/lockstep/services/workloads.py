"""Workload use cases: create, read, list, delete, suspend and resume workloads of every kind.

Each method runs in one transaction, checks the caller's access rules inside it, and tells the
reconciler about the workload only after the commit (a 202 means the workload is stored).
"""

from __future__ import annotations

import secrets
import string
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain import pod_security
from lockstep.domain.clock import Clock, iso
from lockstep.domain.errors import Conflict, InvalidRequest, NotFound, Violation
from lockstep.domain.kinds import TRAITS, WorkloadKind
from lockstep.domain.listing import ListQuery, SortOrder, matches
from lockstep.domain.organization import Project
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.domain.pod_security import AllowedHostPath
from lockstep.domain.priorities import priority_of
from lockstep.domain.rules import check_request, check_single_pod_request
from lockstep.domain.workload import Event, PhaseChange, Pod, Workload
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.schemas.distributed import DistributedCreationRequest, DistributedFramework
from lockstep.schemas.single_pod import (
    CreationRequest,
    TrainingCreationRequest,
    WorkspaceCreationRequest,
)
from lockstep.services.access import access_of, workload_for
from lockstep.store.database import Database, UnitOfWork

_SUFFIX_ALPHABET = string.ascii_lowercase + string.digits


def name_suffix() -> str:
    """`-` and five random lower-case letters or digits (`useGivenNameAsPrefix`)."""
    return "-" + "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(5))


KIND_OF_REQUEST: dict[type[CreationRequest], WorkloadKind] = {
    DistributedCreationRequest: WorkloadKind.DISTRIBUTED,
    TrainingCreationRequest: WorkloadKind.TRAINING,
    WorkspaceCreationRequest: WorkloadKind.WORKSPACE,
}


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PageOf(Generic[T]):
    items: list[T]
    has_more: bool


@dataclass(frozen=True, slots=True)
class ListedPod:
    """A pod in the cluster-wide pod list, with its workload and when it was deleted."""

    workload: Workload
    pod: Pod
    deleted_at: datetime | None


POD_FIELDS: dict[str, Callable[[ListedPod], object]] = {
    "clusterId": lambda p: p.workload.cluster_id,
    "workloadId": lambda p: p.workload.id,
    "revisionId": lambda _: None,
    "nodeName": lambda p: p.pod.node_name,
    "currentNodepool": lambda p: CURRENT_NODE_POOL,
    "createdAt": lambda p: p.pod.created_at,
    "completedAt": lambda p: p.pod.completed_at,
    "deletedAt": lambda p: p.deleted_at,
}
"""What `filterBy` and `sortBy` of the pod list compare (the document's fields; a pod has no
revision, so `revisionId` is null)."""

CURRENT_NODE_POOL = "default"


def _sort_key(value: object) -> tuple[bool, str]:
    """Sort by the wire form, nulls last."""
    if value is None:
        return True, ""
    return False, iso(value) if isinstance(value, datetime) else str(value)


class WorkloadService:
    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        notify: Callable[[str], None],
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        runtime_checks: Callable[[CreationRequest], list[Violation]] = lambda _: [],
        allowed_host_paths: Sequence[AllowedHostPath] = (),
        max_workloads_per_project: int | None = None,
    ) -> None:
        """`runtime_checks`: what the runtime refuses of a request beside lockstep's own rules
        (the local runtime: a data volume it does not have). `allowed_host_paths`: where pods
        of baseline projects may mount hostPath volumes. `max_workloads_per_project`: the most
        unfinished workloads a project may have (None: no limit)."""
        self._db = database
        self._clock = clock
        self._notify = notify
        self._new_id = new_id
        self._runtime_checks = runtime_checks
        self._allowed_host_paths = tuple(allowed_host_paths)
        self._max_workloads = max_workloads_per_project

    def create(self, caller: Principal, request: CreationRequest) -> Workload:
        """Store a new workload, committed before this returns; the reconciler takes it on."""
        workload = self.prepare(caller, request)
        # Only the insert needs the write lock: the checks of `prepare` read what cannot change
        # under it (projects are never moved or deleted; the foreign key guards the rest).
        with self._db.write() as unit:
            # Counted again under the write lock, so that racing submissions cannot pass it.
            self._check_workload_limit(unit, workload.project_id, workload.project_name)
            unit.workloads.insert(workload)
        self._notify(workload.id)
        return workload

    def prepare(self, caller: Principal, request: CreationRequest) -> Workload:
        """The workload `request` would create, checked as `create` checks it (the request's
        rules, the project and cluster, the caller's access), stored nowhere: a dry run."""
        if isinstance(request, DistributedCreationRequest):
            violations = check_request(request)
        else:
            violations = check_single_pod_request(request)
        if not violations:
            violations = self._runtime_checks(request)
        if violations:
            raise InvalidRequest(violations)
        assert request.spec is not None
        kind = KIND_OF_REQUEST[type(request)]
        framework = (
            DistributedFramework(request.spec.distributed_framework)
            if isinstance(request, DistributedCreationRequest)
            and request.spec.distributed_framework is not None
            else None
        )
        cluster_id = str(request.cluster_id)
        with self._db.read() as unit:
            project, department_name = self._project(unit, request.project_id)
            if project.cluster_id != cluster_id:
                if unit.organization.cluster(cluster_id) is None:
                    raise InvalidRequest.of("clusterId", f"no cluster has the id {cluster_id!r}")
                raise InvalidRequest.of(
                    "projectId", f"project {project.id} is not in cluster {cluster_id}"
                )
            scope = Scope(cluster_id, project.department_id, project.id)
            access_of(unit, caller).check(Action.CREATE, Resource.WORKLOADS, scope)
            self._check_workload_limit(unit, project.id, project.name)
            level = project.pod_security_level
        forbidden = pod_security.violations(request, level, self._allowed_host_paths)
        if forbidden:
            raise InvalidRequest(forbidden)
        now = self._clock()
        priority_class = request.spec.priority_class or TRAITS[kind].default_priority_class
        return Workload(
            id=self._new_id(),
            name=request.name + (name_suffix() if request.use_given_name_as_prefix else ""),
            requested_name=request.name,
            project_id=project.id,
            department_id=project.department_id,
            cluster_id=cluster_id,
            created_by=caller.name,
            created_at=now,
            desired_phase=DesiredPhase.RUNNING,
            actual_phase=Phase.CREATING,
            phase_message="",
            phase_updated_at=now,
            framework=framework,
            kind=kind,
            request=WorkloadRequest.of_creation(kind, request.to_wire()),
            priority_class=priority_class,
            priority=priority_of(priority_class),
            category=request.spec.category,
            namespace=project.namespace,
            project_name=project.name,
            department_name=department_name,
            pod_security=level,
        )

    def _check_workload_limit(self, unit: UnitOfWork, project_id: str, name: str) -> None:
        """Refuse a submission that would give the project more unfinished workloads than
        `LOCKSTEP_MAX_WORKLOADS_PER_PROJECT` allows (a 400, as the contract answers a
        submission that breaks an administrator's policy)."""
        limit = self._max_workloads
        if limit is None:
            return
        held = unit.workloads.count_unfinished(project_id)
        if held >= limit:
            raise InvalidRequest.of(
                "projectId",
                f"project {name} has {held} unfinished workloads, its limit "
                f"({limit}, LOCKSTEP_MAX_WORKLOADS_PER_PROJECT): delete some, or wait for some "
                "to complete, before submitting more",
            )

    def _project(self, unit: UnitOfWork, project_id: str) -> tuple[Project, str]:
        """A project and its department's name, read in the caller's transaction: projects
        can be renamed, moved to another department and deleted."""
        project = unit.organization.project(project_id)
        if project is None:
            raise InvalidRequest.of("projectId", f"no project has the id {project_id!r}")
        department = unit.organization.department(project.department_id)
        return project, department.name if department else ""

    def get(
        self, caller: Principal, workload_id: str, kind: WorkloadKind | None = None
    ) -> Workload:
        """A workload the caller may read; with `kind`, only one of that kind (the kind's own
        path answers 404 for a workload of another)."""
        with self._db.read() as unit:
            return self._readable(unit, caller, workload_id, kind)

    def get_with_position(self, caller: Principal, workload_id: str) -> tuple[Workload, int | None]:
        """The workload, and while it waits to be admitted its position in its project's
        queue (1: the next of its project to be admitted)."""
        with self._db.read() as unit:
            workload = self._readable(unit, caller, workload_id)
            waiting = workload.actual_phase in (Phase.CREATING, Phase.PENDING) and (
                workload.desired_phase is DesiredPhase.RUNNING and not workload.parked
            )
            return workload, unit.workloads.queue_position(workload) if waiting else None

    def delete(self, caller: Principal, workload_id: str, kind: WorkloadKind | None = None) -> None:
        with self._db.write() as unit:
            workload = workload_for(
                unit, caller, Action.DELETE, workload_id, kind=kind, include_deleted=True
            )
            if workload.desired_phase is DesiredPhase.DELETED:
                return
            unit.workloads.set_desired_phase(workload_id, DesiredPhase.DELETED, self._clock())
        self._notify(workload_id)

    def suspend(
        self, caller: Principal, workload_id: str, kind: WorkloadKind | None = None
    ) -> None:
        self._set_desired(caller, workload_id, DesiredPhase.STOPPED, kind)

    def resume(self, caller: Principal, workload_id: str, kind: WorkloadKind | None = None) -> None:
        self._set_desired(caller, workload_id, DesiredPhase.RUNNING, kind)

    def _set_desired(
        self,
        caller: Principal,
        workload_id: str,
        desired: DesiredPhase,
        kind: WorkloadKind | None,
    ) -> None:
        with self._db.write() as unit:
            workload = workload_for(unit, caller, Action.UPDATE, workload_id, kind=kind)
            if workload.desired_phase is DesiredPhase.DELETED:
                raise Conflict(f"workload {workload.name!r} is being deleted")
            if workload.actual_phase.is_terminal:
                raise Conflict(
                    f"workload {workload.name!r} is {workload.actual_phase}; "
                    "a finished workload cannot be suspended or resumed"
                )
            if workload.desired_phase is desired:
                return
            unit.workloads.set_desired_phase(workload_id, desired, self._clock())
        self._notify(workload_id)

    def readable_query(self, caller: Principal, query: ListQuery) -> ListQuery:
        """`query` narrowed to the projects the caller may read (none: it matches nothing)."""
        with self._db.read() as unit:
            return readable_list_query(unit, caller, query) or replace(
                query, project_ids=frozenset()
            )

    def count(self, caller: Principal, query: ListQuery) -> int:
        with self._db.read() as unit:
            scoped = readable_list_query(unit, caller, query)
            return 0 if scoped is None else unit.workloads.count(scoped)

    def pods(
        self, caller: Principal, workload_id: str, *, deleted: bool | None
    ) -> tuple[Workload, list[Pod]]:
        with self._db.read() as unit:
            row = self._readable(unit, caller, workload_id)
            return row, unit.workloads.pods(workload_id, deleted=deleted)

    def pod(self, caller: Principal, workload_id: str, pod_name: str) -> Pod:
        """One pod of a workload the caller may read, also one that has ended or was removed
        when the workload was suspended."""
        with self._db.read() as unit:
            self._readable(unit, caller, workload_id)
            for pod in unit.workloads.pods(workload_id):
                if pod.name == pod_name:
                    return pod
        raise NotFound(f"workload {workload_id} has no pod named {pod_name!r}")

    def events(
        self, caller: Principal, workload_id: str, *, offset: int, limit: int, order: SortOrder
    ) -> tuple[Workload, list[Event]]:
        with self._db.read() as unit:
            row = self._readable(unit, caller, workload_id)
            return row, unit.workloads.events(workload_id, offset=offset, limit=limit, order=order)

    def history(
        self, caller: Principal, workload_id: str, *, offset: int, limit: int
    ) -> tuple[Workload, list[PhaseChange | Event]]:
        with self._db.read() as unit:
            row = self._readable(unit, caller, workload_id)
            return row, unit.workloads.history(workload_id, offset=offset, limit=limit)

    def pod_list(
        self,
        caller: Principal,
        query: ListQuery,
        *,
        completed: bool | None = None,
    ) -> PageOf[ListedPod]:
        """`GET /api/v1/workloads/pods`: the pods of every workload the caller may read,
        filtered (`completed`: only ended pods, or only those still running), sorted and
        paged as `query` says."""
        with self._db.read() as unit:
            scoped = readable_list_query(unit, caller, query)
            if scoped is None:
                return PageOf([], False)
            found = unit.workloads.pods_in(scoped.project_ids, deleted=query.deleted)
            owners = unit.workloads.get_many(sorted({pod.workload_id for pod, _ in found}))
        listed = [
            ListedPod(owners[pod.workload_id], pod, deleted_at)
            for pod, deleted_at in found
            if pod.workload_id in owners
            and (completed is None or (pod.completed_at is not None) is completed)
        ]
        chosen = [
            item
            for item in listed
            if all(matches(f, POD_FIELDS[f.field](item)) for f in query.filters)
            and (not query.search or query.search in item.pod.name)
        ]
        if query.sort_by is not None:
            key = POD_FIELDS[query.sort_by]
            chosen.sort(
                key=lambda item: _sort_key(key(item)), reverse=query.sort_order is SortOrder.DESC
            )
        elif query.sort_order is SortOrder.DESC:
            chosen.reverse()
        end = query.offset + query.limit
        return PageOf(chosen[query.offset : end], end < len(chosen))

    def _readable(
        self,
        unit: UnitOfWork,
        caller: Principal,
        workload_id: str,
        kind: WorkloadKind | None = None,
    ) -> Workload:
        return workload_for(unit, caller, Action.READ, workload_id, kind=kind)


def readable_list_query(unit: UnitOfWork, caller: Principal, query: ListQuery) -> ListQuery | None:
    """`query` narrowed to the projects the caller may read; None when there are none."""
    access = access_of(unit, caller)
    if access.is_system_wide:
        return query
    readable = frozenset(
        project.id
        for project in unit.organization.projects()
        if access.allows(
            Action.READ,
            Resource.WORKLOADS,
            Scope(project.cluster_id, project.department_id, project.id),
        )
    )
    return replace(query, project_ids=readable) if readable else None
