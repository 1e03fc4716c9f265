"""`create_app(settings)`: the whole server — store, services, the runtime (local or
Kubernetes), its source of metrics, reconciler and routes — with nothing built at import
time."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

import httpx
import orjson
from fastapi import Depends, FastAPI

from lockstep import __version__
from lockstep.api import errors, views
from lockstep.api.body_size import BodySizeLimit
from lockstep.api.calls import Calls
from lockstep.api.deps import Services, no_nul_in_url
from lockstep.api.http_metrics import HttpMetrics
from lockstep.api.routes import (
    claims,
    console,
    health,
    metrics,
    node_pools,
    pod_logs,
    prometheus,
    scheduling,
    secrets,
    tokens,
    workload_kinds,
    workloads,
)
from lockstep.api.routes import organization as organization_routes
from lockstep.api.routes.prometheus import Exposition
from lockstep.api.token_guard import TokenGuard
from lockstep.assembly import bootstrap, open_core
from lockstep.config import RuntimeKind, SandboxMode, Settings
from lockstep.domain.clock import Clock, utc_now
from lockstep.domain.cluster import Node
from lockstep.observability.instruments import Instruments
from lockstep.reconciler.controller import (
    Controller,
    Placement,
    ProcessController,
    SiblingController,
    ThreadController,
)
from lockstep.reconciler.queue import ORGANIZATION_CHANGED
from lockstep.rendering import kubernetes_settings, organization_of, renderers
from lockstep.runtimes.base import PodLogs, Runtime
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.gpus import GpuReader
from lockstep.runtimes.local.log_reader import LocalLogReader
from lockstep.runtimes.local.sandbox.policy import unknown_data_volumes
from lockstep.runtimes.local.volumes.claims import Claims
from lockstep.services.claims import ClaimService
from lockstep.services.metrics.gauges import StoreGauges
from lockstep.services.metrics.prometheus_source import PrometheusMetrics, store_selector
from lockstep.services.metrics.series import MetricsService
from lockstep.services.metrics.sources import (
    PROMETHEUS_NEEDED,
    MetricsSource,
    NoMetricsSource,
    SampledMetrics,
)
from lockstep.services.metrics.telemetry import TelemetryService
from lockstep.services.node_pools import NodePoolService
from lockstep.services.nodes import LocalNodes, NodeService, NodeSource
from lockstep.services.organization import OrganizationService
from lockstep.services.scheduling import SchedulingService
from lockstep.services.stream_slots import Limit, StreamSlots
from lockstep.services.workload_list import WorkloadList
from lockstep.services.workload_watch import WorkloadWatch
from lockstep.services.workloads import WorkloadService
from lockstep.store.database import Database

log = logging.getLogger(__name__)


def create_app(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    runtime: Runtime | None = None,
    reconciler: Placement = Placement.THREAD,
    gpus: GpuReader | None = None,
) -> FastAPI:
    """The server. `reconciler`: where the local runtime's reconciler runs (`lockstep serve`
    runs it in a child process, or in a sibling with several API processes). `gpus`: what the
    local runtime's metrics sampler reads GPUs with (NVML by default)."""
    core = open_core(settings, clock=clock, group_commit=True)
    instruments = Instruments()
    core.database.on_commit = instruments.observe_commit
    created = bootstrap(core)
    if settings.runtime is RuntimeKind.KUBERNETES:
        parts = _on_a_cluster(core.database, settings, clock=clock)
    else:
        controller: Controller
        if reconciler is Placement.CHILD:
            controller = ProcessController(settings)
        elif reconciler is Placement.SIBLING:
            controller = SiblingController(core.database, settings)
        else:
            controller = ThreadController(
                core.database,
                settings,
                clock=clock,
                runtime=runtime,
                instruments=instruments,
                gpus=gpus,
            )
        local_nodes = machine.nodes(settings.nodes)
        parts = _Parts(
            controller,
            nodes=LocalNodes(core.database, local_nodes),
            logs=LocalLogReader(settings.runtime_dir),
            plain_nodes=lambda: local_nodes,
        )
    controller = parts.controller
    prometheus_http = (
        httpx.Client(timeout=settings.prometheus_timeout_seconds)
        if settings.runtime is RuntimeKind.KUBERNETES and settings.prometheus_url
        else None
    )
    organization = OrganizationService(
        core.database, clock=clock, nodes=parts.plain_nodes, wake=_waking(controller)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        controller.start()
        try:
            yield
        finally:
            await app.state.workload_watch.close()
            controller.stop()
            if prometheus_http is not None:
                prometheus_http.close()
            core.close()

    app = FastAPI(
        title="lockstep",
        version=__version__,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
        dependencies=[Depends(no_nul_in_url)],
    )
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(HttpMetrics, instruments=instruments)
    unsandboxed = settings.runtime is RuntimeKind.LOCAL and settings.sandbox is SandboxMode.OFF
    app.state.services = Services(
        workloads=WorkloadService(
            core.database,
            clock=clock,
            notify=controller.notify,
            runtime_checks=(
                (lambda request: unknown_data_volumes(request, settings.data_volumes))
                if settings.runtime is RuntimeKind.LOCAL
                else (lambda _: [])
            ),
            allowed_host_paths=settings.host_path_allowances,
            max_workloads_per_project=settings.max_workloads_per_project or None,
        ),
        workload_list=WorkloadList(
            core.database,
            render=functools.partial(
                views.workload_item,
                image_environments=settings.image_environments,
                unsandboxed=unsandboxed,
            ),
            clock=clock,
            capacity=settings.list_items_remembered,
        ),
        organization=organization,
        scheduling=SchedulingService(core.database),
        identity=core.identity,
        secrets=core.secrets,
        claims=ClaimService(
            core.database,
            Claims(settings.claims_dir, clock=clock)
            if settings.runtime is RuntimeKind.LOCAL
            else None,
        ),
        nodes=NodeService(organization, parts.nodes),
        node_pools=NodePoolService(core.database, organization, parts.nodes),
        metrics=MetricsService(
            core.database,
            source=_metrics_source(settings, core.database, prometheus_http),
            nodes=parts.plain_nodes,
            clock=clock,
        ),
        telemetry=TelemetryService(core.database, clock=clock),
        tokens=core.tokens,
        calls=Calls(core.database),
        logs=parts.logs,
        renderers=renderers(settings, organization=organization_of(core.database)),
        runtime=settings.runtime,
        image_environments=settings.image_environments,
        unsandboxed=unsandboxed,
        public_host=settings.public_host,
        clock=clock,
        version=__version__,
        bounds=settings.request_bounds,
        token_guard=TokenGuard(
            per_minute=settings.token_requests_per_minute,
            at_once=settings.token_checks_at_once,
        ),
    )
    app.state.workload_watch = WorkloadWatch(
        core.database,
        app.state.services.workloads,
        run_store=app.state.services.calls.store,
        render=lambda workload, figures: orjson.dumps(
            views.workload_item(
                workload,
                image_environments=app.state.services.image_environments,
                unsandboxed=app.state.services.unsandboxed,
                figures=figures,
            )
        ),
        clock=clock,
        max_streams=settings.max_watch_streams,
        max_streams_per_caller=settings.max_watch_streams_per_caller,
    )
    app.state.log_streams = StreamSlots(
        "log streams",
        per_caller=Limit(
            settings.max_log_streams_per_caller, "LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER"
        ),
        overall=Limit(settings.max_log_streams, "LOCKSTEP_MAX_LOG_STREAMS"),
    )
    app.state.bootstrap = created
    app.state.settings = settings
    app.state.exposition = Exposition(
        instruments, StoreGauges(core.database, parts.nodes, clock=clock)
    )
    app.state.controller = controller
    app.state.readiness = health.Readiness(core.database.ping, controller.reconciler_runs)
    errors.install(app)
    routers = (
        metrics,  # before the routes whose `/{id}` would take `telemetry` for an id
        health,
        tokens,
        workloads,
        pod_logs,
        organization_routes,
        node_pools,
        prometheus,
        scheduling,
        secrets,
        claims,
        console,
    )
    for router in workload_kinds.routers:
        app.include_router(router)
    for module in routers:
        app.include_router(module.router)
    return app


@dataclass(frozen=True, slots=True)
class _Parts:
    """What depends on the runtime: who reconciles, where nodes and pod logs come from."""

    controller: Controller
    nodes: NodeSource
    logs: PodLogs
    plain_nodes: Callable[[], Sequence[Node]]
    """The nodes alone, without what is held of them (their pools are node pools)."""


def _metrics_source(
    settings: Settings, database: Database, client: httpx.Client | None
) -> MetricsSource:
    """Where measured figures come from: the local runtime's samples; on Kubernetes, the
    cluster's Prometheus asked with `client`, or none without LOCKSTEP_PROMETHEUS_URL."""
    if settings.runtime is RuntimeKind.LOCAL:
        return SampledMetrics(database)
    if settings.prometheus_url is None or client is None:
        return NoMetricsSource(PROMETHEUS_NEEDED)
    return PrometheusMetrics(
        settings.prometheus_url,
        client=client,
        selector=store_selector(database),
        timeout=settings.prometheus_timeout_seconds,
        min_range=timedelta(seconds=settings.prometheus_min_range_seconds),
    )


def _waking(controller: Controller) -> Callable[[], None]:
    """The organization changed: the reconciler applies it at once (see ORGANIZATION_CHANGED)."""

    def wake() -> None:
        controller.notify(ORGANIZATION_CHANGED)

    return wake


def _on_a_cluster(database: Database, settings: Settings, *, clock: Clock) -> _Parts:
    """The Kubernetes runtime on the cluster the settings name (a kubeconfig that cannot be
    loaded stops lockstep at start-up, saying why)."""
    from lockstep.reconciler.cluster import ClusterController
    from lockstep.runtimes.kubernetes.cluster import KubeCluster
    from lockstep.runtimes.kubernetes.logs import ClusterLogReader
    from lockstep.runtimes.kubernetes.nodes import ClusterNodes

    cluster = KubeCluster.from_config(settings.kubeconfig, settings.kube_context)

    def namespace_of(workload_id: str) -> str | None:
        with database.read() as unit:
            workload = unit.workloads.get(workload_id, include_deleted=True)
        return None if workload is None else workload.namespace

    nodes = ClusterNodes(cluster, pool_label=settings.kube_node_pool_label)
    return _Parts(
        ClusterController(database, cluster, settings=kubernetes_settings(settings), clock=clock),
        nodes=nodes,
        logs=ClusterLogReader(cluster, namespace_of=namespace_of, clock=clock),
        plain_nodes=lambda: [use.node for use in nodes()],
    )
