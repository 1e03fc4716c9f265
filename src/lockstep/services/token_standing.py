"""Whether an access token still stands: its user exists and has not been signed out since
the token was issued, and the client it was obtained with (a service account, or a user's
access key) exists, is enabled and has not had its secret regenerated since — each by the
generation the token carries.

Every request with a token asks; each API process keeps what it read of a user or a client for
at most `FRESH_SECONDS` before it reads the store again, so that a logout, a new password or
secret, a disabled client or a deletion on any process refuses the tokens on every process
within a second, while a busy caller costs one small read per half second, not one per
request.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lockstep.auth.tokens import Principal
from lockstep.domain.errors import Unauthenticated

FRESH_SECONDS = 0.5
"""How long a process trusts what it last read of a user's or a client's generation."""
MAX_REMEMBERED = 50_000
"""The most users and clients whose generation a process remembers; past it, it forgets all."""

USER = "user"
CLIENT = "client"


def _standing_of(principal: Principal) -> list[tuple[str, str, int]]:
    """What must still stand for the token: (kind, id, the generation it carries)."""
    found = []
    if principal.user_id is not None:
        found.append((USER, principal.user_id, principal.generation))
    if principal.client_id is not None:
        found.append((CLIENT, principal.client_id, principal.client_generation))
    return found


class TokenStanding:
    def __init__(
        self,
        read_generation: Callable[[str, str], int | None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`read_generation(kind, id)`: the user's or client's generation in the store,
        None when it is gone (or, a client, disabled)."""
        self._read = read_generation
        self._clock = clock
        self._known: dict[tuple[str, str], tuple[int | None, float]] = {}

    def is_fresh(self, principal: Principal) -> bool:
        """Whether the process knows enough, recently enough, to answer now."""
        now = self._clock()
        for kind, key, _ in _standing_of(principal):
            known = self._known.get((kind, key))
            if known is None or now - known[1] >= FRESH_SECONDS:
                return False
        return True

    def refresh(self, principal: Principal) -> None:
        """Read what the token depends on from the store (a store call: off the event loop on
        PostgreSQL)."""
        for kind, key, _ in _standing_of(principal):
            generation = self._read(kind, key)
            if len(self._known) >= MAX_REMEMBERED:
                self._known.clear()
            self._known[(kind, key)] = (generation, self._clock())

    def forget(self, kind: str, key: str) -> None:
        """Read this user or client again at its next request (this process changed it)."""
        self._known.pop((kind, key), None)

    def check(self, principal: Principal) -> None:
        """`Unauthenticated` unless everything the token depends on still stands, as last
        read (call `refresh` first unless `is_fresh`)."""
        for kind, key, carried in _standing_of(principal):
            known = self._known.get((kind, key))
            current = None if known is None else known[0]
            if kind == USER:
                if current is None:
                    raise Unauthenticated("the access token's user no longer exists")
                if current != carried:
                    raise Unauthenticated(
                        "the access token's user has been signed out: sign in again"
                    )
            elif current is None:
                raise Unauthenticated("the access token's client no longer exists or is disabled")
            elif current != carried:
                raise Unauthenticated(
                    "the access token's client secret has been regenerated: obtain a new token"
                )
