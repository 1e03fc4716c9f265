"""Slots for answers that stay open — a pod's log, the change stream — counted per caller and
in all, so that one caller cannot take what all callers share: past either count a new one is
refused with 429, naming the limit, until one that is open ends.

The routes take a slot before they answer and release it when the answer ends, however it ends
(api/held_streams.py). Counted per API process, on its event loop (no lock needed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lockstep.auth.tokens import Principal
from lockstep.domain.errors import TooManyRequests

RETRY_AFTER_SECONDS = 1


class StreamsExhausted(TooManyRequests):
    """A caller holds as many open streams as one may, or all callers hold as many as the
    server allows."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retry_after_seconds=RETRY_AFTER_SECONDS)


@dataclass(frozen=True, slots=True)
class Limit:
    """The most streams open at once, and the setting that says it (named in a refusal)."""

    most: int
    setting: str


@dataclass(eq=False)
class Slot:
    """One open stream of `caller`; `release` it when the stream ends (again is a no-op)."""

    caller: Principal
    _slots: StreamSlots
    _released: bool = field(default=False)

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._slots._give_back(self.caller)


class StreamSlots:
    def __init__(self, what: str, *, per_caller: Limit, overall: Limit | None = None) -> None:
        """`what`: the streams, as a refusal names them (`log streams`); `overall`: None when
        the caller of `take` bounds the total itself."""
        self._what = what
        self.per_caller = per_caller
        self.overall = overall
        self._held: Counter[Principal] = Counter()
        self._total = 0

    def take(self, caller: Principal) -> Slot:
        """A slot for a new stream of `caller`; StreamsExhausted when it holds `per_caller`
        already, or all callers hold `overall`."""
        if self._held[caller] >= self.per_caller.most:
            raise StreamsExhausted(
                f"{self.per_caller.most} {self._what} of this caller are open, the most one "
                f"caller may hold at once ({self.per_caller.setting}); close one or retry later"
            )
        if self.overall is not None and self._total >= self.overall.most:
            raise StreamsExhausted(
                f"{self.overall.most} {self._what} are open, the most this server allows "
                f"at once ({self.overall.setting}); retry later"
            )
        self._held[caller] += 1
        self._total += 1
        return Slot(caller, self)

    def held(self, caller: Principal | None = None) -> int:
        """How many streams `caller` holds (None: all callers)."""
        return self._total if caller is None else self._held[caller]

    def _give_back(self, caller: Principal) -> None:
        self._held[caller] -= 1
        if self._held[caller] <= 0:
            del self._held[caller]
        self._total -= 1
