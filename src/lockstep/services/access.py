"""The caller's access rules, loaded inside the caller's transaction, and the one way a
service finds a workload by its id for a caller (`workload_for`)."""

from __future__ import annotations

from lockstep.auth.access import Access, Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.errors import NotFound
from lockstep.domain.identity import SubjectType
from lockstep.domain.kinds import TRAITS, WorkloadKind
from lockstep.domain.workload import Workload
from lockstep.store.database import UnitOfWork


def access_of(unit: UnitOfWork, caller: Principal) -> Access:
    """The caller's live rules: a user's name them by email or by id, or name a group of
    theirs; a service account's name its client id (as an `app` or a `service-account`)."""
    if caller.subject_type is SubjectType.OPERATOR:
        return Access.of_operator()
    if caller.subject_type is SubjectType.USER and caller.user_id is not None:
        user = unit.users.get(caller.user_id)
        groups = () if user is None else user.groups
        return Access(unit.identity.rules_of_any(subjects_of_user(caller, groups)))
    if caller.subject_type is SubjectType.APP:
        return Access(unit.identity.rules_of_client(caller.subject_id))
    return Access(unit.identity.rules_of(caller.subject_type, caller.subject_id))


def subjects_of_user(caller: Principal, groups: tuple[str, ...]) -> list[tuple[SubjectType, str]]:
    """The subjects a rule of a user may name: their email, their id, a group of theirs."""
    assert caller.user_id is not None
    return [
        (SubjectType.USER, caller.subject_id),
        (SubjectType.USER, caller.user_id),
        *((SubjectType.GROUP, group) for group in groups),
    ]


def workload_scope(workload: Workload) -> Scope:
    return Scope(workload.cluster_id, workload.department_id, workload.project_id)


def workload_for(
    unit: UnitOfWork,
    caller: Principal,
    action: Action,
    workload_id: str,
    *,
    kind: WorkloadKind | None = None,
    include_deleted: bool = False,
) -> Workload:
    """The workload `workload_id` (of `kind`, when given), once the caller may do `action` on
    it. A workload the caller may not read is answered exactly as one that does not exist
    (`NotFound`, with the same message), so that nobody learns by its answer whether an id
    of another project is in use; one it may read but not act on is `Forbidden`."""
    workload = unit.workloads.get(workload_id, include_deleted=include_deleted)
    access = access_of(unit, caller)
    if (
        workload is None
        or (kind is not None and workload.kind is not kind)
        or not access.allows(Action.READ, Resource.WORKLOADS, workload_scope(workload))
    ):
        raise NotFound(no_such_workload(workload_id, kind))
    if action is not Action.READ:
        access.check(action, Resource.WORKLOADS, workload_scope(workload))
    return workload


def no_such_workload(workload_id: str, kind: WorkloadKind | None = None) -> str:
    noun = "workload" if kind is None else TRAITS[kind].noun
    return f"no {noun} has the id {workload_id!r}"
