"""`lockstep training`: submit distributed workloads (one group per framework, with the Run:ai
CLI's flags: `lockstep training pytorch submit`) and single-node trainings (`lockstep training
submit`, see single_pod.py), and list, describe, follow the logs of, suspend, resume and
delete either, against the server of the active context (see contexts.py)."""

from collections.abc import Callable
from typing import Annotated, Any

import typer

from lockstep.cli import flags, submission
from lockstep.cli.groups import command_group, described_only
from lockstep.cli.requests import FRAMEWORKS, MasterOptions, SubmitOptions, build
from lockstep.cli.submit_flags import SubmitFlags, with_submit_flags
from lockstep.cli.workloads import Kinds, add_commands

app = command_group(
    no_args_is_help=True,
    help="Submit and manage training workloads: distributed ones and single-node trainings.",
)

FRAMEWORK_NAMES = {
    "pytorch": "PyTorch",
    "mpi": "MPI",
    "tf": "TensorFlow",
    "xgboost": "XGBoost",
    "jax": "JAX",
}
FRAMEWORK_ALIASES = {"tensorflow": "tf"}
"""Other names of a framework group: `lockstep training tensorflow submit` is `… tf submit`."""
TRAINING_SUBMIT_HELP = "Submit a single-node training (one pod, or a Job's parallel pods)."


# --- submit -----------------------------------------------------------------------------


def _submit_command(framework: str) -> Callable[..., None]:
    @with_submit_flags(after={"backoff_limit": "toleration", "no_master": "name_prefix"})
    def submit(
        given: SubmitFlags,
        *,
        workers: Annotated[int | None, typer.Option("--workers", help="Number of workers.")] = None,
        backoff_limit: flags.BackoffLimit = None,
        clean_pod_policy: Annotated[str | None, typer.Option("--clean-pod-policy")] = None,
        min_replicas: Annotated[
            int | None,
            typer.Option("--min-replicas", help="PyTorch, elastic: the fewest worker pods."),
        ] = None,
        max_replicas: Annotated[
            int | None,
            typer.Option("--max-replicas", help="PyTorch, elastic: the most worker pods."),
        ] = None,
        slots_per_worker: Annotated[
            int | None, typer.Option("--slots-per-worker", help="MPI.")
        ] = None,
        no_master: Annotated[
            bool,
            typer.Option(
                "--no-master",
                help="No pod beyond the workers: --workers counts every pod, rank 0 coordinates.",
            ),
        ] = False,
        master_command: Annotated[
            str | None, typer.Option("--master-command", help="The master's own command.")
        ] = None,
        master_args: Annotated[
            str | None, typer.Option("--master-args", help="The master's own arguments.")
        ] = None,
        master_environment: Annotated[
            list[str] | None,
            typer.Option("--master-environment", help="KEY=VALUE for the master, repeatable."),
        ] = None,
        master_gpu_devices_request: Annotated[
            int | None, typer.Option("--master-gpu-devices-request")
        ] = None,
        master_gpu_portion_request: Annotated[
            float | None, typer.Option("--master-gpu-portion-request")
        ] = None,
    ) -> None:
        def request(pod: dict[str, Any]) -> dict[str, Any]:
            return build(
                SubmitOptions(
                    **pod,
                    framework=framework,
                    workers=workers,
                    backoff_limit=backoff_limit,
                    clean_pod_policy=clean_pod_policy,
                    min_replicas=min_replicas,
                    max_replicas=max_replicas,
                    slots_per_worker=slots_per_worker,
                    master=MasterOptions(
                        command=master_command,
                        args=master_args,
                        environment=master_environment or (),
                        gpu_devices=master_gpu_devices_request,
                        gpu_portion=master_gpu_portion_request,
                    ),
                    no_master=no_master,
                )
            )

        submission.submit(
            given,
            noun="workload",
            request=request,
            create=lambda client, body: client.create_distributed(body),
        )

    submit.__doc__ = f"Submit a distributed {FRAMEWORK_NAMES[framework]} workload."
    return submit


def prepare(words: list[str]) -> None:
    """Add `submit` and the framework groups: the one `words` name with its submit command
    (forty options each, slow to build), the others by their description only (see
    cli/main.py)."""
    wanted = words[0] if words else None
    if wanted == "submit":
        from lockstep.cli.single_pod import submit_training

        app.command("submit", help=TRAINING_SUBMIT_HELP)(submit_training)
    else:
        app.command("submit", help=TRAINING_SUBMIT_HELP)(described_only)
    wanted = FRAMEWORK_ALIASES.get(wanted or "", wanted)
    for framework in FRAMEWORKS:
        aliases = [alias for alias, name in FRAMEWORK_ALIASES.items() if name == framework]
        also = f" (also: {', '.join(aliases)})" if aliases else ""
        description = f"{FRAMEWORK_NAMES[framework]} workloads{also}."
        group = command_group(no_args_is_help=True, help=description)
        if framework == wanted:
            group.command("submit")(_submit_command(framework))
        app.add_typer(group, name=framework, help=description)
        for alias in aliases:
            app.add_typer(group, name=alias, help=f"The same as {framework}.", hidden=True)


# --- list, describe, logs, suspend, resume, delete ---------------------------------------

add_commands(app, Kinds(frozenset({"Distributed", "Training"}), "workload"))
