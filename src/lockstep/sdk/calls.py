"""Every call of the API the SDK makes, described once as data (method, path, query, body,
whether it may be retried): the sync and the async client only send them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote
from uuid import UUID

WorkloadId = str | UUID
"""A workload's id, as the API returns it in JSON (str) or in a model (UUID)."""

WORKLOADS = "/api/v1/workloads"
DISTRIBUTED = "/api/v1/workloads/distributed"
TERMINAL_PHASES = frozenset({"Completed", "Failed"})


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    path: str
    params: Mapping[str, str | int] = field(default_factory=dict)
    body: Any = None
    idempotent: bool = True
    """Safe to send again when no answer came (or the server was unavailable)."""


class WireForm(Protocol):
    """A request model of the server's (`lockstep.schemas`), which knows its JSON form."""

    def to_wire(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of workload's collection under /api/v1/workloads: the five calls every kind
    answers (create, or with `render` the dry run; get, delete, suspend, resume)."""

    type: str
    """The kind as the generic workload list's `type` names it."""
    path: str

    def create(self, request: WireForm | Mapping[str, Any]) -> Call:
        return Call("POST", self.path, body=_wire(request), idempotent=False)

    def render(self, request: WireForm | Mapping[str, Any], *, runtime: str | None) -> Call:
        """The dry run: checked like a creation, nothing stored, so it may be sent again."""
        params: dict[str, str | int] = {"dryRun": "true"}
        if runtime is not None:
            params["runtime"] = runtime
        return Call("POST", self.path, params=params, body=_wire(request))

    def get(self, workload_id: WorkloadId) -> Call:
        return Call("GET", f"{self.path}/{workload_id}")

    def delete(self, workload_id: WorkloadId) -> Call:
        return Call("DELETE", f"{self.path}/{workload_id}")

    def suspend(self, workload_id: WorkloadId) -> Call:
        return Call("POST", f"{self.path}/{workload_id}/suspend")

    def resume(self, workload_id: WorkloadId) -> Call:
        return Call("POST", f"{self.path}/{workload_id}/resume")


DISTRIBUTED_KIND = Kind("Distributed", DISTRIBUTED)
TRAININGS = Kind("Training", f"{WORKLOADS}/trainings")
WORKSPACES = Kind("Workspace", f"{WORKLOADS}/workspaces")
KINDS = {kind.type: kind for kind in (DISTRIBUTED_KIND, TRAININGS, WORKSPACES)}
"""Each kind by its `type` in the generic workload list."""


def _wire(request: WireForm | Mapping[str, Any]) -> dict[str, Any]:
    return dict(request) if isinstance(request, Mapping) else request.to_wire()


def get(workload_id: WorkloadId) -> Call:
    """The workload of any kind, as the generic list shows it."""
    return Call("GET", f"{WORKLOADS}/{workload_id}")


def list_page(
    *,
    offset: int,
    limit: int,
    filter_by: list[str],
    sort_by: str | None,
    sort_order: str | None,
    search: str | None,
    deleted: bool,
) -> Call:
    params: dict[str, str | int] = {"offset": offset, "limit": limit}
    if filter_by:
        params["filterBy"] = ",".join(filter_by)
    if sort_by:
        params["sortBy"] = sort_by
    if sort_order:
        params["sortOrder"] = sort_order
    if search:
        params["search"] = search
    if deleted:
        params["deleted"] = "true"
    return Call("GET", WORKLOADS, params=params)


def sub_page(workload_id: WorkloadId, what: str, *, offset: int, limit: int) -> Call:
    """A page of a workload's `pods`, `events` or `history`."""
    return Call(
        "GET", f"{WORKLOADS}/{workload_id}/{what}", params={"offset": offset, "limit": limit}
    )


def logs(
    workload_id: WorkloadId,
    pod: str,
    *,
    follow: bool,
    tail_lines: int | None,
    since_seconds: int | None,
    timestamps: bool,
) -> Call:
    params: dict[str, str | int] = {}
    if follow:
        params["follow"] = "true"
    if tail_lines is not None:
        params["tailLines"] = tail_lines
    if since_seconds is not None:
        params["sinceSeconds"] = since_seconds
    if timestamps:
        params["timestamps"] = "true"
    return Call("GET", f"{WORKLOADS}/{workload_id}/pods/{pod}/logs", params=params)


def projects() -> Call:
    return Call("GET", "/api/v1/org-unit/projects")


def claims_path(project_id: str) -> str:
    """A project's claims (pvc volumes of the local runtime): a lockstep extension."""
    return f"/api/v1/org-unit/projects/{project_id}/claims"


def create_claim(project_id: str, name: str, *, size: str | None) -> Call:
    body: dict[str, str] = {"name": name}
    if size is not None:
        body["size"] = size
    return Call("POST", claims_path(project_id), body=body, idempotent=False)


def claims(project_id: str) -> Call:
    return Call("GET", claims_path(project_id))


def claim(project_id: str, name: str) -> Call:
    return Call("GET", f"{claims_path(project_id)}/{quote(name, safe='')}")


def delete_claim(project_id: str, name: str) -> Call:
    return Call("DELETE", f"{claims_path(project_id)}/{quote(name, safe='')}")


def clusters() -> Call:
    return Call("GET", "/api/v1/clusters")


def queue(project_id: str | None = None) -> Call:
    """The scheduler's queue per project (a lockstep extension)."""
    params = {} if project_id is None else {"projectId": project_id}
    return Call("GET", "/api/v1/scheduling/queue", params=params)


def nodes(cluster_id: str) -> Call:
    return Call("GET", f"/api/v1/clusters/{cluster_id}/nodes")


ITEMS_KEY = {"pods": "pods", "events": "events", "history": "records"}
"""The key under which each sub-resource's page holds its items."""


PROJECTS = "/api/v1/org-unit/projects"
DEPARTMENTS = "/api/v1/org-unit/departments"


def create_project(body: Mapping[str, Any]) -> Call:
    return Call("POST", PROJECTS, body=dict(body), idempotent=False)


def set_project_resources(project_id: str, resources: list[Any], *, patch: bool) -> Call:
    return Call("PATCH" if patch else "PUT", f"{PROJECTS}/{project_id}/resources", body=resources)


def delete_project(project_id: str) -> Call:
    return Call("DELETE", f"{PROJECTS}/{project_id}")


def departments() -> Call:
    return Call("GET", DEPARTMENTS)


def create_department(body: Mapping[str, Any]) -> Call:
    return Call("POST", DEPARTMENTS, body=dict(body), idempotent=False)


def update_department(department_id: str, body: Mapping[str, Any]) -> Call:
    return Call("PUT", f"{DEPARTMENTS}/{department_id}", body=dict(body))


def delete_department(department_id: str) -> Call:
    return Call("DELETE", f"{DEPARTMENTS}/{department_id}")


def node_pools() -> Call:
    return Call("GET", "/api/v1/node-pools")
