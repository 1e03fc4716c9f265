"""Claim use cases: create, list, get and delete a project's claims (the pvc volumes the local
runtime mounts), each once the caller's access to the project is checked — creating and
deleting a claim as creating and deleting a workload in the project, listing and getting as
reading its workloads. Called by the claims routes (api/routes/claims.py).

The access check reads the store; the claims themselves are the backend's (the local
runtime's: directories on this machine), measured outside the transaction. A claim that a live
workload's pods mount is not deleted (`Conflict`): its files would vanish under them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.claims import Claim, ClaimStore, check_claim
from lockstep.domain.errors import Conflict, InvalidRequest, NotFound, Violation
from lockstep.domain.listing import MAX_LIMIT, ListQuery
from lockstep.domain.organization import Project
from lockstep.domain.quantities import MAX_QUANTITY, QUANTITY_BOUND, parse_quantity
from lockstep.domain.workload import Workload
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

SIZE_RULE = "must be a quantity of bytes such as 10Gi, 500Mi or 1000000"


ON_A_CLUSTER = (
    "claims: on the Kubernetes runtime a claim is a PersistentVolumeClaim of the cluster; "
    "create it in the project's namespace (kubectl), lockstep mounts it by name"
)


class ClaimService:
    def __init__(self, database: Database, claims: ClaimStore | None) -> None:
        """`claims`: the backend's claims (the local runtime's); None on a cluster, where
        claims are the cluster's own (every call is then refused, saying so)."""
        self._db = database
        self._local = claims

    @property
    def _claims(self) -> ClaimStore:
        if self._local is None:
            raise InvalidRequest.of("", ON_A_CLUSTER)
        return self._local

    def create(self, caller: Principal, project_id: str, *, name: str, size: str | None) -> Claim:
        """A new, empty claim of `size` (a Kubernetes quantity, rounded up to a whole byte;
        None: no size); `Conflict` when the project already has one of that name."""
        size_bytes, violations = _size(size)
        violations = check_claim(name, size_bytes) + violations
        if violations:
            raise InvalidRequest(violations)
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.CREATE)
        return self._claims.create(project.id, name, size_bytes=size_bytes)

    def claims(self, caller: Principal, project_id: str) -> list[Claim]:
        """The project's claims, those lockstep made for workloads included, by name."""
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ)
        return self._claims.list(project.id)

    def claim(self, caller: Principal, project_id: str, name: str) -> Claim:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ)
        return _found(self._claims.get(project.id, name), project, name)

    def delete(self, caller: Principal, project_id: str, name: str) -> None:
        """Remove the claim and its files; `NotFound` if there is none, `Conflict` while the
        pods of a workload of the project may be using it."""
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.DELETE)
            if not self._claims.exists(project.id, name):
                raise _missing(project, name)
            users = sorted(
                w.name for w in _live_workloads(unit, project.id) if name in w.request.claim_names
            )
        if users:
            which = "the workload" if len(users) == 1 else "the workloads"
            raise Conflict(
                f"the claim {name!r} is in use by {which} {', '.join(users)} of "
                f"project {project.id}: stop or delete {'it' if len(users) == 1 else 'them'} first"
            )
        if not self._claims.delete(project.id, name):
            raise _missing(project, name)


def _size(size: str | None) -> tuple[int | None, list[Violation]]:
    """A claim's size in bytes from a Kubernetes quantity (`10Gi`), rounded up to a whole byte
    as Kubernetes rounds storage; or what is wrong with it."""
    if size is None:
        return None, []
    try:
        value = parse_quantity(size)
    except ValueError:
        return None, [Violation("size", f"{SIZE_RULE}, not {size!r}")]
    if value > MAX_QUANTITY:
        return None, [Violation("size", QUANTITY_BOUND)]
    if value <= 0:
        return None, [Violation("size", f"must be greater than 0, not {size!r}")]
    return math.ceil(value), []


def _project(unit: UnitOfWork, caller: Principal, project_id: str, action: Action) -> Project:
    """The project, once the caller may do `action` on workloads in it."""
    project = unit.organization.project(project_id)
    if project is None:
        raise NotFound(f"no project has the id {project_id!r}")
    scope = Scope(project.cluster_id, project.department_id, project.id)
    access_of(unit, caller).check(action, Resource.WORKLOADS, scope)
    return project


def _live_workloads(unit: UnitOfWork, project_id: str) -> Iterator[Workload]:
    """The project's workloads whose pods may exist now."""
    offset = 0
    while True:
        query = ListQuery(offset=offset, limit=MAX_LIMIT, project_ids=frozenset({project_id}))
        page, more = unit.workloads.page(query)
        yield from (w for w in page if w.actual_phase.has_pods)
        if not more:
            return
        offset += len(page)


def _missing(project: Project, name: str) -> NotFound:
    return NotFound(f"project {project.id} has no claim named {name!r}")


def _found(found: Claim | None, project: Project, name: str) -> Claim:
    if found is None:
        raise _missing(project, name)
    return found
