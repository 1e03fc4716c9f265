"""The HTTP/1.1 protocol `lockstep serve` speaks: uvicorn's (httptools), with two changes. A
request that never reaches the app because uvicorn cannot parse it — not HTTP/1.1, or a URL
over `MAX_URL_BYTES` — is answered in Run:ai's error body `{"code", "message"}`, as every other
error is, instead of uvicorn's plain text; and a URL is refused as soon as it passes the limit,
rather than gathered whole first. Used by cli/serve.py (`http=`)."""

from __future__ import annotations

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_URL_BYTES = 65_535
"""The longest request target (path and query) served: the most httptools can parse (its URL
offsets are 16-bit), far more than any request of the Run:ai API needs."""
URL_TOO_LONG = f"url: must be at most {MAX_URL_BYTES} bytes (this server's limit)"
NOT_HTTP = "request: is not a valid HTTP/1.1 request"


class UrlTooLong(Exception):
    """Raised from the parser's URL callback, which makes the parser stop (uvicorn then
    answers 400 through `send_400_response`)."""


class RunaiHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering what it cannot parse in Run:ai's error body."""

    _url_too_long = False

    def on_message_begin(self) -> None:
        self._url_too_long = False
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > MAX_URL_BYTES:
            self._url_too_long = True
            raise UrlTooLong
        super().on_url(url)

    def send_400_response(self, msg: str) -> None:
        """What uvicorn sends for a request it cannot parse (`msg`, in plain text), in Run:ai's
        error body, naming what is wrong; the connection is closed after it, as uvicorn does."""
        message = URL_TOO_LONG if self._url_too_long else NOT_HTTP
        body = orjson.dumps({"code": 400, "message": message})
        content = [b"HTTP/1.1 400 Bad Request\r\n"]
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
