"""`lockstep department create|list|set-quota|delete`: departments and their quotas."""

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
    merged,
)

if TYPE_CHECKING:
    from lockstep.sdk import Client

app = command_group(no_args_is_help=True, help="Departments.")
Name = Annotated[str, typer.Argument(help="The department's name.")]
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]


def _named(client: Client, name: str) -> dict[str, Any]:
    for department in client.departments():
        if department["name"] == name:
            return department
    raise fail(f"no department is named {name!r}", NOT_FOUND)


def _gpu(department: dict[str, Any]) -> str:
    entries = department.get("resources") or []
    return ", ".join(
        f"{(e.get('nodePool') or {}).get('name', '*')}: {(e.get('gpu') or {}).get('deserved', 0):g}"
        for e in entries
    )


@app.command("list")
def list_departments(output: Output = None) -> None:
    """The departments you can see, with their GPU deserved share per pool."""
    with connected() as client:
        found = client.departments()
    if structured(found, output):
        return
    table(["ID", "NAME", "GPU DESERVED"], [[str(d["id"]), d["name"], _gpu(d)] for d in found])


@app.command("create")
def create(
    name: Name,
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
    """Create a department with a quota in one node pool."""
    options = QuotaOptions(
        pool,
        (gpu_deserved, gpu_limit, gpu_weight),
        (cpu_deserved, cpu_limit, cpu_weight),
        (memory_deserved, memory_limit, memory_weight),
    )
    with connected() as client:
        created = client.create_department(
            {
                "name": name,
                "clusterId": str(client.clusters()[0]["uuid"]),
                "resources": [options.entry()],
            }
        )
    typer.echo(f"department {created['name']} created (id {created['id']})")


@app.command("set-quota")
def set_quota(
    name: Name,
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
    """Change a department's quota in one node pool (what is not given stays)."""
    options = QuotaOptions(
        pool,
        (gpu_deserved, gpu_limit, gpu_weight),
        (cpu_deserved, cpu_limit, cpu_weight),
        (memory_deserved, memory_limit, memory_weight),
    )
    with connected() as client:
        department = _named(client, name)
        resources = merged(department.get("resources") or [], options.entry())
        client.update_department(str(department["id"]), {"resources": resources})
    typer.echo(f"department {name}: quota in pool {pool} set")


@app.command("delete")
def delete(name: Name) -> None:
    """Delete a department (refused while it has projects)."""
    with connected() as client:
        client.delete_department(str(_named(client, name)["id"]))
    typer.echo(f"department {name} deleted")
