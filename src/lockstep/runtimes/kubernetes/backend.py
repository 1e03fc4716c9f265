"""The Kubernetes runtime as a backend: the cluster the settings name (its kubeconfig loaded at
start-up), reconciled by the replica that holds the store's leadership (reconciler.py), its
nodes with the pods on them, its pods' logs, the cluster's Prometheus as the source of measured
figures (none without LOCKSTEP_PROMETHEUS_URL), and its dry run: the manifests it would apply,
after the scheduler queues the workload goes through. Claims are the cluster's own
(PersistentVolumeClaims), so lockstep keeps none."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import httpx

from lockstep.config import RuntimeKind, Settings
from lockstep.domain.cluster import Node, NodeUse
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.workload import Workload
from lockstep.runtimes.backend import Backend, Organization, Renderer, Wiring
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.cluster import KubeCluster
from lockstep.runtimes.kubernetes.logs import ClusterLogReader
from lockstep.runtimes.kubernetes.nodes import ClusterNodes
from lockstep.runtimes.kubernetes.queues import workload_queues
from lockstep.runtimes.kubernetes.reconciler import KubernetesController
from lockstep.runtimes.kubernetes.render import render as render_manifests
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.services.metrics.prometheus_source import PrometheusMetrics, store_selector
from lockstep.services.metrics.sources import PROMETHEUS_NEEDED, MetricsSource, NoMetricsSource


def kubernetes_settings(settings: Settings) -> KubernetesSettings:
    """The Kubernetes runtime's settings from lockstep's own."""
    return KubernetesSettings(
        scheduler=SchedulerKind(settings.kube_scheduler.value),
        node_pool_label=settings.kube_node_pool_label,
        s3_csi_driver=settings.kube_s3_csi_driver,
        ingress_class_name=settings.kube_ingress_class,
    )


class KubernetesBackend(Backend):
    """Kubeflow jobs (and a training's Job, a workspace's StatefulSet) on a cluster."""

    def __init__(self, settings: Settings, wiring: Wiring) -> None:
        """A kubeconfig that cannot be loaded stops lockstep here, saying why."""
        database = wiring.database
        cluster = KubeCluster.from_config(settings.kubeconfig, settings.kube_context)

        def namespace_of(workload_id: str) -> str | None:
            with database.read() as unit:
                workload = unit.workloads.get(workload_id, include_deleted=True)
            return None if workload is None else workload.namespace

        controller = KubernetesController(
            database, cluster, settings=kubernetes_settings(settings), clock=wiring.clock
        )
        self._node_uses = ClusterNodes(cluster, pool_label=settings.kube_node_pool_label)
        self._prometheus = (
            httpx.Client(timeout=settings.prometheus_timeout_seconds)
            if settings.prometheus_url
            else None
        )
        metrics: MetricsSource = NoMetricsSource(PROMETHEUS_NEEDED)
        if settings.prometheus_url is not None and self._prometheus is not None:
            metrics = PrometheusMetrics(
                settings.prometheus_url,
                client=self._prometheus,
                selector=store_selector(database),
                timeout=settings.prometheus_timeout_seconds,
                min_range=timedelta(seconds=settings.prometheus_min_range_seconds),
            )
        super().__init__(
            controller=controller,
            logs=ClusterLogReader(cluster, namespace_of=namespace_of, clock=wiring.clock),
            metrics=metrics,
        )

    @classmethod
    def build(cls, settings: Settings, wiring: Wiring) -> KubernetesBackend:
        return cls(settings, wiring)

    @classmethod
    def renderer(cls, settings: Settings, *, organization: Organization | None = None) -> Renderer:
        """The manifests it would apply; with `organization`, the workload's queues first."""
        cluster = kubernetes_settings(settings)

        def render(workload: Workload) -> dict[str, Any]:
            try:
                manifests = render_manifests(workload, workload.plan(), cluster)
            except PodStartError as error:
                raise InvalidRequest.of("spec", f"cannot run on Kubernetes: {error}") from error
            found = None if organization is None else organization(workload)
            queues = [] if found is None else workload_queues(*found, cluster)
            return {"runtime": RuntimeKind.KUBERNETES.value, "manifests": [*queues, *manifests]}

        return render

    def close(self) -> None:
        if self._prometheus is not None:
            self._prometheus.close()

    def nodes(self) -> Sequence[Node]:
        return [use.node for use in self._node_uses()]

    def node_uses(self) -> list[NodeUse]:
        return self._node_uses()
