"""`lockstep login --sso ALIAS`: a person signs in through an identity provider in their
browser. The CLI listens on a loopback port of its own (RFC 8252), opens the browser at the
server's `/sso/{alias}/sign-in` with that address as the return and a state of its own, waits
for the browser to come back with the server's one-time code, checks the state, and trades
the code for the user's tokens (`exchange_token`). Without a browser (a remote shell), the
address to open is printed; the return must then reach this machine's loopback."""

from __future__ import annotations

import base64
import json
import secrets
import threading
import webbrowser
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import typer

from lockstep.cli.connection import NOT_AUTHORIZED, fail

WAIT_SECONDS = 300
"""How long the CLI waits for the browser to come back."""
DONE_PAGE = (
    b"<!doctype html><html><head><title>lockstep</title></head><body>"
    b"<p>The sign-in is finished: you may close this tab and go back to the terminal.</p>"
    b"</body></html>"
)


@dataclass(frozen=True, slots=True)
class SignedIn:
    email: str
    refresh_token: str


def browser_sign_in(url: str, alias: str, *, wait_seconds: float = WAIT_SECONDS) -> SignedIn:
    """The user's email and refresh token, once they have signed in through `alias`."""
    state = secrets.token_urlsafe(24)
    answers: list[dict[str, str]] = []
    arrived = threading.Event()

    class Return(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/callback" or arrived.is_set():
                self.send_error(404)
                return
            answers.append({k: v[0] for k, v in parse_qs(parts.query).items()})
            arrived.set()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(DONE_PAGE)))
            self.end_headers()
            self.wfile.write(DONE_PAGE)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the terminal shows the CLI's own words only

    listener = HTTPServer(("127.0.0.1", 0), Return)
    redirect_uri = f"http://127.0.0.1:{listener.server_port}/callback"
    start = f"{url}/sso/{alias}/sign-in?" + urlencode(
        {"redirect_uri": redirect_uri, "state": state}
    )
    serving = threading.Thread(target=listener.serve_forever, daemon=True)
    serving.start()
    try:
        typer.echo(f"opening your browser at {start}", err=True)
        if not webbrowser.open(start):
            typer.echo("no browser could be opened: open the address above", err=True)
        if not arrived.wait(wait_seconds):
            raise fail(f"no sign-in came back within {wait_seconds:.0f} s", NOT_AUTHORIZED)
    finally:
        listener.shutdown()
        listener.server_close()
    answer = answers[0]
    if not secrets.compare_digest(answer.get("state", ""), state):
        raise fail("the sign-in that came back is not the one this login began", NOT_AUTHORIZED)
    if "error" in answer:
        reason = answer.get("error_description") or answer["error"]
        raise fail(f"{url} refused the sign-in: {reason}", NOT_AUTHORIZED)
    return _exchanged(url, answer.get("code", ""), redirect_uri)


def _exchanged(url: str, code: str, redirect_uri: str) -> SignedIn:
    body = {"grantType": "exchange_token", "code": code, "redirectUri": redirect_uri}
    try:
        response = httpx.post(f"{url}/api/v1/token", json=body, timeout=30)
    except httpx.HTTPError as error:
        raise fail(f"cannot reach {url}: {error}", 1) from error
    if response.status_code != 200:
        try:
            message = str(response.json()["message"])
        except (ValueError, KeyError, TypeError):
            message = response.text[:200]
        raise fail(f"{url} refused: {message}", NOT_AUTHORIZED)
    tokens = response.json()
    return SignedIn(_subject(str(tokens["accessToken"])), str(tokens["refreshToken"]))


def _subject(token: str) -> str:
    """The user a token names (read, not verified: the server that issued it verifies it)."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return str(claims["sub"])
