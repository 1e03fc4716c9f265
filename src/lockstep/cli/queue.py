"""`lockstep queue [-p PROJECT]`: per project and node pool its deserved share, fair share,
allocation and request (as the last scheduling cycle found them), then its waiting workloads
in the order they will be admitted, each with why it waits."""

from __future__ import annotations

from typing import Any

import typer

from lockstep.cli.connection import connected, project_id
from lockstep.cli.output import structured, table

FIGURES = ("deserved", "fairShare", "allocated", "requested")


def show(project: str | None, output: str | None, as_json: bool) -> None:
    """Shares and waiting workloads, per project (every one you can see, or the one named)."""
    with connected() as client:
        chosen = None if project is None else project_id(client, project)
        queues = client.queue(chosen)
    if structured(queues, "json" if as_json else output):
        return
    table(
        ["PROJECT", "POOL", "RESOURCE", "DESERVED", "FAIR SHARE", "ALLOCATED", "REQUESTED"],
        [
            [q["projectName"], pool["nodePool"], resource, *(_figure(resource, f) for f in row)]
            for q in queues
            for pool in q["nodePools"]
            for resource, row in _shown(pool)
        ],
    )
    waiting = [(q["projectName"], w) for q in queues for w in q["waiting"]]
    if not waiting:
        typer.echo("\nno workload waits")
        return
    typer.echo("")
    table(
        ["PROJECT", "#", "WORKLOAD", "PHASE", "WHY"],
        [
            [
                name,
                "parked" if w["position"] is None else str(w["position"]),
                w["name"],
                w["phase"],
                w["phaseMessage"] or "waiting to be scheduled",
            ]
            for name, w in waiting
        ],
    )


def _shown(pool: dict[str, Any]) -> list[tuple[str, list[float]]]:
    """GPUs always; CPU and memory when there is a quota or a request of them."""
    rows = []
    for resource in ("gpu", "cpu", "memory"):
        figures = pool.get(resource)
        if not figures:
            continue
        row = [float(figures.get(f, 0)) for f in FIGURES]
        if resource == "gpu" or any(row):
            rows.append((resource, row))
    return rows


def _figure(resource: str, value: float) -> str:
    if value < 0:
        return "unlimited"
    if resource == "cpu":
        return f"{value / 1000:g}"  # millicores, shown in cores
    if resource == "memory":
        from lockstep.domain.quantities import binary_quantity

        return binary_quantity(int(value))
    return f"{value:g}"
