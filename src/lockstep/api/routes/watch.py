"""`GET /api/v1/workloads?watch=true`: the workload list as a stream of server-sent events —
first every workload the list shows (`event: workload`, the list item), then `event: listed`,
then each change of a listed workload as it happens (`event: workload` with its new item, or
`event: deleted` with `{"id"}` when the list stops showing it), and a comment every
`HEARTBEAT_SECONDS`. An extension of the Run:ai API; services/workload_watch.py feeds it.

A caller past its share of streams is refused with 429 (services/stream_slots.py raises it), and
anybody once the server holds all it allows with 503; a stream gives its place back when it
ends, its client gone or not (api/held_streams.py)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncGenerator

import orjson
from starlette.requests import Request
from starlette.responses import Response

from lockstep.api.deps import Services
from lockstep.api.errors import error_response
from lockstep.api.held_streams import HeldStream
from lockstep.auth.tokens import Principal
from lockstep.domain.listing import ListQuery
from lockstep.services.workload_watch import (
    LISTED,
    OVERFLOWED,
    QUEUE_LIMIT,
    StreamLimitReached,
    Subscription,
    WorkloadWatch,
)

HEARTBEAT_SECONDS = 15.0
EVENT_STREAM = "text/event-stream"


async def watch_workloads(
    request: Request, caller: Principal, services: Services, query: ListQuery
) -> Response:
    watch: WorkloadWatch = request.app.state.workload_watch
    try:
        subscription = await watch.open(caller, query)
    except StreamLimitReached as error:
        return error_response(503, str(error))
    return HeldStream(
        _events(subscription, services),
        release=subscription.close,
        media_type=EVENT_STREAM,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _event(name: str, data: bytes) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


async def _events(subscription: Subscription, services: Services) -> AsyncGenerator[bytes, None]:
    sent: dict[str, bytes] = {}
    """What the client was last sent of each workload it is shown (a digest of the item)."""
    try:
        yield b": workloads of lockstep\n\n"
        while True:
            try:
                change = await asyncio.wait_for(subscription.queue.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield b": heartbeat\n\n"
                continue
            if change is LISTED:
                yield _event("listed", orjson.dumps({"count": len(sent)}))
                continue
            if change is OVERFLOWED:
                message = f"this stream fell {QUEUE_LIMIT} changes behind; open a new one"
                yield _event("error", orjson.dumps({"code": 503, "message": message}))
                return
            workload_id, item = change
            if item is None:
                if sent.pop(workload_id, None) is not None:
                    yield _event("deleted", orjson.dumps({"id": workload_id}))
                continue
            digest = hashlib.blake2b(item, digest_size=16).digest()
            if sent.get(workload_id) == digest:
                continue
            sent[workload_id] = digest
            yield _event("workload", item)
    finally:
        subscription.close()
