"""`create_app(settings)`: the whole server — store, services, local runtime, reconciler and
routes — with nothing built at import time."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from lockstep import __version__
from lockstep.api import errors
from lockstep.api.deps import Services
from lockstep.api.routes import distributed, organization, tokens, workloads
from lockstep.assembly import bootstrap, open_core
from lockstep.config import Settings
from lockstep.domain.clock import Clock, utc_now
from lockstep.reconciler.loop import Reconciler, ReconcilerSettings
from lockstep.reconciler.queue import WorkQueue
from lockstep.runtimes.base import Runtime
from lockstep.runtimes.local.runtime import LocalRuntime
from lockstep.services.workloads import WorkloadService

log = logging.getLogger(__name__)


def create_app(
    settings: Settings, *, clock: Clock = utc_now, runtime: Runtime | None = None
) -> FastAPI:
    core = open_core(settings, clock=clock)
    created = bootstrap(core)
    queue = WorkQueue()
    runtime = runtime or LocalRuntime(settings.runtime_dir, on_change=queue.add)
    reconciler = Reconciler(
        core.database,
        runtime,
        clock=clock,
        queue=queue,
        settings=ReconcilerSettings(resync_seconds=settings.resync_seconds),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        reconciler.start()
        try:
            yield
        finally:
            reconciler.stop()
            runtime.close()
            core.close()

    app = FastAPI(
        title="lockstep",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.services = Services(
        workloads=WorkloadService(core.database, clock=clock, notify=reconciler.notify),
        organization=core.organization,
        identity=core.identity,
        tokens=core.tokens,
        version=__version__,
    )
    app.state.bootstrap = created
    app.state.reconciler = reconciler
    app.state.runtime = runtime
    errors.install(app)
    for router in (tokens.router, distributed.router, workloads.router, organization.router):
        app.include_router(router)
    return app
