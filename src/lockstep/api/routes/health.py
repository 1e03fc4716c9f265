"""`GET /healthz` and `GET /readyz`, for Kubernetes' probes and load balancers; neither needs a
token, and neither says more than a state.

- `/healthz` (liveness): the process answers. 200 `{"status": "ok"}`.
- `/readyz` (readiness): the store answers a query and, where this process reconciles (the local
  runtime, or the replica holding the store's leadership on Kubernetes), the reconciler runs.
  200 `{"status": "ready", "store": "ok", "reconciler": "running" | "on another replica"}`, else
  503 with Run:ai's error body naming what is not ready, and the same fields.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import APIRouter, Request
from starlette.responses import Response

from lockstep.api.deps import ServicesDep
from lockstep.api.responses import json_response
from lockstep.domain.errors import LockstepError

log = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


@dataclass(frozen=True, slots=True)
class Readiness:
    """What `/readyz` asks: the store to answer, and whether the reconciler runs (None where
    another replica reconciles)."""

    ping_store: Callable[[], None]
    reconciler_runs: Callable[[], bool | None]


@router.get("/healthz")
async def healthz() -> Response:
    return json_response({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request, services: ServicesDep) -> Response:
    readiness: Readiness = request.app.state.readiness
    problems: list[str] = []
    store = "ok"
    try:
        await services.calls.store(readiness.ping_store)
    except LockstepError as error:
        store = error.message
    except Exception as error:  # whatever stops the store makes it not ready
        log.warning("readiness: the store did not answer: %s", error)
        store = "the store did not answer"
    if store != "ok":
        problems.append(f"store: {store}")
    runs = readiness.reconciler_runs()
    reconciler = "on another replica" if runs is None else "running" if runs else "not running"
    if runs is False:
        problems.append("reconciler: not running")
    body = {"store": store, "reconciler": reconciler}
    if problems:
        return json_response(
            {"code": 503, "message": f"not ready: {'; '.join(problems)}", **body}, status=503
        )
    return json_response({"status": "ready", **body})
