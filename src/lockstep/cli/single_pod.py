"""`lockstep training submit` and `lockstep workspace submit`: a single-node training (one pod,
or a Job's `--parallelism` pods at a time until `--completions` have succeeded) and a workspace
(one interactive pod, its `--port`s exposed), with the flags of the framework submits that
apply to one pod."""

from typing import Annotated, Any

import typer

from lockstep.cli import flags, submission
from lockstep.cli.connection import USAGE, connected, fail, project_id
from lockstep.cli.flags import Output, Project
from lockstep.cli.output import structured
from lockstep.cli.requests import (
    BadFlag,
    TrainingOptions,
    WorkspaceOptions,
    build_training,
    build_workspace,
)


def submit_training(
    name: flags.Name,
    command: flags.Command = None,
    *,
    project: Project = None,
    image: flags.Image = None,
    parallelism: Annotated[
        int | None, typer.Option("--parallelism", help="How many pods run at once.")
    ] = None,
    completions: Annotated[
        int | None,
        typer.Option("--completions", help="How many pods must succeed (each its own index)."),
    ] = None,
    backoff_limit: flags.BackoffLimit = None,
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
    label: flags.Labels = None,
    annotation: flags.Annotations = None,
    host_path: flags.HostPaths = None,
    existing_pvc: flags.ExistingPvcs = None,
    new_pvc: flags.NewPvcs = None,
    git_sync: flags.GitSyncs = None,
    name_prefix: flags.NamePrefix = False,
    request_file: flags.RequestFile = None,
    dry_run: flags.DryRun = False,
    wait: flags.Wait = False,
    wait_for_completion: flags.WaitForCompletion = False,
    follow: flags.Follow = False,
    output: Output = None,
) -> None:
    """Submit a single-node training: one pod, or with --parallelism and --completions a Job's
    pods, N at a time until M have succeeded."""
    base = submission.request_file(request_file)
    with connected() as client:
        options = TrainingOptions(
            **_pod_fields(
                name=name,
                project_id=project_id(client, project or base.get("projectId")),
                cluster_id=submission.cluster_id(client, base),
                image=image,
                command=command,
                environment=environment,
                working_dir=working_dir,
                gpu=(gpu_devices_request, gpu_portion_request, gpu_memory_request),
                cpu=(cpu_core_request, cpu_core_limit, cpu_memory_request, cpu_memory_limit),
                node_pools=node_pools,
                tolerations=toleration,
                labels=label,
                annotations=annotation,
                name_prefix=name_prefix,
                storage=submission.storage_flags(
                    host_paths=host_path,
                    existing_pvcs=existing_pvc,
                    new_pvcs=new_pvc,
                    git_syncs=git_sync,
                ),
                base=base,
            ),
            backoff_limit=backoff_limit,
            completions=completions,
            parallelism=parallelism,
        )
        try:
            body = build_training(options)
        except BadFlag as error:
            raise fail(str(error), USAGE) from error
        if dry_run:
            structured(body, output or "json")
            return
        created = client.trainings.create(body)
        submission.after_submit(
            client,
            created.model_dump(mode="json", by_alias=True),
            noun="training",
            output=output,
            wait=wait,
            wait_for_completion=wait_for_completion,
            follow=follow,
        )


def submit_workspace(
    name: flags.Name,
    command: flags.Command = None,
    *,
    project: Project = None,
    image: flags.Image = None,
    port: Annotated[
        list[str] | None,
        typer.Option(
            "--port",
            help="CONTAINER[:EXTERNAL]: a container port to expose, and the machine's port to "
            "reach it at (one is chosen without it); repeatable.",
        ),
    ] = None,
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
    label: flags.Labels = None,
    annotation: flags.Annotations = None,
    host_path: flags.HostPaths = None,
    existing_pvc: flags.ExistingPvcs = None,
    new_pvc: flags.NewPvcs = None,
    git_sync: flags.GitSyncs = None,
    name_prefix: flags.NamePrefix = False,
    request_file: flags.RequestFile = None,
    dry_run: flags.DryRun = False,
    wait: flags.Wait = False,
    wait_for_completion: flags.WaitForCompletion = False,
    follow: flags.Follow = False,
    output: Output = None,
) -> None:
    """Submit a workspace: one pod for interactive work, its ports exposed."""
    base = submission.request_file(request_file)
    with connected() as client:
        options = WorkspaceOptions(
            **_pod_fields(
                name=name,
                project_id=project_id(client, project or base.get("projectId")),
                cluster_id=submission.cluster_id(client, base),
                image=image,
                command=command,
                environment=environment,
                working_dir=working_dir,
                gpu=(gpu_devices_request, gpu_portion_request, gpu_memory_request),
                cpu=(cpu_core_request, cpu_core_limit, cpu_memory_request, cpu_memory_limit),
                node_pools=node_pools,
                tolerations=toleration,
                labels=label,
                annotations=annotation,
                name_prefix=name_prefix,
                storage=submission.storage_flags(
                    host_paths=host_path,
                    existing_pvcs=existing_pvc,
                    new_pvcs=new_pvc,
                    git_syncs=git_sync,
                ),
                base=base,
            ),
            ports=port or (),
        )
        try:
            body = build_workspace(options)
        except BadFlag as error:
            raise fail(str(error), USAGE) from error
        if dry_run:
            structured(body, output or "json")
            return
        created = client.workspaces.create(body)
        submission.after_submit(
            client,
            created.model_dump(mode="json", by_alias=True),
            noun="workspace",
            output=output,
            wait=wait,
            wait_for_completion=wait_for_completion,
            follow=follow,
        )


def _pod_fields(
    *,
    name: str,
    project_id: str,
    cluster_id: str,
    image: str | None,
    command: list[str] | None,
    environment: list[str] | None,
    working_dir: str | None,
    gpu: tuple[int | None, float | None, str | None],
    cpu: tuple[float | None, float | None, str | None, str | None],
    node_pools: list[str] | None,
    tolerations: list[str] | None,
    labels: list[str] | None,
    annotations: list[str] | None,
    name_prefix: bool,
    storage: dict[str, list[dict[str, Any]]],
    base: dict[str, Any],
) -> dict[str, Any]:
    """The `PodOptions` fields (requests.py) from the flags both submits have."""
    return {
        "name": name,
        "project_id": project_id,
        "cluster_id": cluster_id,
        "image": image,
        "command": command or (),
        "environment": environment or (),
        "working_dir": working_dir,
        "gpu_devices": gpu[0],
        "gpu_portion": gpu[1],
        "gpu_memory": gpu[2],
        "cpu_core_request": cpu[0],
        "cpu_core_limit": cpu[1],
        "cpu_memory_request": cpu[2],
        "cpu_memory_limit": cpu[3],
        "node_pools": node_pools or (),
        "tolerations": tolerations or (),
        "labels": labels or (),
        "annotations": annotations or (),
        "name_prefix": name_prefix,
        "storage": storage,
        "base": base,
    }
