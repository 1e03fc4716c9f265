"""What every `submit` does around its own request (`submit`): read `-f`'s body, find the
project and cluster, turn the storage flags into `spec.storage`, print the request on
`--dry-run` or send it, and once the workload is stored print it and wait as `--wait`,
`--wait-for-completion` and `--follow` ask (see progress.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from lockstep.cli.connection import USAGE, connected, fail, project_id
from lockstep.cli.output import structured
from lockstep.cli.progress import Restarts, outcome, until_ended, until_running
from lockstep.cli.requests import BadFlag
from lockstep.cli.storage import storage
from lockstep.cli.workloads import follow_all

if TYPE_CHECKING:
    from pydantic import BaseModel

    from lockstep.cli.submit_flags import SubmitFlags
    from lockstep.sdk import Client


def submit(
    flags: SubmitFlags,
    *,
    noun: str,
    request: Callable[[dict[str, Any]], dict[str, Any]],
    create: Callable[[Client, dict[str, Any]], BaseModel],
) -> None:
    """Submit a workload: `request` builds its body from the `PodOptions` fields (requests.py)
    that `flags` give (a `BadFlag` ends the command, usage), `create` sends it; `noun` names
    its kind in what is printed."""
    base = request_file(flags.request_file)
    with connected() as client:
        pod = flags.pod_fields(
            project_id=project_id(client, flags.project or base.get("projectId")),
            cluster_id=cluster_id(client, base),
            storage=storage_flags(
                host_paths=flags.host_path,
                existing_pvcs=flags.existing_pvc,
                new_pvcs=flags.new_pvc,
                git_syncs=flags.git_sync,
            ),
            base=base,
        )
        try:
            body = request(pod)
        except BadFlag as error:
            raise fail(str(error), USAGE) from error
        if flags.dry_run:
            structured(body, flags.output or "json")
            return
        created = create(client, body)
        after_submit(
            client,
            created.model_dump(mode="json", by_alias=True),
            noun=noun,
            output=flags.output,
            wait=flags.wait,
            wait_for_completion=flags.wait_for_completion,
            follow=flags.follow,
        )


def request_file(path: Path | None) -> dict[str, Any]:
    """`-f`'s request body (none without it)."""
    if path is None:
        return {}
    import json

    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise fail(f"-f {path}: {error}", USAGE) from error
    if not isinstance(body, dict):
        raise fail(f"-f {path}: a request body is a JSON object", USAGE)
    return body


def cluster_id(client: Client, base: dict[str, Any]) -> str:
    """The file's cluster, else the server's (first) one."""
    return str(base.get("clusterId") or client.clusters()[0]["uuid"])


def storage_flags(
    *,
    host_paths: list[str] | None,
    existing_pvcs: list[str] | None,
    new_pvcs: list[str] | None,
    git_syncs: list[str] | None,
) -> dict[str, list[dict[str, Any]]]:
    """`spec.storage` from the storage flags; a bad value ends the command (usage)."""
    try:
        return storage(
            host_paths=host_paths or (),
            existing_pvcs=existing_pvcs or (),
            new_pvcs=new_pvcs or (),
            git_syncs=git_syncs or (),
        )
    except BadFlag as error:
        raise fail(str(error), USAGE) from error


def after_submit(
    client: Client,
    created: dict[str, Any],
    *,
    noun: str,
    output: str | None,
    wait: bool,
    wait_for_completion: bool,
    follow: bool,
) -> None:
    """Print the stored workload (`created`, its kind's response), then wait as asked."""
    workload_id = str(created["workloadId"])
    if not structured(created, output):
        typer.echo(f"{noun} {created['name']} submitted ({workload_id})")
    restarts = Restarts(client, workload_id)
    if (wait or wait_for_completion) and follow:
        until_running(client, workload_id, restarts)
        follow_all(client, workload_id)
        outcome(client, workload_id, restarts)
    elif wait_for_completion:
        until_ended(client, workload_id, restarts)
    elif wait:
        until_running(client, workload_id, restarts)
