"""The two loops that run the SDK's flows (flows.py): `Loop` with blocking I/O on an
`httpx.Client`, for `Client`, and `AsyncLoop` with asyncio on an `httpx.AsyncClient`, for
`AsyncClient`. Each performs the step a flow yields and sends it the result (or throws it the
error), until the flow returns; `iterate` also hands on what the flow gives its caller.

`asyncio` is imported when the async loop first pauses, not here: the CLI uses the synchronous
client and starts faster without it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar, cast

import httpx

from lockstep.sdk.flows import Exchange, Flow, Item, Lines, Pause, Read, Step, Stream

T = TypeVar("T")


def advance(flow: Flow[Any], reply: Any, failure: BaseException | None) -> tuple[bool, Any]:
    """Send the flow a step's result, or throw it the step's error: (False, its next step),
    or (True, its answer) once it returns."""
    try:
        return False, flow.send(reply) if failure is None else flow.throw(failure)
    except StopIteration as done:
        return True, done.value


class Loop:
    """Runs flows with blocking I/O."""

    def __init__(self, http: httpx.Client, sleep: Callable[[float], None]) -> None:
        self._http = http
        self._sleep = sleep

    def run(self, flow: Flow[T]) -> T:
        """The flow's answer."""
        try:
            finished, step = advance(flow, None, None)
            while not finished:
                finished, step = advance(flow, *self._outcome(step))
            return cast("T", step)
        finally:
            flow.close()  # a flow left early lets go of what it holds

    def iterate(self, flow: Flow[None]) -> Iterator[Any]:
        """What the flow hands its caller (items, or the lines of a streamed answer)."""
        try:
            finished, step = advance(flow, None, None)
            while not finished:
                if isinstance(step, Item):
                    yield step.value
                    finished, step = advance(flow, None, None)
                elif isinstance(step, Stream):
                    with self._http.stream(
                        step.method,
                        step.path,
                        params=step.params,
                        headers=step.headers,
                        timeout=step.timeout,
                    ) as response:
                        finished, step = advance(flow, response, None)
                        while not finished and isinstance(step, Read | Lines):
                            if isinstance(step, Read):
                                response.read()
                            else:
                                for line in response.iter_lines():
                                    yield line + "\n"
                            finished, step = advance(flow, None, None)
                else:
                    finished, step = advance(flow, *self._outcome(step))
        finally:
            flow.close()  # a flow left early lets go of what it holds

    def _outcome(self, step: Step) -> tuple[Any, BaseException | None]:
        try:
            if isinstance(step, Exchange):
                response = self._http.request(
                    step.method,
                    step.path,
                    params=step.params,
                    json=step.json,
                    headers=step.headers,
                )
                return response, None
            if isinstance(step, Pause):
                self._sleep(step.seconds)
                return None, None
        except BaseException as error:
            return None, error
        raise TypeError(f"{step!r} is not a step of a call that answers once")


class AsyncLoop:
    """Runs flows with asyncio."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self._http = http

    async def run(self, flow: Flow[T]) -> T:
        """The flow's answer."""
        try:
            finished, step = advance(flow, None, None)
            while not finished:
                finished, step = advance(flow, *(await self._outcome(step)))
            return cast("T", step)
        finally:
            flow.close()  # a flow left early lets go of what it holds

    async def iterate(self, flow: Flow[None]) -> AsyncIterator[Any]:
        """What the flow hands its caller (items, or the lines of a streamed answer)."""
        try:
            finished, step = advance(flow, None, None)
            while not finished:
                if isinstance(step, Item):
                    yield step.value
                    finished, step = advance(flow, None, None)
                elif isinstance(step, Stream):
                    async with self._http.stream(
                        step.method,
                        step.path,
                        params=step.params,
                        headers=step.headers,
                        timeout=step.timeout,
                    ) as response:
                        finished, step = advance(flow, response, None)
                        while not finished and isinstance(step, Read | Lines):
                            if isinstance(step, Read):
                                await response.aread()
                            else:
                                async for line in response.aiter_lines():
                                    yield line + "\n"
                            finished, step = advance(flow, None, None)
                else:
                    finished, step = advance(flow, *(await self._outcome(step)))
        finally:
            flow.close()  # a flow left early lets go of what it holds

    async def _outcome(self, step: Step) -> tuple[Any, BaseException | None]:
        try:
            if isinstance(step, Exchange):
                response = await self._http.request(
                    step.method,
                    step.path,
                    params=step.params,
                    json=step.json,
                    headers=step.headers,
                )
                return response, None
            if isinstance(step, Pause):
                import asyncio

                await asyncio.sleep(step.seconds)
                return None, None
        except BaseException as error:
            return None, error
        raise TypeError(f"{step!r} is not a step of a call that answers once")
