"""When a call is sent again: idempotent calls after a connection error or a 503, with a
doubling pause (the server's Retry-After when it gives one), a few times."""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass(frozen=True, slots=True)
class Retry:
    attempts: int = 6
    """Tries in all, the first included."""
    first_pause: float = 0.2
    longest_pause: float = 5.0

    def pause(self, attempt: int, response: httpx.Response | None = None) -> float:
        """Seconds to wait after try number `attempt` (0 for the first) failed."""
        if response is not None:
            after = response.headers.get("Retry-After")
            if after is not None and after.isdigit():
                return min(float(after), self.longest_pause)
        return float(min(self.first_pause * 2**attempt, self.longest_pause))


def worth_retrying(
    idempotent: bool, response: httpx.Response | None, error: Exception | None
) -> bool:
    """A connection that never opened may always be tried again (nothing was sent); other
    transport errors and 503 answers only for idempotent calls."""
    if isinstance(error, httpx.ConnectError):
        return True
    if error is not None:
        return idempotent and isinstance(error, httpx.TransportError)
    return idempotent and response is not None and response.status_code == 503
