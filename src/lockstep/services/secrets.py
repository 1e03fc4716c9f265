"""Secret and config map use cases, one for both kinds: create, replace, list, get and delete
them per project, each in one transaction with its access check; and `for_project`, which the
reconciler calls to resolve a workload's environment variables.

No caller ever gets a secret's values back, only its keys: they leave the store only through
`for_project`, which has no caller (lockstep itself asks).
"""

from __future__ import annotations

from collections.abc import Mapping

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import InvalidRequest, NotFound
from lockstep.domain.organization import Project
from lockstep.domain.secrets import ProjectSecrets, Secret, SecretKind, check_secret
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

_RESOURCE: Mapping[SecretKind, Resource] = {
    SecretKind.SECRET: Resource.SECRETS,
    SecretKind.CONFIG_MAP: Resource.CONFIG_MAPS,
}
"""What the access rules call each kind."""


class SecretService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def create(
        self,
        caller: Principal,
        kind: SecretKind,
        project_id: str,
        *,
        name: str,
        data: Mapping[str, str],
    ) -> Secret:
        """A new secret or config map; `Conflict` when the project already has one of that
        kind and name."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.CREATE, kind)
            return unit.secrets.add(
                kind,
                project_id=project.id,
                name=name,
                data=data,
                created_by=caller.name,
                now=self._clock(),
            )

    def replace(
        self,
        caller: Principal,
        kind: SecretKind,
        project_id: str,
        *,
        name: str,
        data: Mapping[str, str],
    ) -> Secret:
        """The secret or config map with `data` as its only keys and values; `NotFound` if
        there is none."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.UPDATE, kind)
            found = unit.secrets.replace(
                kind, project_id=project.id, name=name, data=data, now=self._clock()
            )
            return _found(found, kind, project, name)

    def secrets(self, caller: Principal, kind: SecretKind, project_id: str) -> list[Secret]:
        """The project's secrets or config maps, by name."""
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, kind)
            return unit.secrets.secrets(kind, project.id)

    def secret(self, caller: Principal, kind: SecretKind, project_id: str, name: str) -> Secret:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, kind)
            return _found(unit.secrets.secret(kind, project.id, name), kind, project, name)

    def delete(self, caller: Principal, kind: SecretKind, project_id: str, name: str) -> None:
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.DELETE, kind)
            if not unit.secrets.delete(kind, project.id, name):
                raise _missing(kind, project, name)

    # For lockstep itself

    def for_project(self, project_id: str) -> ProjectSecrets:
        """Every secret (decrypted) and config map of the project, for resolving workloads'
        environment variables; empty for a project with none. No access check: never call
        it on behalf of a caller. `SealBroken` names a secret that cannot be decrypted."""
        with self._db.read() as unit:
            return unit.secrets.for_project(project_id)


def _check(name: str, data: Mapping[str, str]) -> None:
    violations = check_secret(name, data)
    if violations:
        raise InvalidRequest(violations)


def _project(
    unit: UnitOfWork, caller: Principal, project_id: str, action: Action, kind: SecretKind
) -> Project:
    """The project, once the caller may do `action` on its secrets or config maps (`kind`)."""
    project = unit.organization.project(project_id)
    if project is None:
        raise NotFound(f"no project has the id {project_id!r}")
    scope = Scope(project.cluster_id, project.department_id, project.id)
    access_of(unit, caller).check(action, _RESOURCE[kind], scope)
    return project


def _missing(kind: SecretKind, project: Project, name: str) -> NotFound:
    return NotFound(f"project {project.id} has no {kind.value} named {name!r}")


def _found(found: Secret | None, kind: SecretKind, project: Project, name: str) -> Secret:
    if found is None:
        raise _missing(kind, project, name)
    return found
