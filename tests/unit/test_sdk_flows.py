"""The SDK's calls described once (sdk/flows.py) and run by both loops (sdk/loops.py): the same
flow sends the same requests, pauses the same and answers (or fails) the same whether the
blocking loop or the asyncio loop drives it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
import pytest

from lockstep.sdk import calls, flows
from lockstep.sdk.auth import Tokens
from lockstep.sdk.errors import NotFound, Unavailable, Unreachable, WorkloadEnded
from lockstep.sdk.flows import Flow
from lockstep.sdk.loops import AsyncLoop, Loop
from lockstep.sdk.retry import Retry

T = TypeVar("T")
URL = "http://lockstep.test"
Answer = Callable[[httpx.Request], httpx.Response]


class Server:
    """Answers requests from a script, in order, noting each (and each pause of the loops)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        return self.answers.pop(0)(request)

    def pause(self, seconds: float) -> None:
        self.seen.append(f"pause {seconds:g}")


def ok(body: Any) -> Answer:
    return lambda _: httpx.Response(200, json=body)


def status(code: int, message: str = "no") -> Answer:
    return lambda _: httpx.Response(code, json={"code": code, "message": message})


def refused_connection(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)


def token(value: str) -> Answer:
    return ok({"accessToken": value, "expiresIn": 3600})


def link(**fields: Any) -> flows.Link:
    clock = fields.pop("clock", lambda: 0.0)
    auth = fields.pop("auth", None) or Tokens(client_id="app", client_secret="s", clock=clock)
    return flows.Link(
        url=URL,
        auth=auth,
        retry=Retry(attempts=3, first_pause=0.1),
        clock=clock,
        obtaining=contextlib.nullcontext(),
    )


def run_both(script: Callable[[], Server], describe: Callable[[], Flow[T]]) -> tuple[T, Server]:
    """The flow's answer, and what its server saw, once per loop: both must agree."""
    blocking = script()
    with httpx.Client(base_url=URL, transport=httpx.MockTransport(blocking)) as http:
        answer = Loop(http, blocking.pause).run(describe())

    async def run_async() -> tuple[T, Server]:
        server = script()

        async def answered(request: httpx.Request) -> httpx.Response:
            return server(request)

        transport = httpx.MockTransport(answered)
        async with httpx.AsyncClient(base_url=URL, transport=transport) as http:
            loop = AsyncLoop(http)
            original = asyncio.sleep

            async def noted(seconds: float, result: Any = None) -> Any:
                server.pause(seconds)
                return await original(0)

            asyncio.sleep = noted  # type: ignore[assignment]
            try:
                return await loop.run(describe()), server
            finally:
                asyncio.sleep = original

    async_answer, async_server = asyncio.run(run_async())
    assert async_answer == answer
    assert async_server.seen == blocking.seen
    return answer, blocking


def iterate_both(script: Callable[[], Server], describe: Callable[[], Flow[None]]) -> list[Any]:
    """What the flow hands its caller, once per loop: both must agree."""
    blocking = script()
    with httpx.Client(base_url=URL, transport=httpx.MockTransport(blocking)) as http:
        given = list(Loop(http, blocking.pause).iterate(describe()))

    async def iterate_async() -> list[Any]:
        server = script()

        async def answered(request: httpx.Request) -> httpx.Response:
            return server(request)

        transport = httpx.MockTransport(answered)
        async with httpx.AsyncClient(base_url=URL, transport=transport) as http:
            found = [item async for item in AsyncLoop(http).iterate(describe())]
        assert server.seen == blocking.seen
        return found

    assert asyncio.run(iterate_async()) == given
    return given


def test_a_token_is_obtained_first_and_an_unavailable_answer_is_tried_again() -> None:
    def script() -> Server:
        return Server(token("t1"), status(503), ok({"phase": "Running"}))

    answer, server = run_both(script, lambda: flows.json(link(), calls.get("w")))
    assert answer == {"phase": "Running"}
    assert server.seen == [
        "POST /api/v1/token?",
        "GET /api/v1/workloads/w?",
        "pause 0.1",
        "GET /api/v1/workloads/w?",
    ]


def test_a_refused_token_is_renewed_once() -> None:
    def script() -> Server:
        return Server(token("old"), status(401), token("new"), ok([]))

    tokens: list[Tokens] = []

    def clusters() -> Flow[Any]:
        tokens.append(Tokens(client_id="app", client_secret="s"))
        return flows.answer(link(auth=tokens[-1]), calls.clusters())

    answer, server = run_both(script, clusters)
    assert answer == []
    assert [auth.token for auth in tokens] == ["new", "new"]
    assert server.seen == [
        "POST /api/v1/token?",
        "GET /api/v1/clusters?",
        "POST /api/v1/token?",
        "GET /api/v1/clusters?",
    ]


def test_no_answer_after_the_retries_is_unreachable_and_an_error_answer_its_type() -> None:
    for answers, error in (
        ((refused_connection,) * 3, Unreachable),
        ((status(503),) * 3, Unavailable),
        ((status(404, "no such workload"),), NotFound),
    ):
        with pytest.raises(error):
            run_both(
                lambda answers=answers: Server(*answers),  # type: ignore[misc]
                lambda: flows.send(link(auth=Tokens(token="t")), calls.get("w")),
            )


def test_a_creation_is_not_sent_again_after_an_unavailable_answer() -> None:
    call = calls.TRAININGS.create({"name": "fit"})
    with pytest.raises(Unavailable):
        run_both(
            lambda: Server(status(503)), lambda: flows.send(link(auth=Tokens(token="t")), call)
        )


def test_the_pages_of_a_list_are_handed_on_item_by_item() -> None:
    def script() -> Server:
        return Server(
            ok({"workloads": [{"name": "a"}, {"name": "b"}], "next": 2}),
            ok({"workloads": [{"name": "c"}]}),
        )

    def listing() -> Flow[None]:
        return flows.workloads(
            link(auth=Tokens(token="t")),
            project="team",
            phase=None,
            name=None,
            filter_by=(),
            sort_by=None,
            sort_order=None,
            search=None,
            deleted=False,
            page_size=2,
        )

    assert iterate_both(script, listing) == [{"name": "a"}, {"name": "b"}, {"name": "c"}]


def test_a_log_is_streamed_line_by_line_after_a_refused_token_is_renewed() -> None:
    def script() -> Server:
        return Server(
            token("old"),
            status(401),
            token("new"),
            lambda _: httpx.Response(200, content=b"one\ntwo\n"),
        )

    def log() -> Flow[None]:
        return flows.logs(
            link(),
            "w",
            "p-0",
            follow=False,
            tail_lines=5,
            since_seconds=None,
            timestamps=False,
        )

    assert iterate_both(script, log) == ["one\n", "two\n"]


def test_a_log_refused_raises_the_servers_error() -> None:
    def log() -> Flow[None]:
        return flows.logs(
            link(auth=Tokens(token="t")),
            "w",
            "gone",
            follow=True,
            tail_lines=None,
            since_seconds=None,
            timestamps=False,
        )

    with pytest.raises(NotFound, match="no such pod"):
        iterate_both(lambda: Server(status(404, "no such pod")), log)


def test_wait_polls_until_the_phase_and_raises_when_the_workload_ends_otherwise() -> None:
    times = iter([0.0, 0.0, 1.0] * 2)

    def script() -> Server:
        return Server(ok({"name": "w", "phase": "Pending"}), ok({"name": "w", "phase": "Running"}))

    def waiting() -> Flow[Any]:
        return flows.wait(
            link(auth=Tokens(token="t"), clock=lambda: next(times)),
            "w",
            phase="Running",
            timeout=60,
            every=0.5,
        )

    answer, server = run_both(script, waiting)
    assert answer == {"name": "w", "phase": "Running"}
    assert server.seen.count("pause 0.5") == 1

    ended = {"name": "w", "phase": "Failed", "phaseMessage": "exit 1"}
    with pytest.raises(WorkloadEnded, match="workload w ended Failed: exit 1"):
        run_both(
            lambda: Server(ok(ended)),
            lambda: flows.wait(
                link(auth=Tokens(token="t")), "w", phase="Running", timeout=1, every=1
            ),
        )


def test_a_token_request_carries_the_credentials() -> None:
    bodies: list[Any] = []

    def noted(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return token("t")(request)

    def script() -> Server:
        return Server(noted, ok({}))

    run_both(script, lambda: flows.json(link(), calls.get("w")))
    assert bodies[0] == {"grantType": "client_credentials", "clientId": "app", "clientSecret": "s"}
