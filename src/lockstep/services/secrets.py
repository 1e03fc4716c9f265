"""Secret and config map use cases: create, replace, list, get and delete them per project,
each in one transaction with its access check; and `for_project`, which the reconciler calls
to resolve a workload's environment variables.

No caller ever gets a secret's values back, only its keys: they leave the store only through
`for_project`, which has no caller (lockstep itself asks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import InvalidRequest, NotFound
from lockstep.domain.organization import Project
from lockstep.domain.secrets import ConfigMap, ProjectValues, Secret, ValueKind, check_values
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

T = TypeVar("T")


class ValueService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    # Secrets

    def create_secret(
        self, caller: Principal, project_id: str, *, name: str, data: Mapping[str, str]
    ) -> Secret:
        """A new secret; `Conflict` when the project already has one of that name."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.CREATE, Resource.SECRETS)
            return unit.secrets.add_secret(
                project_id=project.id,
                name=name,
                data=data,
                created_by=caller.name,
                now=self._clock(),
            )

    def replace_secret(
        self, caller: Principal, project_id: str, *, name: str, data: Mapping[str, str]
    ) -> Secret:
        """The secret with `data` as its only keys and values; `NotFound` if there is none."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.UPDATE, Resource.SECRETS)
            found = unit.secrets.replace_secret(
                project_id=project.id, name=name, data=data, now=self._clock()
            )
            return _found(found, ValueKind.SECRET, project, name)

    def secrets(self, caller: Principal, project_id: str) -> list[Secret]:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, Resource.SECRETS)
            return unit.secrets.secrets(project.id)

    def secret(self, caller: Principal, project_id: str, name: str) -> Secret:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, Resource.SECRETS)
            return _found(unit.secrets.secret(project.id, name), ValueKind.SECRET, project, name)

    def delete_secret(self, caller: Principal, project_id: str, name: str) -> None:
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.DELETE, Resource.SECRETS)
            if not unit.secrets.delete_secret(project.id, name):
                raise _missing(ValueKind.SECRET, project, name)

    # Config maps

    def create_config_map(
        self, caller: Principal, project_id: str, *, name: str, data: Mapping[str, str]
    ) -> ConfigMap:
        """A new config map; `Conflict` when the project already has one of that name."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.CREATE, Resource.CONFIG_MAPS)
            return unit.secrets.add_config_map(
                project_id=project.id,
                name=name,
                data=data,
                created_by=caller.name,
                now=self._clock(),
            )

    def replace_config_map(
        self, caller: Principal, project_id: str, *, name: str, data: Mapping[str, str]
    ) -> ConfigMap:
        """The config map with `data` as its only keys and values; `NotFound` if there is
        none."""
        _check(name, data)
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.UPDATE, Resource.CONFIG_MAPS)
            found = unit.secrets.replace_config_map(
                project_id=project.id, name=name, data=data, now=self._clock()
            )
            return _found(found, ValueKind.CONFIG_MAP, project, name)

    def config_maps(self, caller: Principal, project_id: str) -> list[ConfigMap]:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, Resource.CONFIG_MAPS)
            return unit.secrets.config_maps(project.id)

    def config_map(self, caller: Principal, project_id: str, name: str) -> ConfigMap:
        with self._db.read() as unit:
            project = _project(unit, caller, project_id, Action.READ, Resource.CONFIG_MAPS)
            found = unit.secrets.config_map(project.id, name)
            return _found(found, ValueKind.CONFIG_MAP, project, name)

    def delete_config_map(self, caller: Principal, project_id: str, name: str) -> None:
        with self._db.write() as unit:
            project = _project(unit, caller, project_id, Action.DELETE, Resource.CONFIG_MAPS)
            if not unit.secrets.delete_config_map(project.id, name):
                raise _missing(ValueKind.CONFIG_MAP, project, name)

    # For lockstep itself

    def for_project(self, project_id: str) -> ProjectValues:
        """Every secret (decrypted) and config map of the project, for resolving workloads'
        environment variables; empty for a project with none. No access check: never call
        it on behalf of a caller. `SealBroken` names a secret that cannot be decrypted."""
        with self._db.read() as unit:
            return unit.secrets.for_project(project_id)


def _check(name: str, data: Mapping[str, str]) -> None:
    violations = check_values(name, data)
    if violations:
        raise InvalidRequest(violations)


def _project(
    unit: UnitOfWork, caller: Principal, project_id: str, action: Action, resource: Resource
) -> Project:
    """The project, once the caller may do `action` on `resource` in it."""
    project = unit.organization.project(project_id)
    if project is None:
        raise NotFound(f"no project has the id {project_id!r}")
    scope = Scope(project.cluster_id, project.department_id, project.id)
    access_of(unit, caller).check(action, resource, scope)
    return project


def _missing(kind: ValueKind, project: Project, name: str) -> NotFound:
    return NotFound(f"project {project.id} has no {kind.value} named {name!r}")


def _found(found: T | None, kind: ValueKind, project: Project, name: str) -> T:
    if found is None:
        raise _missing(kind, project, name)
    return found
