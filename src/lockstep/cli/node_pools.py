"""`lockstep node-pool list`: the node pools, their nodes, capacity and what is allocated."""

from __future__ import annotations

from typing import Annotated

import typer

from lockstep.cli.connection import connected
from lockstep.cli.groups import command_group
from lockstep.cli.output import structured, table

app = command_group(no_args_is_help=True, help="Node pools.")
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]


@app.command("list")
def list_pools(output: Output = None) -> None:
    """The node pools, with their nodes and GPUs allocated of their capacity."""
    with connected() as client:
        found = client.node_pools()
    if structured(found, output):
        return
    table(
        ["ID", "NAME", "PHASE", "NODES", "GPUS", "CPU", "MEMORY"],
        [
            [
                str(p["id"]),
                p["name"],
                p["phase"],
                str(len(p["status"]["nodes"])),
                f"{p['allocated']['gpus']}/{p['capacity']['gpus']}",
                f"{p['allocated']['cpuCores']}/{p['capacity']['cpuCores']}",
                f"{p['allocated']['memory']}/{p['capacity']['memory']}",
            ]
            for p in found
        ],
    )
