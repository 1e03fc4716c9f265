"""`lockstep render REQUEST.json`: what a workload would run, without running it — the pod
launches of the local runtime or the Kubernetes manifests — as the server renders it
(`POST /api/v1/workloads/distributed?dryRun=true`), after the same checks as a submission."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from lockstep.cli.connection import USAGE, connected, fail, project_id


def render(
    request_file: Annotated[Path, typer.Argument(help="A creation request (JSON).")],
    project: Annotated[
        str | None, typer.Option("-p", "--project", help="Project name or id (else the file's).")
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option("--runtime", help="local or kubernetes (else the server's runtime)."),
    ] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml or json.")] = "yaml",
) -> None:
    """Print what a workload would run: the local runtime's pod launches, or the Kubernetes
    manifests (one YAML document each, ready for kubectl). Nothing is stored or started."""
    if output not in ("yaml", "json"):
        raise fail(f"-o takes yaml or json, not {output!r}", USAGE)
    try:
        request: dict[str, Any] = json.loads(request_file.read_text())
    except (OSError, ValueError) as error:
        raise fail(f"{request_file}: {error}", USAGE) from error
    with connected() as client:
        request["projectId"] = project_id(client, project or request.get("projectId"))
        request.setdefault("clusterId", client.clusters()[0]["uuid"])
        rendered = client.render(request, runtime=runtime)
    if output == "json":
        typer.echo(json.dumps(rendered, indent=2))
        return
    import yaml

    documents = rendered.get("manifests", [rendered])
    typer.echo(yaml.safe_dump_all(documents, sort_keys=False).rstrip())
