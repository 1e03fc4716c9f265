"""What stands before every check of an application's secret, the one thing anybody may ask
without a token (`POST /api/v1/token`, and `/metrics` with HTTP Basic): each check hashes the
secret with scrypt (16 MiB and tens of milliseconds of a core), so a flood of them could take the
server's memory and cores from everyone else.

- A rate per client address: each check asked from one address uses one of its allowance of
  `per_minute`, which refills evenly over a minute (a token bucket: a burst of `per_minute`,
  then one every 60/`per_minute` seconds).
- A rate per application id: each refused check (a wrong secret, an id no application has) of
  one id uses one of that id's allowance, so that nobody guesses an application's secret from
  many addresses; a check that succeeds gives its unit back.
- At most `at_once` checks hash at the same time; the others wait their turn on the event loop,
  holding no thread.

Past either rate, the check is refused before any hashing with 429 and `Retry-After`. Each API
process keeps its own allowances (LOCKSTEP_API_PROCESSES): with N of them, a client may be
allowed up to N times as many. The routes of the token endpoint and of /metrics call `check`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from anyio import to_thread

from lockstep.domain.errors import TooManyRequests, Unauthenticated

T = TypeVar("T")

MAX_TRACKED = 50_000
"""The most addresses, and application ids, whose allowance is remembered; past it, the one
used longest ago is forgotten (its allowance is full again). Bounds the memory a flood of new
ids can take."""


@dataclass(slots=True)
class _Bucket:
    units: float
    at: float


class Allowances:
    """Token buckets by key: each holds up to `capacity` units and regains `capacity` a
    minute."""

    def __init__(
        self, capacity: int, *, clock: Callable[[], float], max_tracked: int = MAX_TRACKED
    ) -> None:
        self._capacity = float(capacity)
        self._per_second = capacity / 60.0
        self._clock = clock
        self._max_tracked = max_tracked
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def wait_for(self, key: str) -> float:
        """Seconds until `key` has a unit to use (0: it has one now)."""
        units = self._refilled(key).units
        return 0.0 if units >= 1 else (1 - units) / self._per_second

    def take(self, key: str) -> None:
        self._refilled(key).units -= 1

    def give_back(self, key: str) -> None:
        bucket = self._refilled(key)
        bucket.units = min(self._capacity, bucket.units + 1)

    def _refilled(self, key: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self._capacity, now)
            if len(self._buckets) > self._max_tracked:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.units = min(self._capacity, bucket.units + (now - bucket.at) * self._per_second)
            bucket.at = now
        return bucket


class TokenGuard:
    def __init__(
        self,
        *,
        per_minute: int,
        at_once: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`per_minute`: the checks an address may ask, and the refused checks an application
        id may have, a minute (LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE); `at_once`: the most checks
        hashing at once (LOCKSTEP_TOKEN_CHECKS_AT_ONCE)."""
        self.per_minute = per_minute
        self._addresses = Allowances(per_minute, clock=clock)
        self._applications = Allowances(per_minute, clock=clock)
        self._at_once = at_once
        self._turns: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def check(
        self, address: str, application: str, verify: Callable[[], T], *, named: str = ""
    ) -> T:
        """`verify()` (which hashes a secret, and raises `Unauthenticated` when it is refused),
        run on a worker thread in its turn, once `address` and `application` (the id whose
        secret is checked: an application's, or a user's name, which `named` then describes)
        are within their rates; `TooManyRequests` naming which one is not."""
        self._admit(address, application, named or f"the application id {application!r}")
        refused = False
        try:
            async with self._semaphore():
                return await to_thread.run_sync(verify)
        except Unauthenticated:
            refused = True  # a guess: it keeps the unit of the application's allowance it used
            raise
        finally:
            if not refused:
                self._applications.give_back(application)

    def _admit(self, address: str, application: str, named: str) -> None:
        for allowances, whose, what in (
            (self._addresses, address, f"checks of credentials from the address {address}"),
            (self._applications, application, f"refused credentials for {named}"),
        ):
            wait = allowances.wait_for(whose)
            if wait > 0:
                seconds = math.ceil(wait)
                raise TooManyRequests(
                    f"too many {what}: at most {self.per_minute} a minute (this server's "
                    f"limit); try again in {seconds} s",
                    retry_after_seconds=seconds,
                )
        self._addresses.take(address)
        self._applications.take(application)

    def _semaphore(self) -> asyncio.Semaphore:
        """The turns to hash, made on the running event loop (an app served by one loop at a
        time; tests start a new one per client)."""
        loop = asyncio.get_running_loop()
        if self._turns is None or self._loop is not loop:
            self._turns = asyncio.Semaphore(self._at_once)
            self._loop = loop
        return self._turns
