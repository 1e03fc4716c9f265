"""Whether a user's access token still stands: the user exists and has not been signed out
since the token was issued (its generation is still the user's).

Every request with a user's token asks; each API process keeps the answer for a user for at
most `FRESH_SECONDS` before it reads the store again, so that a logout, a new password or the
user's deletion on any process refuses the user's tokens on every process within a second,
while a busy user costs one small read per half second, not one per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lockstep.auth.tokens import Principal
from lockstep.domain.errors import Unauthenticated

FRESH_SECONDS = 0.5
"""How long a process trusts what it last read of a user's generation."""
MAX_REMEMBERED = 50_000
"""The most users whose generation a process remembers; past it, it forgets them all."""


class UserStanding:
    def __init__(
        self,
        read_generation: Callable[[str], int | None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`read_generation(user_id)`: the user's generation in the store, None when gone."""
        self._read = read_generation
        self._clock = clock
        self._known: dict[str, tuple[int | None, float]] = {}

    def is_fresh(self, principal: Principal) -> bool:
        """Whether the process knows the user's generation well enough to answer now."""
        known = self._known.get(principal.user_id or "")
        return known is not None and self._clock() - known[1] < FRESH_SECONDS

    def refresh(self, principal: Principal) -> None:
        """Read the user's generation from the store (a store call: off the event loop on
        PostgreSQL)."""
        user_id = principal.user_id or ""
        generation = self._read(user_id)
        if len(self._known) >= MAX_REMEMBERED:
            self._known.clear()
        self._known[user_id] = (generation, self._clock())

    def forget(self, user_id: str) -> None:
        """Read the user's generation again at their next request (this process has just
        changed it)."""
        self._known.pop(user_id, None)

    def check(self, principal: Principal) -> None:
        """`Unauthenticated` unless the token's user exists and has not been signed out, as
        last read (call `refresh` first unless `is_fresh`)."""
        known = self._known.get(principal.user_id or "")
        if known is None or known[0] is None:
            raise Unauthenticated("the access token's user no longer exists")
        if known[0] != principal.generation:
            raise Unauthenticated("the access token's user has been signed out: sign in again")
