"""`lockstep volume create|list|delete`: a project's volumes — the claims that workloads mount
as `pvc` storage (`--existing-pvc claimname=NAME,…`) — through the API of the active context's
server (see contexts.py). Exit statuses are those of every command (connection.py)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from lockstep.cli.connection import connected, project_id
from lockstep.cli.groups import command_group
from lockstep.cli.output import structured, table

app = command_group(no_args_is_help=True, help="Manage the volumes (claims) of a project.")

Name = Annotated[str, typer.Argument(help="A DNS-1123 label: lower-case letters, digits, '-'.")]
Project = Annotated[str | None, typer.Option("-p", "--project", help="Project name or id.")]
Size = Annotated[
    str | None,
    typer.Option("--size", help="A Kubernetes quantity such as 10Gi; usage beyond it is shown."),
]
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON (same as -o json).")]

OVER_SIZE = "OverSize"
_UNITS = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@app.command("create")
def create(name: Name, project: Project = None, size: Size = None) -> None:
    """Create an empty volume in the project."""
    with connected() as client:
        chosen = project_id(client, project)
        created = client.create_claim(chosen, name, size=size)
    sized = "" if created.get("size") is None else f" of {readable(created['size'])}"
    typer.echo(f"volume {name}{sized} created in project {chosen}")


@app.command("list")
def list_volumes(project: Project = None, as_json: AsJson = False, output: Output = None) -> None:
    """List the project's volumes: size, what each uses, and whether it is over its size."""
    with connected() as client:
        claims = client.claims(project_id(client, project))
    if structured(claims, "json" if as_json else output):
        return
    table(["NAME", "SIZE", "USED", "STATUS"], [_row(claim) for claim in claims])


@app.command("delete")
def delete(name: Name, project: Project = None) -> None:
    """Delete a volume and every file in it (refused while a running workload mounts it)."""
    with connected() as client:
        chosen = project_id(client, project)
        client.delete_claim(chosen, name)
    typer.echo(f"volume {name} deleted from project {chosen}")


def _row(claim: dict[str, Any]) -> list[str]:
    over = any(c.get("type") == OVER_SIZE for c in claim.get("conditions") or [])
    size = claim.get("size")
    return [
        str(claim["name"]),
        "-" if size is None else readable(str(size)),
        readable(str(claim["used"])),
        OVER_SIZE if over else "Ready",
    ]


def readable(quantity: str) -> str:
    """A quantity of bytes for people: in the largest binary unit it reaches, to one decimal
    (`12Gi`, `1.5Mi`, `512`); as it is when it is not a quantity."""
    from lockstep.domain.quantities import parse_quantity

    try:
        count = int(parse_quantity(quantity))
    except ValueError:
        return quantity
    value, unit = float(count), ""
    for candidate in _UNITS:
        if value < 1024:
            break
        value, unit = value / 1024, candidate
    return f"{value:.1f}".removesuffix(".0") + unit if unit else str(count)
