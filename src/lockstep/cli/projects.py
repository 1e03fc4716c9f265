"""`lockstep project list` and `lockstep cluster nodes`: what the caller can see of the
organization and of the cluster."""

from typing import Annotated

import typer

from lockstep.cli.connection import connected
from lockstep.cli.output import structured, table

app = typer.Typer(no_args_is_help=True, help="Projects.")
cluster_app = typer.Typer(no_args_is_help=True, help="The cluster and its nodes.")
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
