"""`create_app(settings)`: the whole server — store, services, the backend of the runtime the
settings choose (runtimes/registry.py: its reconciler, nodes, pod logs, metrics and claims)
and routes — with nothing built at import time."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import orjson
from fastapi import Depends, FastAPI

from lockstep import __version__
from lockstep.api import errors, views
from lockstep.api.audit_trail import AuditTrail, Cluster
from lockstep.api.body_size import BodySizeLimit
from lockstep.api.calls import Calls
from lockstep.api.deps import Services, no_nul_in_url
from lockstep.api.http_metrics import HttpMetrics
from lockstep.api.routes import (
    audit,
    authorization,
    claims,
    clients,
    console,
    health,
    identity_providers,
    metrics,
    node_pools,
    pod_logs,
    prometheus,
    scheduling,
    secrets,
    single_sign_on,
    tokens,
    users,
    workload_kinds,
    workloads,
)
from lockstep.api.routes import organization as organization_routes
from lockstep.api.routes.prometheus import Exposition
from lockstep.api.token_guard import TokenGuard
from lockstep.assembly import bootstrap, open_core
from lockstep.auth.oidc import OidcClient
from lockstep.config import Settings
from lockstep.domain.clock import Clock, utc_now
from lockstep.domain.gpus import GpuReader
from lockstep.observability.instruments import Instruments
from lockstep.reconciler.control import Placement
from lockstep.runtimes.backend import Wiring
from lockstep.runtimes.base import Runtime
from lockstep.runtimes.registry import backend_for, organization_of, renderers
from lockstep.services.access_rules import AccessRuleService
from lockstep.services.audit import AuditLogService, AuditWriter
from lockstep.services.claims import ClaimService
from lockstep.services.clients import ClientService
from lockstep.services.identity_providers import IdentityProviderService
from lockstep.services.metrics.gauges import StoreGauges
from lockstep.services.metrics.series import MetricsService
from lockstep.services.metrics.telemetry import TelemetryService
from lockstep.services.node_pools import NodePoolService
from lockstep.services.nodes import NodeService
from lockstep.services.organization import OrganizationService
from lockstep.services.scheduling import SchedulingService
from lockstep.services.single_sign_on import SingleSignOn
from lockstep.services.stream_slots import Limit, StreamSlots
from lockstep.services.token_standing import TokenStanding
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
    runs it in a child process, or in a sibling with several API processes). `runtime`: the
    runtime the local reconciler drives (the local one unless given). `gpus`: what the local
    runtime's metrics sampler reads GPUs with (NVML by default)."""
    core = open_core(settings, clock=clock, group_commit=True)
    instruments = Instruments()
    core.database.on_commit = instruments.observe_commit
    created = bootstrap(core)
    backend = backend_for(settings).build(
        settings,
        Wiring(
            core.database,
            clock=clock,
            instruments=instruments,
            placement=reconciler,
            runtime=runtime,
            gpus=gpus,
        ),
    )
    organization = OrganizationService(
        core.database, clock=clock, nodes=backend.nodes, wake=backend.organization_changed
    )
    audit_writer = AuditWriter(
        core.database,
        clock=clock,
        retention=timedelta(days=settings.audit_retention_days),
        instruments=instruments,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        backend.start()
        audit_writer.start()
        try:
            yield
        finally:
            await app.state.workload_watch.close()
            backend.stop()
            audit_writer.stop()
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
    app.add_middleware(
        AuditTrail, writer=audit_writer, clock=clock, cluster=_only_cluster(core.database)
    )
    calls = Calls(core.database)
    app.state.services = Services(
        workloads=WorkloadService(
            core.database,
            clock=clock,
            notify=backend.notify,
            runtime_checks=backend.refusals,
            allowed_host_paths=settings.host_path_allowances,
            max_workloads_per_project=settings.max_workloads_per_project or None,
        ),
        workload_list=WorkloadList(
            core.database,
            render=functools.partial(
                views.workload_item,
                image_environments=settings.image_environments,
                unapplied=backend.unapplied,
            ),
            clock=clock,
            capacity=settings.list_items_remembered,
        ),
        organization=organization,
        scheduling=SchedulingService(core.database),
        identity=core.identity,
        access_rules=AccessRuleService(core.database, clock=clock),
        clients=ClientService(core.database, clock=clock),
        users=core.users,
        identity_providers=IdentityProviderService(core.database, clock=clock),
        single_sign_on=SingleSignOn(
            core.database, clock=clock, users=core.users, oidc=OidcClient(), calls=calls
        ),
        standing=TokenStanding(core.identity.token_generation),
        secrets=core.secrets,
        claims=ClaimService(core.database, backend.claims),
        nodes=NodeService(organization, backend.node_uses),
        node_pools=NodePoolService(core.database, organization, backend.node_uses),
        metrics=MetricsService(
            core.database, source=backend.metrics, nodes=backend.nodes, clock=clock
        ),
        telemetry=TelemetryService(core.database, clock=clock),
        tokens=core.tokens,
        calls=calls,
        logs=backend.logs,
        renderers=renderers(settings, organization=organization_of(core.database)),
        runtime=settings.runtime,
        image_environments=settings.image_environments,
        unapplied=backend.unapplied,
        public_host=settings.public_host,
        public_url=settings.public_url,
        clock=clock,
        version=__version__,
        bounds=settings.request_bounds,
        token_guard=TokenGuard(
            per_minute=settings.token_requests_per_minute,
            at_once=settings.token_checks_at_once,
        ),
        audit=AuditLogService(core.database),
    )
    app.state.workload_watch = WorkloadWatch(
        core.database,
        app.state.services.workloads,
        run_store=app.state.services.calls.store,
        render=lambda workload, figures: orjson.dumps(
            views.workload_item(
                workload,
                image_environments=app.state.services.image_environments,
                unapplied=app.state.services.unapplied,
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
        instruments, StoreGauges(core.database, backend.node_uses, clock=clock)
    )
    app.state.backend = backend
    app.state.controller = backend.controller
    app.state.readiness = health.Readiness(core.database.ping, backend.reconciler_runs)
    errors.install(app)
    routers = (
        metrics,  # before the routes whose `/{id}` would take `telemetry` for an id
        health,
        tokens,
        users,
        authorization,
        clients,
        identity_providers,
        single_sign_on,
        audit,
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


def _only_cluster(database: Database) -> Cluster | None:
    """The cluster this server serves, when it serves one (the audit log names it)."""
    with database.read() as unit:
        clusters = unit.organization.clusters()
    return Cluster(clusters[0].id, clusters[0].name) if len(clusters) == 1 else None
