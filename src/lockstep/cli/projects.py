"""`lockstep project list|create|set-quota|delete` and `lockstep cluster nodes`: the projects
the caller can see and their quotas, and the cluster's nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from lockstep.cli.connection import NOT_FOUND, connected, fail
from lockstep.cli.groups import command_group
from lockstep.cli.output import structured, table
from lockstep.cli.quota_options import (
    DEFAULT_POOL,
    CpuDeserved,
    CpuLimit,
    CpuWeight,
    GpuDeserved,
    GpuLimit,
    GpuWeight,
    MemoryDeserved,
    MemoryLimit,
    MemoryWeight,
    Pool,
    QuotaOptions,
)

if TYPE_CHECKING:
    from lockstep.sdk import Client

app = command_group(no_args_is_help=True, help="Projects.")
cluster_app = command_group(no_args_is_help=True, help="The cluster and its nodes.")
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command("list")
def list_projects(output: Output = None, as_json: AsJson = False) -> None:
    """List the projects you can see."""
    with connected() as client:
        projects = client.projects()
    if structured(projects, "json" if as_json else output):
        return
    table(
        ["ID", "NAME", "DEPARTMENT"],
        [
            [str(p["id"]), p["name"], str(p.get("parentName") or p.get("parentId") or "")]
            for p in projects
        ],
    )


def _named(client: Client, name: str) -> dict[str, Any]:
    for project in client.projects():
        if project["name"] == name:
            return project
    raise fail(f"no project is named {name!r}", NOT_FOUND)


def _department_id(client: Client, name: str) -> str:
    for department in client.departments():
        if department["name"] == name or str(department["id"]) == name:
            return str(department["id"])
    raise fail(f"no department is named {name!r}", NOT_FOUND)


@app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="The project's name.")],
    *,
    department: Annotated[
        str | None, typer.Option("--department", help="Its department (default: default).")
    ] = None,
    pool: Pool = DEFAULT_POOL,
    gpu_deserved: GpuDeserved = None,
    gpu_limit: GpuLimit = None,
    gpu_weight: GpuWeight = None,
    cpu_deserved: CpuDeserved = None,
    cpu_limit: CpuLimit = None,
    cpu_weight: CpuWeight = None,
    memory_deserved: MemoryDeserved = None,
    memory_limit: MemoryLimit = None,
    memory_weight: MemoryWeight = None,
) -> None:
    """Create a project with a quota in one node pool."""
    options = QuotaOptions(
        pool,
        (gpu_deserved, gpu_limit, gpu_weight),
        (cpu_deserved, cpu_limit, cpu_weight),
        (memory_deserved, memory_limit, memory_weight),
    )
    with connected() as client:
        body: dict[str, Any] = {
            "name": name,
            "clusterId": str(client.clusters()[0]["uuid"]),
            "resources": [options.entry()],
        }
        if department is not None:
            body["parentId"] = _department_id(client, department)
        created = client.create_project(body)
    typer.echo(f"project {created['name']} created (id {created['id']})")


@app.command("set-quota")
def set_quota(
    name: Annotated[str, typer.Argument(help="The project's name.")],
    *,
    pool: Pool = DEFAULT_POOL,
    gpu_deserved: GpuDeserved = None,
    gpu_limit: GpuLimit = None,
    gpu_weight: GpuWeight = None,
    cpu_deserved: CpuDeserved = None,
    cpu_limit: CpuLimit = None,
    cpu_weight: CpuWeight = None,
    memory_deserved: MemoryDeserved = None,
    memory_limit: MemoryLimit = None,
    memory_weight: MemoryWeight = None,
) -> None:
    """Change a project's quota in one node pool (what is not given stays); it applies at the
    next scheduling cycle."""
    options = QuotaOptions(
        pool,
        (gpu_deserved, gpu_limit, gpu_weight),
        (cpu_deserved, cpu_limit, cpu_weight),
        (memory_deserved, memory_limit, memory_weight),
    )
    with connected() as client:
        project = _named(client, name)
        client.set_project_resources(str(project["id"]), [options.entry()], patch=True)
    typer.echo(f"project {name}: quota in pool {pool} set")


@app.command("delete")
def delete(name: Annotated[str, typer.Argument(help="The project's name.")]) -> None:
    """Delete a project (refused while it has workloads)."""
    with connected() as client:
        client.delete_project(str(_named(client, name)["id"]))
    typer.echo(f"project {name} deleted")


@cluster_app.command("nodes")
def nodes(output: Output = None, as_json: AsJson = False) -> None:
    """The nodes, their node pools, and what is held of their CPU, memory and GPUs."""
    with connected() as client:
        found = client.nodes()
    if structured(found, "json" if as_json else output):
        return

    def held(kind: str, node: dict[str, object]) -> str:
        allocated, capacity = node["allocated"], node["capacity"]
        assert isinstance(allocated, dict) and isinstance(capacity, dict)
        return f"{allocated[kind]}/{capacity[kind]}"

    table(
        ["NAME", "POOL", "CPU", "MEMORY", "GPUS", "STATUS"],
        [
            [
                str(n["name"]),
                str(n["nodePool"]),
                held("cpuCores", n),
                held("memory", n),
                held("gpus", n),
                str(n["status"]),
            ]
            for n in found
        ],
    )
