"""`lockstep training`: submit distributed workloads (one group per framework, with the Run:ai
CLI's flags: `lockstep training pytorch submit`) and single-node trainings (`lockstep training
submit`, see single_pod.py), and list, describe, follow the logs of, suspend, resume and
delete either, against the server of the active context (see contexts.py)."""

from collections.abc import Callable
from typing import Annotated

import typer

from lockstep.cli import flags, submission
from lockstep.cli.connection import USAGE, connected, fail, project_id
from lockstep.cli.flags import Output, Project
from lockstep.cli.groups import command_group, described_only
from lockstep.cli.output import structured
from lockstep.cli.requests import FRAMEWORKS, BadFlag, MasterOptions, SubmitOptions, build
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
    def submit(
        name: flags.Name,
        command: flags.Command = None,
        *,
        project: Project = None,
        image: flags.Image = None,
        workers: Annotated[int | None, typer.Option("--workers", help="Number of workers.")] = None,
        environment: flags.Environment = None,
        working_dir: flags.WorkingDir = None,
        gpu_devices_request: flags.GpuDevices = None,
        gpu_portion_request: flags.GpuPortion = None,
        gpu_memory_request: flags.GpuMemory = None,
        cpu_core_request: flags.CpuCoreRequest = None,
        cpu_core_limit: flags.CpuCoreLimit = None,
        cpu_memory_request: flags.CpuMemoryRequest = None,
        cpu_memory_limit: flags.CpuMemoryLimit = None,
        node_pools: flags.NodePools = None,
        toleration: flags.Tolerations = None,
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
        label: flags.Labels = None,
        annotation: flags.Annotations = None,
        host_path: flags.HostPaths = None,
        existing_pvc: flags.ExistingPvcs = None,
        new_pvc: flags.NewPvcs = None,
        git_sync: flags.GitSyncs = None,
        name_prefix: flags.NamePrefix = False,
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
        request_file: flags.RequestFile = None,
        dry_run: flags.DryRun = False,
        wait: flags.Wait = False,
        wait_for_completion: flags.WaitForCompletion = False,
        follow: flags.Follow = False,
        output: Output = None,
    ) -> None:
        base = submission.request_file(request_file)
        with connected() as client:
            options = SubmitOptions(
                name=name,
                framework=framework,
                project_id=project_id(client, project or base.get("projectId")),
                cluster_id=submission.cluster_id(client, base),
                image=image,
                workers=workers,
                command=command or (),
                environment=environment or (),
                working_dir=working_dir,
                gpu_devices=gpu_devices_request,
                gpu_portion=gpu_portion_request,
                gpu_memory=gpu_memory_request,
                cpu_core_request=cpu_core_request,
                cpu_core_limit=cpu_core_limit,
                cpu_memory_request=cpu_memory_request,
                cpu_memory_limit=cpu_memory_limit,
                node_pools=node_pools or (),
                tolerations=toleration or (),
                backoff_limit=backoff_limit,
                clean_pod_policy=clean_pod_policy,
                min_replicas=min_replicas,
                max_replicas=max_replicas,
                slots_per_worker=slots_per_worker,
                labels=label or (),
                annotations=annotation or (),
                name_prefix=name_prefix,
                master=MasterOptions(
                    command=master_command,
                    args=master_args,
                    environment=master_environment or (),
                    gpu_devices=master_gpu_devices_request,
                    gpu_portion=master_gpu_portion_request,
                ),
                no_master=no_master,
                storage=submission.storage_flags(
                    host_paths=host_path,
                    existing_pvcs=existing_pvc,
                    new_pvcs=new_pvc,
                    git_syncs=git_sync,
                ),
                base=base,
            )
            try:
                body = build(options)
            except BadFlag as error:
                raise fail(str(error), USAGE) from error
            if dry_run:
                structured(body, output or "json")
                return
            created = client.create_distributed(body)
            submission.after_submit(
                client,
                created.model_dump(mode="json", by_alias=True),
                noun="workload",
                output=output,
                wait=wait,
                wait_for_completion=wait_for_completion,
                follow=follow,
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
