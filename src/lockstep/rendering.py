"""The dry run: what a runtime would run for a workload, rendered without running anything —
the local runtime's pod launches, or the Kubernetes runtime's manifests. Both are pure, so
the API renders for either runtime, whichever one this server drives.

Built by the API (`create_app`) for `POST /api/v1/workloads/distributed?dryRun=true`. Given
how to find a workload's project and department (`organization_of`), the Kubernetes dry run
starts with the scheduler queues the workload goes through (its department's, its project's),
as the reconciler keeps them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from lockstep.config import RuntimeKind, Settings
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.organization import Department, Project
from lockstep.domain.workload import Workload
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.queues import workload_queues
from lockstep.runtimes.kubernetes.render import render as render_manifests
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.runtimes.local.pod_bounds import bounds_of
from lockstep.runtimes.local.sandbox.policy import policy_of
from lockstep.runtimes.local.workload_launches import Launches
from lockstep.store.database import Database

Renderer = Callable[[Workload], dict[str, Any]]
Organization = Callable[[Workload], tuple[Department | None, Project] | None]
"""A workload's department and project as stored; None when its project is unknown."""


def organization_of(database: Database) -> Organization:
    """How the dry run finds a workload's department and project: in the store."""

    def find(workload: Workload) -> tuple[Department | None, Project] | None:
        with database.read() as unit:
            project = unit.organization.project(workload.project_id)
            if project is None:
                return None
            return unit.organization.department(project.department_id), project

    return find


def kubernetes_settings(settings: Settings) -> KubernetesSettings:
    """The Kubernetes runtime's settings from lockstep's own."""
    return KubernetesSettings(
        scheduler=SchedulerKind(settings.kube_scheduler.value),
        node_pool_label=settings.kube_node_pool_label,
        s3_csi_driver=settings.kube_s3_csi_driver,
        ingress_class_name=settings.kube_ingress_class,
    )


def renderers(
    settings: Settings, *, organization: Organization | None = None
) -> Mapping[RuntimeKind, Renderer]:
    """A renderer for each runtime, as this server's settings configure it; with
    `organization`, the Kubernetes one shows the workload's queues first."""
    cluster = kubernetes_settings(settings)

    @functools.cache
    def launches() -> Launches:
        # Built at the first dry run, not at start-up: it probes bwrap (the runtime does too).
        return Launches(
            settings.runtime_dir,
            dict(os.environ),
            settings.image_environments,
            policy_of(settings),
            bounds_of(settings),
        )

    def local(workload: Workload) -> dict[str, Any]:
        return launches().render(workload, workload.plan())

    def kubernetes(workload: Workload) -> dict[str, Any]:
        try:
            manifests = render_manifests(workload, workload.plan(), cluster)
        except PodStartError as error:
            raise InvalidRequest.of("spec", f"cannot run on Kubernetes: {error}") from error
        found = None if organization is None else organization(workload)
        queues = [] if found is None else workload_queues(*found, cluster)
        return {"runtime": RuntimeKind.KUBERNETES.value, "manifests": [*queues, *manifests]}

    return {RuntimeKind.LOCAL: local, RuntimeKind.KUBERNETES: kubernetes}
