"""How routes call the services.

With SQLite the store is in process: a query takes microseconds, so store calls run inline on
the event loop — a hop to a worker thread would cost more than the call, and every extra thread
contends for the interpreter lock. A durable write's fsync is deferred to a group commit
(store/group_commit.py): the call awaits it without holding the loop, so requests arriving
meanwhile proceed and share the next fsync. With PostgreSQL each call waits on the network, so
store calls run on worker threads. CPU-heavy work (verifying a secret, checking a large
request) always runs on a thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from anyio import to_thread

from lockstep.store.database import Database

P = ParamSpec("P")
T = TypeVar("T")


class Calls:
    def __init__(self, database: Database) -> None:
        self._database = database
        self._inline = database.is_sqlite

    async def store(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """A service call that reads or writes the store; returns once its writes are durable."""
        if not self._inline:
            return await to_thread.run_sync(functools.partial(function, *args, **kwargs))
        before = self._database.deferred_commits
        result = function(*args, **kwargs)
        after = self._database.deferred_commits
        if after != before:
            await self._durable(after)
        return result

    async def store_off_loop(
        self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """A store call with heavy work of its own (checking a large request): on a worker
        thread whatever the store; returns once its writes are durable."""
        before = self._database.deferred_commits
        result = await to_thread.run_sync(functools.partial(function, *args, **kwargs))
        after = self._database.deferred_commits
        if after != before:
            await self._durable(after)
        return result

    async def _durable(self, commit: int) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if done.done():
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        def from_syncer(error: BaseException | None) -> None:
            loop.call_soon_threadsafe(settle, error)

        self._database.when_durable(commit, from_syncer)
        await done

    async def blocking(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Work that would hold the loop too long: always on a worker thread."""
        return await to_thread.run_sync(functools.partial(function, *args, **kwargs))
