"""The dry run: what a runtime would run for a workload, rendered without running anything —
the local runtime's pod launches, or the Kubernetes runtime's manifests. Both are pure, so
the API renders for either runtime, whichever one this server drives.

Built by the API (`create_app`) for `POST /api/v1/workloads/distributed?dryRun=true`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from lockstep.config import RuntimeKind, Settings
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.workload import Workload
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.render import render as render_manifests
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.runtimes.local.sandbox.policy import policy_of
from lockstep.runtimes.local.workload_launches import Launches

Renderer = Callable[[Workload], dict[str, Any]]


def kubernetes_settings(settings: Settings) -> KubernetesSettings:
    """The Kubernetes runtime's settings from lockstep's own."""
    return KubernetesSettings(
        scheduler=SchedulerKind(settings.kube_scheduler.value),
        node_pool_label=settings.kube_node_pool_label,
        s3_csi_driver=settings.kube_s3_csi_driver,
        ingress_class_name=settings.kube_ingress_class,
    )


def renderers(settings: Settings) -> Mapping[RuntimeKind, Renderer]:
    """A renderer for each runtime, as this server's settings configure it."""
    cluster = kubernetes_settings(settings)

    @functools.cache
    def launches() -> Launches:
        # Built at the first dry run, not at start-up: it probes bwrap (the runtime does too).
        return Launches(
            settings.runtime_dir, dict(os.environ), settings.image_environments, policy_of(settings)
        )

    def local(workload: Workload) -> dict[str, Any]:
        return launches().render(workload, workload.plan())

    def kubernetes(workload: Workload) -> dict[str, Any]:
        try:
            manifests = render_manifests(workload, workload.plan(), cluster)
        except PodStartError as error:
            raise InvalidRequest.of("spec", f"cannot run on Kubernetes: {error}") from error
        return {"runtime": RuntimeKind.KUBERNETES.value, "manifests": manifests}

    return {RuntimeKind.LOCAL: local, RuntimeKind.KUBERNETES: kubernetes}
