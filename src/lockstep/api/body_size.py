"""An ASGI middleware that refuses a request body larger than `LOCKSTEP_MAX_REQUEST_BYTES` with
413 and the Run:ai error body, for every endpoint.

A declared `Content-Length` over the limit is refused before a byte of the body is read. A body
without one (chunked) is counted as it streams: once it passes the limit the request is refused,
so no more than the limit (and the chunk that passed it) is ever held.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lockstep.api.errors import error_response


class _TooLarge(Exception):
    """Raised out of `receive` when the body streamed past the limit."""


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self._app = app
        self._max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self._max_bytes:
            await self._refuse(scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self._max_bytes:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, counted, watched)
        except _TooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, f"body: must be at most {self._max_bytes} bytes (this server's limit)"
        )
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
