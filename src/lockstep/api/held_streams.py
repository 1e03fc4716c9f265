"""A streamed answer that holds something while it is open — a slot of services/stream_slots.py,
a change stream's subscription — and lets go of it once the answer ends, however it ends: sent
to its end, its client gone (Starlette stops sending when the connection closes), an error, or
the server stopping. Its body is closed then too, so that a reader's files close at once.

Releasing in the body's own `finally` would not do: a body that never started (its client left
before the first piece) never runs it. Used by the routes of pod logs and of the change stream.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class HeldStream(StreamingResponse):
    def __init__(
        self,
        body: AsyncGenerator[str | bytes, None],
        *,
        release: Callable[[], None],
        media_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(body, media_type=media_type, headers=headers)
        self._body = body
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()
            await self._body.aclose()
