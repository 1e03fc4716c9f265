"""Every call of the SDK described once, as a flow: a generator that yields the steps it needs —
an HTTP exchange, a pause, a streamed answer and what to do with it, an item for its caller —
and is sent each step's result (or thrown its error). `Client` drives flows with blocking I/O
and `AsyncClient` with asyncio's (see loops.py), so that retries, token renewal, paging and
waiting are written here alone.

A flow does no I/O of its own: what it holds between steps is its `Link`, the client's url,
tokens, retry policy and clock.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from lockstep.sdk import calls
from lockstep.sdk.auth import TOKEN_ENDPOINT, Tokens
from lockstep.sdk.calls import WorkloadId
from lockstep.sdk.errors import Unreachable, WaitTimeout, WorkloadEnded, error_from
from lockstep.sdk.retry import Retry, worth_retrying

Json = dict[str, Any]
Items = list[Json]
PAGE_SIZE = 100
TIMEOUT = httpx.Timeout(30.0, connect=5.0)

T = TypeVar("T")


# --- the steps --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exchange:
    """Send a request; the flow is sent the `httpx.Response`, or thrown the error."""

    method: str
    path: str
    params: Mapping[str, str | int]
    json: Any
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Pause:
    """Sleep this long."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Stream:
    """Send a request whose answer is streamed; the flow is sent the response, its body not yet
    read. The answer stays open while the flow's next steps are `Read` or `Lines`, and is
    closed before any other."""

    method: str
    path: str
    params: Mapping[str, str | int]
    headers: dict[str, str]
    timeout: httpx.Timeout


@dataclass(frozen=True, slots=True)
class Read:
    """Read the open streamed answer's body (to raise the error it carries)."""


@dataclass(frozen=True, slots=True)
class Lines:
    """Hand the caller each line of the open streamed answer, ending in a newline."""


@dataclass(frozen=True, slots=True)
class Item:
    """Hand the caller one item (of a call that iterates)."""

    value: Any


Step = Exchange | Pause | Stream | Read | Lines | Item
Flow = Generator[Step, Any, T]
"""A call: the steps it yields, sent each step's result; it returns the call's answer."""


@dataclass(frozen=True, slots=True)
class Link:
    """What the flows of one client share: where lockstep is, the tokens, the retries and the
    clock that `wait` reads."""

    url: str
    auth: Tokens
    retry: Retry
    clock: Callable[[], float]
    obtaining: AbstractContextManager[Any]
    """Held while a token is obtained (the tokens' lock, for threads that share a client)."""


# --- sending ----------------------------------------------------------------------------


def check(response: httpx.Response) -> httpx.Response:
    """The response, or the typed error it answers."""
    if response.is_error:
        raise error_from(response)
    return response


def authorize(link: Link) -> Flow[None]:
    """Obtain a token first, when one is due."""
    with link.obtaining:
        if not link.auth.due():
            return
        requested_at = link.auth.now()
        body = link.auth.request_body()
        call = calls.Call("POST", TOKEN_ENDPOINT, body=body)
        response = yield from send_once(link, call, auth=False)
        link.auth.accept(check(response).json(), requested_at=requested_at)


def send_once(link: Link, call: calls.Call, *, auth: bool = True) -> Flow[httpx.Response]:
    """One request, and once more with a new token when the server refused the token."""
    if auth:
        yield from authorize(link)
    headers = link.auth.header() if auth else {}
    response: httpx.Response = yield Exchange(
        call.method, call.path, call.params, call.body, headers
    )
    if auth and response.status_code == 401 and link.auth.renewable:
        link.auth.forget()
        yield from authorize(link)
        response = yield Exchange(
            call.method, call.path, call.params, call.body, link.auth.header()
        )
    return response


def send(link: Link, call: calls.Call) -> Flow[httpx.Response]:
    """The call's answer, sent again while it may be and is worth it (see retry.py);
    `Unreachable` when no answer came, the typed error of an error answer."""
    attempt = 0
    while True:
        response: httpx.Response | None = None
        error: Exception | None = None
        try:
            response = yield from send_once(link, call)
        except httpx.TransportError as failure:
            error = failure
        if attempt + 1 < link.retry.attempts and worth_retrying(call.idempotent, response, error):
            yield Pause(link.retry.pause(attempt, response))
            attempt += 1
            continue
        if error is not None:
            raise Unreachable(f"lockstep at {link.url} did not answer: {error}") from error
        assert response is not None
        return check(response)


def answer(link: Link, call: calls.Call) -> Flow[Any]:
    """The call's JSON answer."""
    response = yield from send(link, call)
    return response.json()


def json(link: Link, call: calls.Call) -> Flow[Json]:
    """The call's JSON object."""
    body: Json = yield from answer(link, call)
    return body


def items(link: Link, call: calls.Call, key: str) -> Flow[Items]:
    """The list under `key` in the call's JSON object."""
    body = yield from json(link, call)
    return list(body[key])


def done(link: Link, call: calls.Call) -> Flow[None]:
    """The call, its answer unread."""
    yield from send(link, call)


# --- the calls that take more than one request -------------------------------------------


def workloads(
    link: Link,
    *,
    project: str | None,
    phase: str | None,
    name: str | None,
    filter_by: Collection[str],
    sort_by: str | None,
    sort_order: str | None,
    search: str | None,
    deleted: bool,
    page_size: int,
) -> Flow[None]:
    """Every workload that matches, an `Item` each, fetched a page at a time."""
    filters = filter_terms(project=project, phase=phase, name=name, more=filter_by)
    offset = 0
    while True:
        call = calls.list_page(
            offset=offset,
            limit=page_size,
            filter_by=filters,
            sort_by=sort_by,
            sort_order=sort_order,
            search=search,
            deleted=deleted,
        )
        body = yield from json(link, call)
        for item in body["workloads"]:
            yield Item(item)
        if "next" not in body:
            return
        offset = int(body["next"])


def every(link: Link, workload_id: WorkloadId, what: str) -> Flow[Items]:
    """All of a workload's `pods`, `events` or `history`, page after page."""
    found: Items = []
    offset = 0
    while True:
        call = calls.sub_page(workload_id, what, offset=offset, limit=PAGE_SIZE)
        body = yield from json(link, call)
        found += body[calls.ITEMS_KEY[what]]
        if "next" not in body:
            return found
        offset = int(body["next"])


def nodes(link: Link, cluster_id: str | None) -> Flow[Items]:
    """The nodes of a cluster (the first one unless named)."""
    if cluster_id:
        cluster = cluster_id
    else:
        clusters: Items = yield from answer(link, calls.clusters())
        cluster = str(clusters[0]["uuid"])
    found = yield from items(link, calls.nodes(cluster), "nodes")
    return found


def logs(
    link: Link,
    workload_id: WorkloadId,
    pod: str,
    *,
    follow: bool,
    tail_lines: int | None,
    since_seconds: int | None,
    timestamps: bool,
) -> Flow[None]:
    """A pod's log, its lines handed on as they come (`Lines`); a refused token is renewed
    once."""
    call = calls.logs(
        workload_id,
        pod,
        follow=follow,
        tail_lines=tail_lines,
        since_seconds=since_seconds,
        timestamps=timestamps,
    )
    timeout = httpx.Timeout(TIMEOUT.connect, read=None) if follow else TIMEOUT
    for attempt in range(2):
        yield from authorize(link)
        response: httpx.Response = yield Stream(
            call.method, call.path, call.params, link.auth.header(), timeout
        )
        if response.status_code == 401 and attempt == 0 and link.auth.renewable:
            link.auth.forget()
            continue
        if response.is_error:
            yield Read()
            raise error_from(response)
        yield Lines()
        return


def wait(
    link: Link,
    workload_id: WorkloadId,
    *,
    phase: str | Collection[str],
    timeout: float,
    every: float,
) -> Flow[Json]:
    """Poll until the workload is in `phase` (one, or any of several) and return it;
    `WorkloadEnded` if it ends otherwise, `WaitTimeout` after `timeout` seconds."""
    wanted = frozenset({phase} if isinstance(phase, str) else phase)
    deadline = link.clock() + timeout
    while True:
        workload = yield from json(link, calls.get(workload_id))
        if reached(workload, wanted, timed_out=link.clock() >= deadline, timeout=timeout):
            return workload
        yield Pause(every)


def reached(workload: Json, wanted: frozenset[str], *, timed_out: bool, timeout: float) -> bool:
    """Whether `wait` is done with `workload`: True in a wanted phase; `WorkloadEnded` when it
    ended otherwise, `WaitTimeout` once the time is up; False to look again."""
    if workload["phase"] in wanted:
        return True
    if workload["phase"] in calls.TERMINAL_PHASES:
        raise WorkloadEnded(workload)
    if timed_out:
        raise WaitTimeout(
            f"workload {workload['name']} is {workload['phase']}, "
            f"not {' or '.join(sorted(wanted))}, after {timeout:g} s"
        )
    return False


def filter_terms(
    *, project: str | None, phase: str | None, name: str | None, more: Collection[str]
) -> list[str]:
    """The API's filterBy terms for the common questions, and any given as they are."""
    terms = list(more)
    if project is not None:
        terms.append(
            f"projectName=={project}" if not project.isdigit() else f"projectId=={project}"
        )
    if phase is not None:
        terms.append(f"phase=={phase}")
    if name is not None:
        terms.append(f"name=={name}")
    return terms
