"""The web console, `GET /` and `/console/…`: its static files (src/lockstep/console/static),
read from the installed package, served with a strict Content-Security-Policy (only this
origin's scripts, styles and connections; no inline code; never framed). The pages need no
token to load: they ask for one and send it with each API call they make."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Path
from starlette.responses import RedirectResponse, Response

from lockstep.api.errors import error_response

router = APIRouter(include_in_schema=False)

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@functools.cache
def _files() -> dict[str, bytes]:
    """Every file of the console by name, read once."""
    static = resources.files("lockstep.console").joinpath("static")
    return {
        entry.name: entry.read_bytes()
        for entry in static.iterdir()
        if entry.is_file() and any(entry.name.endswith(suffix) for suffix in _TYPES)
    }


def _served(name: str) -> Response:
    body = _files().get(name)
    if body is None:
        return error_response(404, f"the console has no file named {name!r}")
    suffix = name[name.rfind(".") :]
    return Response(body, media_type=_TYPES[suffix], headers=HEADERS)


@router.get("/")
async def root() -> Response:
    return RedirectResponse("/console/", status_code=307)


@router.get("/console")
async def console_without_slash() -> Response:
    return RedirectResponse("/console/", status_code=307)


@router.get("/console/")
async def console() -> Response:
    return _served("index.html")


@router.get("/console/{name}")
async def console_file(name: Annotated[str, Path()]) -> Response:
    return _served(name)
