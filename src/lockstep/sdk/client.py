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

Both take a token, an application's client id and secret, or a user's refresh token (a token
is then obtained, and renewed before it expires). Idempotent calls are retried on connection
errors and 503 answers; errors raise the typed exceptions of `lockstep.sdk.errors` with the
server's message. Requests
and workloads are the server's own models (`lockstep.schemas.distributed`,
`lockstep.schemas.single_pod`); other answers are the API's JSON objects.

Each call is described once, in flows.py (its requests, retries, token renewal, paging and
waiting); `Client` runs it with blocking I/O and `AsyncClient` with asyncio (loops.py).
"""

from __future__ import annotations

import contextlib
import importlib
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

import httpx

from lockstep.sdk import calls, flows
from lockstep.sdk.auth import Tokens
from lockstep.sdk.calls import WorkloadId
from lockstep.sdk.flows import PAGE_SIZE, TIMEOUT, Items, Json
from lockstep.sdk.loops import AsyncLoop, Loop
from lockstep.sdk.retry import Retry

if TYPE_CHECKING:
    # Imported when first used: building the models takes longer than the CLI may.
    from lockstep.schemas.distributed import DistributedCreationRequest, DistributedWorkload
    from lockstep.schemas.single_pod import (
        TrainingCreationRequest,
        TrainingWorkload,
        WorkspaceCreationRequest,
        WorkspaceWorkload,
    )

DEFAULT_RETRY = Retry()


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


def _verify(url: str) -> ssl.SSLContext | bool:
    """How to verify the server's certificate: against the usual authorities for https; for a
    plain-http server a context that trusts no one, since loading the authorities is a third
    of the CLI's start-up and no TLS connection is ever made (requests never follow redirects)."""
    if url.startswith("https:"):
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class Client:
    """lockstep's API, synchronously."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        refresh_token: str | None = None,
        retry: Retry = DEFAULT_RETRY,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`http`: an httpx client to send with (its transport and base URL are used)."""
        self.url = url.rstrip("/")
        self.auth = Tokens(
            token=token,
            client_id=client_id,
            client_secret=client_secret,
            refresh_token=refresh_token,
            clock=clock,
        )
        self._http = http or httpx.Client(
            base_url=self.url, timeout=TIMEOUT, verify=_verify(self.url)
        )
        self._owns_http = http is None
        self._link = flows.Link(
            url=self.url, auth=self.auth, retry=retry, clock=clock, obtaining=self.auth.lock
        )
        self._loop = Loop(self._http, sleep)
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
        return self._loop.run(flows.json(self._link, calls.get(workload_id)))

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
        yield from self._loop.iterate(
            flows.workloads(
                self._link,
                project=project,
                phase=phase,
                name=name,
                filter_by=filter_by,
                sort_by=sort_by,
                sort_order=sort_order,
                search=search,
                deleted=deleted,
                page_size=page_size,
            )
        )

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
        return self._loop.run(flows.every(self._link, workload_id, "pods"))

    def events(self, workload_id: WorkloadId) -> Items:
        return self._loop.run(flows.every(self._link, workload_id, "events"))

    def history(self, workload_id: WorkloadId) -> Items:
        return self._loop.run(flows.every(self._link, workload_id, "history"))

    def projects(self) -> Items:
        return self._loop.run(flows.items(self._link, calls.projects(), "projects"))

    def queue(self, project_id: str | None = None) -> Items:
        """Per project (every one you may read, or the one named): its shares in each node
        pool as the last scheduling cycle found them, and its waiting workloads in the order
        they will be admitted, each with why it waits."""
        return self._loop.run(flows.items(self._link, calls.queue(project_id), "projects"))

    def create_project(self, body: Json) -> Json:
        """A new project (`ProjectCreationRequest`)."""
        return self._loop.run(flows.json(self._link, calls.create_project(body)))

    def set_project_resources(self, project_id: str, resources: Items, *, patch: bool) -> Items:
        """Replace (or with `patch`, merge pool by pool into) the project's `resources[]`."""
        call = calls.set_project_resources(project_id, resources, patch=patch)
        answer: Items = self._loop.run(flows.answer(self._link, call))
        return answer

    def delete_project(self, project_id: str) -> None:
        self._loop.run(flows.done(self._link, calls.delete_project(project_id)))

    def departments(self) -> Items:
        return self._loop.run(flows.items(self._link, calls.departments(), "departments"))

    def create_department(self, body: Json) -> Json:
        return self._loop.run(flows.json(self._link, calls.create_department(body)))

    def update_department(self, department_id: str, body: Json) -> Json:
        return self._loop.run(flows.json(self._link, calls.update_department(department_id, body)))

    def delete_department(self, department_id: str) -> None:
        self._loop.run(flows.done(self._link, calls.delete_department(department_id)))

    def node_pools(self) -> Items:
        return self._loop.run(flows.items(self._link, calls.node_pools(), "nodepools"))

    def create_claim(self, project_id: str, name: str, *, size: str | None = None) -> Json:
        """A new claim (a pvc volume of the local runtime) in the project; `size` is a
        Kubernetes quantity such as `10Gi`."""
        return self._loop.run(
            flows.json(self._link, calls.create_claim(project_id, name, size=size))
        )

    def claims(self, project_id: str) -> Items:
        """The project's claims, each with its size, what it uses and its conditions."""
        return self._loop.run(flows.items(self._link, calls.claims(project_id), "claims"))

    def claim(self, project_id: str, name: str) -> Json:
        return self._loop.run(flows.json(self._link, calls.claim(project_id, name)))

    def delete_claim(self, project_id: str, name: str) -> None:
        """Delete the claim and every file in it."""
        self._loop.run(flows.done(self._link, calls.delete_claim(project_id, name)))

    def clusters(self) -> Items:
        answer: Items = self._loop.run(flows.answer(self._link, calls.clusters()))
        return answer

    def nodes(self, cluster_id: str | None = None) -> Items:
        """The nodes of a cluster (the first one unless named), with what is held of each."""
        return self._loop.run(flows.nodes(self._link, cluster_id))

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
        yield from self._loop.iterate(
            flows.logs(
                self._link,
                workload_id,
                pod,
                follow=follow,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                timestamps=timestamps,
            )
        )

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
        return self._loop.run(
            flows.wait(self._link, workload_id, phase=phase, timeout=timeout, every=every)
        )

    # --- sending ----------------------------------------------------------------------

    def _send(self, call: calls.Call) -> httpx.Response:
        return self._loop.run(flows.send(self._link, call))


class AsyncClient:
    """lockstep's API, for asyncio."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        refresh_token: str | None = None,
        retry: Retry = DEFAULT_RETRY,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url.rstrip("/")
        self.auth = Tokens(
            token=token,
            client_id=client_id,
            client_secret=client_secret,
            refresh_token=refresh_token,
            clock=clock,
        )
        self._http = http or httpx.AsyncClient(
            base_url=self.url, timeout=TIMEOUT, verify=_verify(self.url)
        )
        self._owns_http = http is None
        # One event loop's calls take turns by themselves: a lock would block the loop.
        self._link = flows.Link(
            url=self.url,
            auth=self.auth,
            retry=retry,
            clock=clock,
            obtaining=contextlib.nullcontext(),
        )
        self._loop = AsyncLoop(self._http)
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
        return await self._loop.run(flows.json(self._link, calls.get(workload_id)))

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
        flow = flows.workloads(
            self._link,
            project=project,
            phase=phase,
            name=name,
            filter_by=filter_by,
            sort_by=sort_by,
            sort_order=sort_order,
            search=search,
            deleted=deleted,
            page_size=page_size,
        )
        async for item in self._loop.iterate(flow):
            yield item

    async def delete(self, workload_id: WorkloadId) -> None:
        await self.distributed.delete(workload_id)

    async def suspend(self, workload_id: WorkloadId) -> None:
        await self.distributed.suspend(workload_id)

    async def resume(self, workload_id: WorkloadId) -> None:
        await self.distributed.resume(workload_id)

    async def pods(self, workload_id: WorkloadId) -> Items:
        return await self._loop.run(flows.every(self._link, workload_id, "pods"))

    async def events(self, workload_id: WorkloadId) -> Items:
        return await self._loop.run(flows.every(self._link, workload_id, "events"))

    async def history(self, workload_id: WorkloadId) -> Items:
        return await self._loop.run(flows.every(self._link, workload_id, "history"))

    async def projects(self) -> Items:
        return await self._loop.run(flows.items(self._link, calls.projects(), "projects"))

    async def queue(self, project_id: str | None = None) -> Items:
        return await self._loop.run(flows.items(self._link, calls.queue(project_id), "projects"))

    async def create_claim(self, project_id: str, name: str, *, size: str | None = None) -> Json:
        call = calls.create_claim(project_id, name, size=size)
        return await self._loop.run(flows.json(self._link, call))

    async def claims(self, project_id: str) -> Items:
        return await self._loop.run(flows.items(self._link, calls.claims(project_id), "claims"))

    async def claim(self, project_id: str, name: str) -> Json:
        return await self._loop.run(flows.json(self._link, calls.claim(project_id, name)))

    async def delete_claim(self, project_id: str, name: str) -> None:
        await self._loop.run(flows.done(self._link, calls.delete_claim(project_id, name)))

    async def clusters(self) -> Items:
        answer: Items = await self._loop.run(flows.answer(self._link, calls.clusters()))
        return answer

    async def nodes(self, cluster_id: str | None = None) -> Items:
        return await self._loop.run(flows.nodes(self._link, cluster_id))

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
        flow = flows.logs(
            self._link,
            workload_id,
            pod,
            follow=follow,
            tail_lines=tail_lines,
            since_seconds=since_seconds,
            timestamps=timestamps,
        )
        async for line in self._loop.iterate(flow):
            yield line

    async def wait(
        self,
        workload_id: WorkloadId,
        *,
        phase: str | Collection[str],
        timeout: float,
        every: float = 0.5,
    ) -> Json:
        return await self._loop.run(
            flows.wait(self._link, workload_id, phase=phase, timeout=timeout, every=every)
        )

    async def _send(self, call: calls.Call) -> httpx.Response:
        return await self._loop.run(flows.send(self._link, call))


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
