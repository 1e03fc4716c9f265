"""`lockstep training submit` and `lockstep workspace submit`: a single-node training (one pod,
or a Job's `--parallelism` pods at a time until `--completions` have succeeded) and a workspace
(one interactive pod, its `--port`s exposed), with the flags of the framework submits that
apply to one pod."""

from typing import Annotated, Any

import typer

from lockstep.cli import flags, submission
from lockstep.cli.requests import (
    TrainingOptions,
    WorkspaceOptions,
    build_training,
    build_workspace,
)
from lockstep.cli.submit_flags import SubmitFlags, with_submit_flags


@with_submit_flags()
def submit_training(
    given: SubmitFlags,
    *,
    parallelism: Annotated[
        int | None, typer.Option("--parallelism", help="How many pods run at once.")
    ] = None,
    completions: Annotated[
        int | None,
        typer.Option("--completions", help="How many pods must succeed (each its own index)."),
    ] = None,
    backoff_limit: flags.BackoffLimit = None,
) -> None:
    """Submit a single-node training: one pod, or with --parallelism and --completions a Job's
    pods, N at a time until M have succeeded."""

    def request(pod: dict[str, Any]) -> dict[str, Any]:
        return build_training(
            TrainingOptions(
                **pod,
                backoff_limit=backoff_limit,
                completions=completions,
                parallelism=parallelism,
            )
        )

    submission.submit(
        given,
        noun="training",
        request=request,
        create=lambda client, body: client.trainings.create(body),
    )


@with_submit_flags()
def submit_workspace(
    given: SubmitFlags,
    *,
    port: Annotated[
        list[str] | None,
        typer.Option(
            "--port",
            help="CONTAINER[:EXTERNAL]: a container port to expose, and the machine's port to "
            "reach it at (one is chosen without it); repeatable.",
        ),
    ] = None,
) -> None:
    """Submit a workspace: one pod for interactive work, its ports exposed."""

    def request(pod: dict[str, Any]) -> dict[str, Any]:
        return build_workspace(WorkspaceOptions(**pod, ports=port or ()))

    submission.submit(
        given,
        noun="workspace",
        request=request,
        create=lambda client, body: client.workspaces.create(body),
    )
