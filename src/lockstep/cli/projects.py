"""`lockstep project list`: the projects the caller can see."""

from __future__ import annotations

from typing import Annotated

import typer

from lockstep.cli.connection import connected
from lockstep.cli.output import structured, table

app = typer.Typer(no_args_is_help=True, help="Projects.")


@app.command("list")
def list_projects(
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
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
