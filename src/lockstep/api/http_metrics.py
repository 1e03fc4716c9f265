"""An ASGI middleware that counts every HTTP request by method, route template and status, and
times it from its arrival to the end of its response (`lockstep_http_*` on /metrics).

Routes are labelled by their template (`/api/v1/workloads/{workloadId}`), never by the path
asked for, so that no client can grow the number of series; a path no route matches counts as
`unmatched`.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lockstep.observability.instruments import Instruments

UNMATCHED = "unmatched"


class HttpMetrics:
    def __init__(self, app: ASGIApp, *, instruments: Instruments) -> None:
        self._app = app
        self._instruments = instruments

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client sees when the app raises before responding

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self._app(scope, receive, watched)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or UNMATCHED
            method = str(scope.get("method", ""))
            self._instruments.http_requests.labels(method, template, str(status)).inc()
            self._instruments.http_latency.labels(method, template).observe(
                time.perf_counter() - started
            )
