"""Bearer tokens for the SDK: a token given as is, or one obtained from `POST /api/v1/token`
with an application's client id and secret or a user's refresh token (from `lockstep login
--user`), obtained again shortly before it expires (or at once, when the server refuses it).
Holds the state; the clients send the token requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

TOKEN_ENDPOINT = "/api/v1/token"  # noqa: S105 (a path, not a secret)
REFRESH_MARGIN = 0.1
"""A token is renewed once less than this share of its lifetime is left (at most 60 s)."""


class Tokens:
    def __init__(
        self,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        refresh_token: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if token is None and refresh_token is None and (client_id is None or client_secret is None):
            raise ValueError("give a token, a refresh token, or a client id and a client secret")
        self._credentials = None if client_id is None else (client_id, client_secret or "")
        self._refresh_token = refresh_token
        self._token = token
        self._renew_at = float("inf")
        self._clock = clock
        self.lock = threading.Lock()
        """Held while a token is being obtained, so that threads sharing a client get one."""

    @property
    def token(self) -> str | None:
        """The token now in use (None before the first call with credentials)."""
        return self._token

    @property
    def renewable(self) -> bool:
        """Whether a new token can be obtained (credentials were given)."""
        return self._credentials is not None or self._refresh_token is not None

    def due(self) -> bool:
        """A token must be obtained before the next request."""
        return self.renewable and (self._token is None or self._clock() >= self._renew_at)

    def request_body(self) -> dict[str, str]:
        if self._credentials is None:
            assert self._refresh_token is not None
            return {"grantType": "refresh_token", "refreshToken": self._refresh_token}
        client_id, client_secret = self._credentials
        return {
            "grantType": "client_credentials",
            "clientId": client_id,
            "clientSecret": client_secret,
        }

    def now(self) -> float:
        return self._clock()

    def accept(self, answer: dict[str, Any], *, requested_at: float) -> None:
        """Take the token of a `POST /api/v1/token` answer."""
        self._token = str(answer["accessToken"])
        if answer.get("refreshToken") and self._refresh_token is not None:
            self._refresh_token = str(answer["refreshToken"])
        lifetime = float(answer.get("expiresIn") or 0)
        margin = min(60.0, lifetime * REFRESH_MARGIN)
        self._renew_at = requested_at + lifetime - margin if lifetime else float("inf")

    def forget(self) -> None:
        """The server refused the token: obtain a new one before the next request."""
        if self.renewable:
            self._token = None

    def header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}
