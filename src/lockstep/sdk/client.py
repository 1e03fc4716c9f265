"""`Client` and `AsyncClient`: lockstep's API from Python, on httpx.

    from lockstep import Client

    with Client("http://127.0.0.1:8080", client_id="alice", client_secret="…") as lockstep:
        created = lockstep.create_distributed({...})          # the Run:ai request body
        lockstep.wait(created.workload_id, phase="Running", timeout=600)
        for line in lockstep.logs(created.workload_id, "train-master-0", follow=True):
            print(line, end="")
        notebook = lockstep.workspaces.create({...})          # or lockstep.trainings

Each kind of workload has its calls under one name — `distributed`, `trainings`,
`workspaces` (see `Workloads`): create, render, get, delete, suspend, resume;
`create_distributed` and the other calls of old are the distributed ones. The calls of the
generic API (`get`, `list`, `pods`, `logs`, `wait`, …) take a workload of any kind.

Both take a token, or an application's client id and secret (a token is then obtained, and
renewed before it expires). Idempotent calls are retried on connection errors and 503 answers;
errors raise the typed exceptions of `lockstep.sdk.errors` with the server's message. Requests
and workloads are the server's own models (`lockstep.schemas.distributed`,
`lockstep.schemas.single_pod`); other answers are the API's JSON objects.

`asyncio` is imported by the async client's methods that sleep, not here: the CLI uses the
synchronous client and starts faster without it.
"""

from __future__ import annotations

import importlib
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

import httpx

from lockstep.sdk import calls
from lockstep.sdk.auth import TOKEN_ENDPOINT, Tokens
from lockstep.sdk.calls import WorkloadId
from lockstep.sdk.errors import ClientError, Unreachable, error_from
from lockstep.sdk.retry import Retry, worth_retrying

if TYPE_CHECKING:
    # Imported when first used: building the models takes longer than the CLI may.
    from lockstep.schemas.distributed import DistributedCreationRequest, DistributedWorkload
    from lockstep.schemas.single_pod import (
        TrainingCreationRequest,
        TrainingWorkload,
        WorkspaceCreationRequest,
        WorkspaceWorkload,
    )

Json = dict[str, Any]
Items = list[Json]
"""(Named apart: inside the clients, `list` is a method.)"""
DEFAULT_RETRY = Retry()
PAGE_SIZE = 100
TIMEOUT = httpx.Timeout(30.0, connect=5.0)


Request = TypeVar("Request")
Model = TypeVar("Model")

MODELS = {
    "Distributed": ("lockstep.schemas.distributed", "DistributedWorkload"),
    "Training": ("lockstep.schemas.single_pod", "TrainingWorkload"),
    "Workspace": ("lockstep.schemas.single_pod", "WorkspaceWorkload"),
}
"""The module and name of each kind's response model (by its `type`), imported when first used."""


class Workloads(Generic[Request, Model]):
    """One kind's calls (`Client.distributed`, `.trainings`, `.workspaces`): a request model
    (or its JSON form) in, the kind's workload model out."""

    def __init__(self, send: Callable[[calls.Call], httpx.Response], kind: calls.Kind) -> None:
        self.kind = kind
        self._send = send

    def create(self, request: Request | Mapping[str, Any]) -> Model:
        """Submit the workload; returned once it is stored (202)."""
        return cast("Model", _parsed(self.kind, self._send(self.kind.create(_form(request)))))

    def render(self, request: Request | Mapping[str, Any], *, runtime: str | None = None) -> Json:
        """What the server's runtime (or `runtime`: local, kubernetes) would run for `request`:
        pod launches or Kubernetes manifests. Nothing is stored or started."""
        body: Json = self._send(self.kind.render(_form(request), runtime=runtime)).json()
        return body

    def get(self, workload_id: WorkloadId) -> Model:
        """The workload as its kind's path returns it (NotFound for one of another kind)."""
        return cast("Model", _parsed(self.kind, self._send(self.kind.get(workload_id))))

    def delete(self, workload_id: WorkloadId) -> None:
        self._send(self.kind.delete(workload_id))

    def suspend(self, workload_id: WorkloadId) -> None:
        self._send(self.kind.suspend(workload_id))

    def resume(self, workload_id: WorkloadId) -> None:
        self._send(self.kind.resume(workload_id))


class AsyncWorkloads(Generic[Request, Model]):
    """One kind's calls, for asyncio (see `Workloads`)."""

    def __init__(
        self, send: Callable[[calls.Call], Awaitable[httpx.Response]], kind: calls.Kind
    ) -> None:
        self.kind = kind
        self._send = send

    async def create(self, request: Request | Mapping[str, Any]) -> Model:
        response = await self._send(self.kind.create(_form(request)))
        return cast("Model", _parsed(self.kind, response))

    async def render(
        self, request: Request | Mapping[str, Any], *, runtime: str | None = None
    ) -> Json:
        response = await self._send(self.kind.render(_form(request), runtime=runtime))
        body: Json = response.json()
        return body

    async def get(self, workload_id: WorkloadId) -> Model:
        return cast("Model", _parsed(self.kind, await self._send(self.kind.get(workload_id))))

    async def delete(self, workload_id: WorkloadId) -> None:
        await self._send(self.kind.delete(workload_id))

    async def suspend(self, workload_id: WorkloadId) -> None:
        await self._send(self.kind.suspend(workload_id))

    async def resume(self, workload_id: WorkloadId) -> None:
        await self._send(self.kind.resume(workload_id))


class WaitTimeout(ClientError):
    """`wait` gave up: the workload did not reach the phase in time."""


class WorkloadEnded(ClientError):
    """`wait` saw the workload end (Completed or Failed) in a phase that was not asked for."""

    def __init__(self, workload: Json) -> None:
        super().__init__(
            f"workload {workload.get('name')} ended {workload.get('phase')}: "
            f"{workload.get('phaseMessage') or ''}".rstrip(": ")
        )
        self.workload = workload


def _wanted(phase: str | Collection[str]) -> frozenset[str]:
    return frozenset({phase} if isinstance(phase, str) else phase)


def _reached(workload: Json, wanted: frozenset[str], *, timed_out: bool, timeout: float) -> bool:
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


def _verify(url: str) -> ssl.SSLContext | bool:
    """How to verify the server's certificate: against the usual authorities for https; for a
    plain-http server a context that trusts no one, since loading the authorities is a third
    of the CLI's start-up and no TLS connection is ever made (requests never follow redirects)."""
    if url.startswith("https:"):
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _check(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        raise error_from(response)
    return response


class Client:
    """lockstep's API, synchronously."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        retry: Retry = DEFAULT_RETRY,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`http`: an httpx client to send with (its transport and base URL are used)."""
        self.url = url.rstrip("/")
        self.auth = Tokens(
            token=token, client_id=client_id, client_secret=client_secret, clock=clock
        )
        self._http = http or httpx.Client(
            base_url=self.url, timeout=TIMEOUT, verify=_verify(self.url)
        )
        self._owns_http = http is None
        self._retry = retry
        self._sleep = sleep
        self._clock = clock
        self.distributed: Workloads[DistributedCreationRequest, DistributedWorkload] = Workloads(
            self._send, calls.DISTRIBUTED_KIND
        )
        self.trainings: Workloads[TrainingCreationRequest, TrainingWorkload] = Workloads(
            self._send, calls.TRAININGS
        )
        self.workspaces: Workloads[WorkspaceCreationRequest, WorkspaceWorkload] = Workloads(
            self._send, calls.WORKSPACES
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    # --- the API ----------------------------------------------------------------------

    def create_distributed(
        self, request: DistributedCreationRequest | Mapping[str, Any]
    ) -> DistributedWorkload:
        """Submit a distributed workload; returned once it is stored (202)."""
        return self.distributed.create(request)

    def render(
        self,
        request: DistributedCreationRequest | Mapping[str, Any],
        *,
        runtime: str | None = None,
    ) -> Json:
        """What the server's runtime (or `runtime`: local, kubernetes) would run for `request`:
        pod launches or Kubernetes manifests. Nothing is stored or started."""
        return self.distributed.render(request, runtime=runtime)

    def get(self, workload_id: WorkloadId) -> Json:
        """The workload as `GET /api/v1/workloads/{id}` shows it (phase, pods, …)."""
        return self._json(calls.get(workload_id))

    def get_distributed(self, workload_id: WorkloadId) -> DistributedWorkload:
        return self.distributed.get(workload_id)

    def of_type(self, workload_type: str) -> Workloads[Any, Any]:
        """The calls of the kind that the generic list's `type` names (Distributed, Training,
        Workspace): to suspend, resume or delete a workload found by `list` or `get`."""
        kinds: dict[str, Workloads[Any, Any]] = {
            "Distributed": self.distributed,
            "Training": self.trainings,
            "Workspace": self.workspaces,
        }
        return kinds[_known(workload_type)]

    def list(
        self,
        *,
        project: str | None = None,
        phase: str | None = None,
        name: str | None = None,
        filter_by: Collection[str] = (),
        sort_by: str | None = None,
        sort_order: str | None = None,
        search: str | None = None,
        deleted: bool = False,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[Json]:
        """Every workload that matches, fetched a page at a time as the iteration goes."""
        filters = _filters(project=project, phase=phase, name=name, more=filter_by)
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
            body = self._json(call)
            yield from body["workloads"]
            if "next" not in body:
                return
            offset = int(body["next"])

    def delete(self, workload_id: WorkloadId) -> None:
        """Delete a distributed workload (`trainings.delete`, `workspaces.delete` for others)."""
        self.distributed.delete(workload_id)

    def suspend(self, workload_id: WorkloadId) -> None:
        """Suspend a distributed workload (see `of_type` for any kind's)."""
        self.distributed.suspend(workload_id)

    def resume(self, workload_id: WorkloadId) -> None:
        """Resume a distributed workload (see `of_type` for any kind's)."""
        self.distributed.resume(workload_id)

    def pods(self, workload_id: WorkloadId) -> Items:
        return self._all(workload_id, "pods")

    def events(self, workload_id: WorkloadId) -> Items:
        return self._all(workload_id, "events")

    def history(self, workload_id: WorkloadId) -> Items:
        return self._all(workload_id, "history")

    def projects(self) -> Items:
        return list(self._json(calls.projects())["projects"])

    def queue(self, project_id: str | None = None) -> Items:
        """Per project (every one you may read, or the one named): its shares in each node
        pool as the last scheduling cycle found them, and its waiting workloads in the order
        they will be admitted, each with why it waits."""
        return list(self._json(calls.queue(project_id))["projects"])

    def create_project(self, body: Json) -> Json:
        """A new project (`ProjectCreationRequest`)."""
        return self._json(calls.create_project(body))

    def set_project_resources(self, project_id: str, resources: Items, *, patch: bool) -> Items:
        """Replace (or with `patch`, merge pool by pool into) the project's `resources[]`."""
        answer: Items = self._send(
            calls.set_project_resources(project_id, resources, patch=patch)
        ).json()
        return answer

    def delete_project(self, project_id: str) -> None:
        self._send(calls.delete_project(project_id))

    def departments(self) -> Items:
        return list(self._json(calls.departments())["departments"])

    def create_department(self, body: Json) -> Json:
        return self._json(calls.create_department(body))

    def update_department(self, department_id: str, body: Json) -> Json:
        return self._json(calls.update_department(department_id, body))

    def delete_department(self, department_id: str) -> None:
        self._send(calls.delete_department(department_id))

    def node_pools(self) -> Items:
        return list(self._json(calls.node_pools())["nodepools"])

    def create_claim(self, project_id: str, name: str, *, size: str | None = None) -> Json:
        """A new claim (a pvc volume of the local runtime) in the project; `size` is a
        Kubernetes quantity such as `10Gi`."""
        return self._json(calls.create_claim(project_id, name, size=size))

    def claims(self, project_id: str) -> Items:
        """The project's claims, each with its size, what it uses and its conditions."""
        return list(self._json(calls.claims(project_id))["claims"])

    def claim(self, project_id: str, name: str) -> Json:
        return self._json(calls.claim(project_id, name))

    def delete_claim(self, project_id: str, name: str) -> None:
        """Delete the claim and every file in it."""
        self._send(calls.delete_claim(project_id, name))

    def clusters(self) -> Items:
        answer: Items = self._send(calls.clusters()).json()
        return answer

    def nodes(self, cluster_id: str | None = None) -> Items:
        """The nodes of a cluster (the first one unless named), with what is held of each."""
        cluster = cluster_id or str(self.clusters()[0]["uuid"])
        return list(self._json(calls.nodes(cluster))["nodes"])

    def logs(
        self,
        workload_id: WorkloadId,
        pod: str,
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
    ) -> Iterator[str]:
        """A pod's log, line by line (each ending in a newline); with `follow`, new lines as
        the pod prints them, until it ends."""
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
            self._authorize()
            with self._http.stream(
                call.method,
                call.path,
                params=call.params,
                headers=self.auth.header(),
                timeout=timeout,
            ) as response:
                if response.status_code == 401 and attempt == 0 and self.auth.renewable:
                    self.auth.forget()
                    continue
                if response.is_error:
                    response.read()
                    raise error_from(response)
                for line in response.iter_lines():
                    yield line + "\n"
                return

    def wait(
        self,
        workload_id: WorkloadId,
        *,
        phase: str | Collection[str],
        timeout: float,
        every: float = 0.5,
    ) -> Json:
        """Poll until the workload is in `phase` (one, or any of several) and return it;
        `WorkloadEnded` if it ends otherwise, `WaitTimeout` after `timeout` seconds."""
        wanted = _wanted(phase)
        deadline = self._clock() + timeout
        while True:
            workload = self.get(workload_id)
            if _reached(workload, wanted, timed_out=self._clock() >= deadline, timeout=timeout):
                return workload
            self._sleep(every)

    # --- sending ----------------------------------------------------------------------

    def _all(self, workload_id: WorkloadId, what: str) -> Items:
        items: Items = []
        offset = 0
        while True:
            body = self._json(calls.sub_page(workload_id, what, offset=offset, limit=PAGE_SIZE))
            items += body[calls.ITEMS_KEY[what]]
            if "next" not in body:
                return items
            offset = int(body["next"])

    def _json(self, call: calls.Call) -> Json:
        body: Json = self._send(call).json()
        return body

    def _authorize(self) -> None:
        """Obtain a token first, when one is due."""
        with self.auth.lock:
            if not self.auth.due():
                return
            requested_at = self.auth.now()
            body = self.auth.request_body()
            response = self._send_once(calls.Call("POST", TOKEN_ENDPOINT, body=body), auth=False)
            self.auth.accept(_check(response).json(), requested_at=requested_at)

    def _send_once(self, call: calls.Call, *, auth: bool = True) -> httpx.Response:
        """One request, and once more with a new token when the server refused the token."""
        if auth:
            self._authorize()
        headers = self.auth.header() if auth else {}
        response = self._http.request(
            call.method, call.path, params=call.params, json=call.body, headers=headers
        )
        if auth and response.status_code == 401 and self.auth.renewable:
            self.auth.forget()
            self._authorize()
            response = self._http.request(
                call.method,
                call.path,
                params=call.params,
                json=call.body,
                headers=self.auth.header(),
            )
        return response

    def _send(self, call: calls.Call) -> httpx.Response:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = self._send_once(call)
            except httpx.TransportError as failure:
                error = failure
            if attempt + 1 < self._retry.attempts and worth_retrying(
                call.idempotent, response, error
            ):
                self._sleep(self._retry.pause(attempt, response))
                attempt += 1
                continue
            if error is not None:
                raise Unreachable(f"lockstep at {self.url} did not answer: {error}") from error
            assert response is not None
            return _check(response)


class AsyncClient:
    """lockstep's API, for asyncio."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        retry: Retry = DEFAULT_RETRY,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url.rstrip("/")
        self.auth = Tokens(
            token=token, client_id=client_id, client_secret=client_secret, clock=clock
        )
        self._http = http or httpx.AsyncClient(
            base_url=self.url, timeout=TIMEOUT, verify=_verify(self.url)
        )
        self._owns_http = http is None
        self._retry = retry
        self._clock = clock
        self.distributed: AsyncWorkloads[DistributedCreationRequest, DistributedWorkload] = (
            AsyncWorkloads(self._send, calls.DISTRIBUTED_KIND)
        )
        self.trainings: AsyncWorkloads[TrainingCreationRequest, TrainingWorkload] = AsyncWorkloads(
            self._send, calls.TRAININGS
        )
        self.workspaces: AsyncWorkloads[WorkspaceCreationRequest, WorkspaceWorkload] = (
            AsyncWorkloads(self._send, calls.WORKSPACES)
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def create_distributed(
        self, request: DistributedCreationRequest | Mapping[str, Any]
    ) -> DistributedWorkload:
        return await self.distributed.create(request)

    async def render(
        self,
        request: DistributedCreationRequest | Mapping[str, Any],
        *,
        runtime: str | None = None,
    ) -> Json:
        return await self.distributed.render(request, runtime=runtime)

    async def get(self, workload_id: WorkloadId) -> Json:
        return await self._json(calls.get(workload_id))

    async def get_distributed(self, workload_id: WorkloadId) -> DistributedWorkload:
        return await self.distributed.get(workload_id)

    def of_type(self, workload_type: str) -> AsyncWorkloads[Any, Any]:
        kinds: dict[str, AsyncWorkloads[Any, Any]] = {
            "Distributed": self.distributed,
            "Training": self.trainings,
            "Workspace": self.workspaces,
        }
        return kinds[_known(workload_type)]

    async def list(
        self,
        *,
        project: str | None = None,
        phase: str | None = None,
        name: str | None = None,
        filter_by: Collection[str] = (),
        sort_by: str | None = None,
        sort_order: str | None = None,
        search: str | None = None,
        deleted: bool = False,
        page_size: int = PAGE_SIZE,
    ) -> AsyncIterator[Json]:
        filters = _filters(project=project, phase=phase, name=name, more=filter_by)
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
            body = await self._json(call)
            for item in body["workloads"]:
                yield item
            if "next" not in body:
                return
            offset = int(body["next"])

    async def delete(self, workload_id: WorkloadId) -> None:
        await self.distributed.delete(workload_id)

    async def suspend(self, workload_id: WorkloadId) -> None:
        await self.distributed.suspend(workload_id)

    async def resume(self, workload_id: WorkloadId) -> None:
        await self.distributed.resume(workload_id)

    async def pods(self, workload_id: WorkloadId) -> Items:
        return await self._all(workload_id, "pods")

    async def events(self, workload_id: WorkloadId) -> Items:
        return await self._all(workload_id, "events")

    async def history(self, workload_id: WorkloadId) -> Items:
        return await self._all(workload_id, "history")

    async def projects(self) -> Items:
        return list((await self._json(calls.projects()))["projects"])

    async def queue(self, project_id: str | None = None) -> Items:
        return list((await self._json(calls.queue(project_id)))["projects"])

    async def create_claim(self, project_id: str, name: str, *, size: str | None = None) -> Json:
        return await self._json(calls.create_claim(project_id, name, size=size))

    async def claims(self, project_id: str) -> Items:
        return list((await self._json(calls.claims(project_id)))["claims"])

    async def claim(self, project_id: str, name: str) -> Json:
        return await self._json(calls.claim(project_id, name))

    async def delete_claim(self, project_id: str, name: str) -> None:
        await self._send(calls.delete_claim(project_id, name))

    async def clusters(self) -> Items:
        answer: Items = (await self._send(calls.clusters())).json()
        return answer

    async def nodes(self, cluster_id: str | None = None) -> Items:
        cluster = cluster_id or str((await self.clusters())[0]["uuid"])
        return list((await self._json(calls.nodes(cluster)))["nodes"])

    async def logs(
        self,
        workload_id: WorkloadId,
        pod: str,
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
    ) -> AsyncIterator[str]:
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
            await self._authorize()
            async with self._http.stream(
                call.method,
                call.path,
                params=call.params,
                headers=self.auth.header(),
                timeout=timeout,
            ) as response:
                if response.status_code == 401 and attempt == 0 and self.auth.renewable:
                    self.auth.forget()
                    continue
                if response.is_error:
                    await response.aread()
                    raise error_from(response)
                async for line in response.aiter_lines():
                    yield line + "\n"
                return

    async def wait(
        self,
        workload_id: WorkloadId,
        *,
        phase: str | Collection[str],
        timeout: float,
        every: float = 0.5,
    ) -> Json:
        wanted = _wanted(phase)
        deadline = self._clock() + timeout
        while True:
            workload = await self.get(workload_id)
            if _reached(workload, wanted, timed_out=self._clock() >= deadline, timeout=timeout):
                return workload
            import asyncio

            await asyncio.sleep(every)

    async def _all(self, workload_id: WorkloadId, what: str) -> Items:
        items: Items = []
        offset = 0
        while True:
            call = calls.sub_page(workload_id, what, offset=offset, limit=PAGE_SIZE)
            body = await self._json(call)
            items += body[calls.ITEMS_KEY[what]]
            if "next" not in body:
                return items
            offset = int(body["next"])

    async def _json(self, call: calls.Call) -> Json:
        body: Json = (await self._send(call)).json()
        return body

    async def _authorize(self) -> None:
        """Obtain a token first, when one is due."""
        if not self.auth.due():
            return
        requested_at = self.auth.now()
        body = self.auth.request_body()
        response = await self._send_once(calls.Call("POST", TOKEN_ENDPOINT, body=body), auth=False)
        self.auth.accept(_check(response).json(), requested_at=requested_at)

    async def _send_once(self, call: calls.Call, *, auth: bool = True) -> httpx.Response:
        """One request, and once more with a new token when the server refused the token."""
        if auth:
            await self._authorize()
        headers = self.auth.header() if auth else {}
        response = await self._http.request(
            call.method, call.path, params=call.params, json=call.body, headers=headers
        )
        if auth and response.status_code == 401 and self.auth.renewable:
            self.auth.forget()
            await self._authorize()
            response = await self._http.request(
                call.method,
                call.path,
                params=call.params,
                json=call.body,
                headers=self.auth.header(),
            )
        return response

    async def _send(self, call: calls.Call) -> httpx.Response:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = await self._send_once(call)
            except httpx.TransportError as failure:
                error = failure
            if attempt + 1 < self._retry.attempts and worth_retrying(
                call.idempotent, response, error
            ):
                import asyncio

                await asyncio.sleep(self._retry.pause(attempt, response))
                attempt += 1
                continue
            if error is not None:
                raise Unreachable(f"lockstep at {self.url} did not answer: {error}") from error
            assert response is not None
            return _check(response)


def _form(request: Any) -> calls.WireForm | Mapping[str, Any]:
    """A request as `calls` takes it: a model of the server's, or its JSON form."""
    return cast("calls.WireForm | Mapping[str, Any]", request)


def _parsed(kind: calls.Kind, response: httpx.Response) -> Any:
    """The answer as the kind's response model."""
    module, name = MODELS[kind.type]
    return getattr(importlib.import_module(module), name).model_validate_json(response.content)


def _known(workload_type: str) -> str:
    if workload_type not in calls.KINDS:
        choices = ", ".join(calls.KINDS)
        raise ValueError(f"no kind of workload {workload_type!r} (one of {choices})")
    return workload_type


def _filters(
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
