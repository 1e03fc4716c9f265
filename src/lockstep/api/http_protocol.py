"""The HTTP/1.1 protocol `lockstep serve` speaks: uvicorn's (httptools), with these changes.

- A request that never reaches the app because uvicorn cannot parse it — not HTTP/1.1, or a
  URL over `MAX_URL_BYTES` — is answered in Run:ai's error body `{"code", "message"}`, as every
  other error is, instead of uvicorn's plain text; and a URL is refused as soon as it passes
  the limit, rather than gathered whole first.
- A client has `header_seconds` to send a request's line and headers, from the moment it
  connects or its previous answer was sent: past it, 408 and the connection closed, so that
  connections that never finish a request (slowloris) cannot pile up.
- At most `max_connections` connections are open at once in one API process: one more is
  answered 503 at once and closed, so that the process keeps descriptors for those it serves.

Both limits are settings (`configure`, called in each API process before it serves). Used by
cli/serve.py (`http=`)."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from lockstep.config import Settings

MAX_URL_BYTES = 65_535
"""The longest request target (path and query) served: the most httptools can parse (its URL
offsets are 16-bit), far more than any request of the Run:ai API needs."""
URL_TOO_LONG = f"url: must be at most {MAX_URL_BYTES} bytes (this server's limit)"
NOT_HTTP = "request: is not a valid HTTP/1.1 request"
_REASONS = {400: b"Bad Request", 408: b"Request Timeout", 503: b"Service Unavailable"}


class UrlTooLong(Exception):
    """Raised from the parser's URL callback, which makes the parser stop (uvicorn then
    answers 400 through `send_400_response`)."""


class RunaiHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering what it cannot parse in Run:ai's error body,
    with a deadline for a request's headers and a cap on open connections."""

    max_connections: ClassVar[int] = Settings.model_fields["max_connections"].default
    header_seconds: ClassVar[float] = Settings.model_fields["header_timeout_seconds"].default
    _url_too_long = False
    _header_timer: asyncio.TimerHandle | None = None

    @classmethod
    def configure(cls, settings: Settings) -> None:
        """This process's limits, from its settings."""
        cls.max_connections = settings.max_connections
        cls.header_seconds = settings.header_timeout_seconds

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self._answer(
                503,
                f"connections: at most {self.max_connections} are served at once by this API "
                "process (LOCKSTEP_MAX_CONNECTIONS); try again later",
            )
            return
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._url_too_long = False
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > MAX_URL_BYTES:
            self._url_too_long = True
            raise UrlTooLong
        super().on_url(url)

    def on_headers_complete(self) -> None:
        self._stop_waiting()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()  # the next request's, on a connection kept alive

    def send_400_response(self, msg: str) -> None:
        """What uvicorn sends for a request it cannot parse (`msg`, in plain text), in Run:ai's
        error body, naming what is wrong; the connection is closed after it, as uvicorn does."""
        self._answer(400, URL_TOO_LONG if self._url_too_long else NOT_HTTP)

    def _await_headers(self) -> None:
        self._stop_waiting()
        self._header_timer = self.loop.call_later(self.header_seconds, self._headers_too_slow)

    def _stop_waiting(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or (self.cycle and not self.cycle.response_complete):
            return  # a request being answered: its headers came in time
        self._answer(
            408,
            f"request: its line and headers must arrive within {self.header_seconds:g} s "
            "(LOCKSTEP_HEADER_TIMEOUT_SECONDS)",
        )

    def _answer(self, status: int, message: str) -> None:
        """`message` in Run:ai's error body with `status`, then the connection closed."""
        self._stop_waiting()
        body = orjson.dumps({"code": status, "message": message})
        content = [b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status])]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()
