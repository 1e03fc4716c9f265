"""Which backend runs a runtime kind: the one module that knows both runtime packages.
`create_app` builds the backend the settings choose (`backend_for`), and the API renders the
dry run of either runtime, whichever one this server drives (`renderers`), for
`POST /api/v1/workloads/distributed?dryRun=true`. Given how to find a workload's project and
department (`organization_of`), the Kubernetes dry run starts with the scheduler queues the
workload goes through (its department's, its project's), as its reconciler keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping

from lockstep.config import RuntimeKind, Settings
from lockstep.domain.organization import Department, Project
from lockstep.domain.workload import Workload
from lockstep.runtimes.backend import Backend, Organization, Renderer
from lockstep.runtimes.kubernetes.backend import KubernetesBackend
from lockstep.runtimes.local.backend import LocalBackend
from lockstep.store.database import Database

BACKENDS: Mapping[RuntimeKind, type[Backend]] = {
    RuntimeKind.LOCAL: LocalBackend,
    RuntimeKind.KUBERNETES: KubernetesBackend,
}


def backend_for(settings: Settings) -> type[Backend]:
    """The backend of the runtime the settings choose."""
    return BACKENDS[settings.runtime]


def organization_of(database: Database) -> Organization:
    """How the dry run finds a workload's department and project: in the store."""

    def find(workload: Workload) -> tuple[Department | None, Project] | None:
        with database.read() as unit:
            project = unit.organization.project(workload.project_id)
            if project is None:
                return None
            return unit.organization.department(project.department_id), project

    return find


def renderers(
    settings: Settings, *, organization: Organization | None = None
) -> Mapping[RuntimeKind, Renderer]:
    """A renderer for each runtime, as this server's settings configure it; with
    `organization`, the Kubernetes one shows the workload's queues first."""
    return {
        kind: backend.renderer(settings, organization=organization)
        for kind, backend in BACKENDS.items()
    }
