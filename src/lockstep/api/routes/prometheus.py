"""`GET /metrics`: lockstep in the Prometheus text format — its own health (HTTP requests,
reconcile passes, scheduling cycles, the store's commits, pods started and failed), summed over
the API's and the reconciler's processes, and the workload, project, queue and node gauges read
from the store (services/metrics/gauges.py).

What it tells spans every project, so it needs a caller with a system-wide role, by a bearer
token as every endpoint takes, or by HTTP Basic with an application's client id and secret (what
a Prometheus scrape configuration can hold: `basic_auth`), checked as the token endpoint checks
them (through the token guard, api/token_guard.py).
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Iterable

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.responses import Response

from lockstep.api.deps import Services, ServicesDep, client_address
from lockstep.auth.tokens import Principal
from lockstep.domain.errors import Unauthenticated
from lockstep.observability.instruments import Instruments, multiprocess_directory
from lockstep.services.token_requests import MAX_CREDENTIAL_LENGTH

router = APIRouter(tags=["metrics"])


@router.get("/metrics")
async def metrics(request: Request, services: ServicesDep) -> Response:
    caller = await _caller(request, services)
    await services.calls.blocking(services.identity.check_system_wide, caller)
    exposition: Exposition = request.app.state.exposition
    body = await services.calls.blocking(exposition.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


async def _caller(request: Request, services: Services) -> Principal:
    """The caller by its bearer token, or by its client id and secret (HTTP Basic), checked
    through the token guard as the token endpoint checks them (api/token_guard.py)."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return await services.calls.blocking(services.tokens.verify, credentials.strip())
    if scheme.lower() == "basic" and credentials.strip():
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthenticated("the Basic credentials are not valid base64") from None
        client_id, separator, secret = decoded.partition(":")
        if not separator:
            raise Unauthenticated("Basic credentials must be '<client id>:<client secret>'")
        if len(client_id) > MAX_CREDENTIAL_LENGTH or len(secret) > MAX_CREDENTIAL_LENGTH:
            raise Unauthenticated(
                f"Basic credentials: the client id and secret are at most "
                f"{MAX_CREDENTIAL_LENGTH} characters each"
            )
        return await services.token_guard.check(
            client_address(request),
            client_id,
            functools.partial(services.identity.authenticate, client_id, secret),
        )
    raise Unauthenticated(
        "credentials are required: 'Authorization: Bearer <token>', or Basic with an "
        "application's client id and secret"
    )


class Exposition:
    """What /metrics renders: this process's instruments, or every process's when they share
    a directory, and the gauges read from the store."""

    def __init__(self, instruments: Instruments, gauges: Collector) -> None:
        self._instruments = instruments
        self._gauges = gauges

    def render(self) -> bytes:
        registry = CollectorRegistry()
        if multiprocess_directory() is not None:
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        else:
            assert self._instruments.registry is not None
            registry.register(_Forwarded(self._instruments.registry))
        registry.register(self._gauges)
        return generate_latest(registry)


class _Forwarded(Collector):
    """A registry's metrics, collected into another registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()
