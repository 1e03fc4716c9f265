"""`lockstep training`: submit distributed workloads (one command per framework, with the Run:ai
CLI's flags), and list, describe, follow the logs of, suspend, resume and delete them, against
the server of the active context (see contexts.py)."""

import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lockstep.cli.connection import NOT_FOUND, USAGE, connected, fail, project_id
from lockstep.cli.groups import command_group
from lockstep.cli.output import structured, table
from lockstep.cli.progress import outcome, until_ended, until_running
from lockstep.cli.requests import FRAMEWORKS, BadFlag, MasterOptions, SubmitOptions, build
from lockstep.cli.storage import storage

if TYPE_CHECKING:
    from lockstep.sdk import Client

app = command_group(no_args_is_help=True, help="Submit and manage distributed training workloads.")

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
FRAMEWORK_NAMES = {
    "pytorch": "PyTorch",
    "mpi": "MPI",
    "tf": "TensorFlow",
    "xgboost": "XGBoost",
    "jax": "JAX",
}
FRAMEWORK_ALIASES = {"tensorflow": "tf"}
"""Other names of a framework group: `lockstep training tensorflow submit` is `… tf submit`."""

Project = Annotated[str | None, typer.Option("-p", "--project", help="Project name or id.")]
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON (same as -o json).")]


def _complete_workloads(incomplete: str) -> list[str]:
    """Shell completion: the names of the workloads the active context's server holds (none
    when it cannot be reached within a second or two)."""
    from lockstep.cli.contexts import NoContext, active
    from lockstep.sdk import ClientError, Retry

    try:
        chosen = active()
        with chosen.client(retry=Retry(attempts=1)) as client:
            return sorted(
                w["name"]
                for w in client.list(search=incomplete or None)
                if w["name"].startswith(incomplete)
            )
    except (NoContext, ClientError, OSError):
        return []


Workload = Annotated[
    str,
    typer.Argument(help="The workload's name or id.", autocompletion=_complete_workloads),
]


# --- submit -----------------------------------------------------------------------------


def _submit_command(framework: str) -> Callable[..., None]:
    def submit(
        name: Annotated[str, typer.Argument(help="The workload's name.")],
        command: Annotated[
            list[str] | None, typer.Argument(help="After --: the command and its arguments.")
        ] = None,
        *,
        project: Project = None,
        image: Annotated[str | None, typer.Option("-i", "--image", help="The image.")] = None,
        workers: Annotated[int | None, typer.Option("--workers", help="Number of workers.")] = None,
        environment: Annotated[
            list[str] | None, typer.Option("-e", "--environment", help="KEY=VALUE, repeatable.")
        ] = None,
        working_dir: Annotated[str | None, typer.Option("--working-dir")] = None,
        gpu_devices_request: Annotated[
            int | None, typer.Option("-g", "--gpu-devices-request", help="Whole GPUs per pod.")
        ] = None,
        gpu_portion_request: Annotated[
            float | None, typer.Option("--gpu-portion-request", help="A share of a GPU (0-1).")
        ] = None,
        gpu_memory_request: Annotated[
            str | None, typer.Option("--gpu-memory-request", help="GPU memory, e.g. 4G.")
        ] = None,
        cpu_core_request: Annotated[float | None, typer.Option("--cpu-core-request")] = None,
        cpu_core_limit: Annotated[float | None, typer.Option("--cpu-core-limit")] = None,
        cpu_memory_request: Annotated[str | None, typer.Option("--cpu-memory-request")] = None,
        cpu_memory_limit: Annotated[str | None, typer.Option("--cpu-memory-limit")] = None,
        node_pools: Annotated[
            list[str] | None, typer.Option("--node-pools", help="In order of preference.")
        ] = None,
        toleration: Annotated[
            list[str] | None, typer.Option("--toleration", help="key[=value][:effect].")
        ] = None,
        backoff_limit: Annotated[int | None, typer.Option("--backoff-limit")] = None,
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
        label: Annotated[list[str] | None, typer.Option("--label", help="KEY=VALUE.")] = None,
        annotation: Annotated[
            list[str] | None, typer.Option("--annotation", help="KEY=VALUE.")
        ] = None,
        host_path: Annotated[
            list[str] | None,
            typer.Option("--host-path", help="path=…,mount=…[,mount-propagation=…][,readwrite]"),
        ] = None,
        existing_pvc: Annotated[
            list[str] | None,
            typer.Option("--existing-pvc", help="claimname=…,path=…[,readonly]"),
        ] = None,
        new_pvc: Annotated[
            list[str] | None,
            typer.Option(
                "--new-pvc",
                help="claimname=…,size=…,path=…[,storageclass=…][,accessmode-rwo|rom|rwm]"
                "[,readonly][,ephemeral]",
            ),
        ] = None,
        git_sync: Annotated[
            list[str] | None,
            typer.Option("--git-sync", help="source=…,path=…[,branch=…][,rev=…][,secret=…]"),
        ] = None,
        name_prefix: Annotated[
            bool, typer.Option("--name-prefix", help="Use the name as a prefix (adds a suffix).")
        ] = False,
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
        request_file: Annotated[
            Path | None, typer.Option("-f", "--file", help="A request body to start from.")
        ] = None,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Print the request; submit nothing.")
        ] = False,
        wait: Annotated[
            bool, typer.Option("--wait", help="Show progress until it runs (or fails).")
        ] = False,
        wait_for_completion: Annotated[
            bool,
            typer.Option(
                "--wait-for-completion",
                help="Show progress until it completes; exit 1 with the reason if it fails.",
            ),
        ] = False,
        follow: Annotated[
            bool,
            typer.Option(
                "--follow",
                help="With --wait or --wait-for-completion: once it runs, stream the logs and "
                "exit with its outcome.",
            ),
        ] = False,
        output: Output = None,
    ) -> None:
        base: dict[str, Any] = {}
        if request_file is not None:
            import json

            try:
                base = json.loads(request_file.read_text())
            except (OSError, ValueError) as error:
                raise fail(f"-f {request_file}: {error}", USAGE) from error
        with connected() as client:
            chosen_project = project_id(client, project or base.get("projectId"))
            options = SubmitOptions(
                name=name,
                framework=framework,
                project_id=chosen_project,
                cluster_id=str(base.get("clusterId") or client.clusters()[0]["uuid"]),
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
                base=base,
            )
            try:
                options.storage = storage(
                    host_paths=host_path or (),
                    existing_pvcs=existing_pvc or (),
                    new_pvcs=new_pvc or (),
                    git_syncs=git_sync or (),
                )
                body = build(options)
            except BadFlag as error:
                raise fail(str(error), USAGE) from error
            if dry_run:
                structured(body, output or "json")
                return
            created = client.create_distributed(body)
            workload_id = str(created.workload_id)
            if not structured(created.model_dump(mode="json", by_alias=True), output):
                typer.echo(f"workload {created.name} submitted ({workload_id})")
            if (wait or wait_for_completion) and follow:
                until_running(client, workload_id)
                _follow_all(client, workload_id)
                outcome(client, workload_id)
            elif wait_for_completion:
                until_ended(client, workload_id)
            elif wait:
                until_running(client, workload_id)

    submit.__doc__ = f"Submit a distributed {FRAMEWORK_NAMES[framework]} workload."
    return submit


def prepare(words: list[str]) -> None:
    """Add the framework groups: the one `words` name with its submit command (forty options
    each, slow to build), the others by their description only (see cli/main.py)."""
    wanted = words[0] if words else None
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


# --- list, describe ---------------------------------------------------------------------


@app.command("list")
def list_workloads(
    project: Project = None,
    phase: Annotated[str | None, typer.Option("--phase", help="Only those in this phase.")] = None,
    as_json: AsJson = False,
    output: Output = None,
) -> None:
    """List workloads, newest first."""
    with connected() as client:
        filters = []
        if project is not None:
            filters.append(f"projectId=={project_id(client, project)}")
        workloads = list(
            client.list(phase=phase, filter_by=filters, sort_by="createdAt", sort_order="desc")
        )
    if structured(workloads, "json" if as_json else output):
        return
    rows = [
        [
            w["name"],
            w.get("projectName") or "",
            w.get("distributedFramework") or "",
            w["phase"],
            f"{w.get('runningPods', 0)}/{w.get('requestedPods', {}).get('number', '?')}",
            _age(w.get("createdAt")),
        ]
        for w in workloads
    ]
    table(["NAME", "PROJECT", "FRAMEWORK", "PHASE", "RUNNING", "AGE"], rows, phase_column=3)


@app.command()
def describe(workload: Workload, project: Project = None, output: Output = None) -> None:
    """The workload's spec, phase, pending reason, history, pods and events."""
    with connected() as client:
        workload_id = _resolve(client, workload, project)
        item = client.get(workload_id)
        spec = client.get_distributed(workload_id).model_dump(mode="json", by_alias=True)
        pods = client.pods(workload_id)
        events = client.events(workload_id)
        history = client.history(workload_id)
    described = {"workload": item, "spec": spec, "pods": pods, "events": events, "history": history}
    if structured(described, output):
        return
    typer.echo(f"Name:       {item['name']} ({item['id']})")
    typer.echo(f"Project:    {item.get('projectName')}")
    typer.echo(f"Framework:  {item.get('distributedFramework')}")
    typer.echo(f"Phase:      {item['phase']}")
    if item.get("phaseMessage"):
        label = "Pending:" if item["phase"] == "Pending" else "Message:"
        typer.echo(f"{label:11} {item['phaseMessage']}")
    if item.get("phaseReason"):
        typer.echo(f"Reason:     {item['phaseReason']}")
    if item.get("queuePosition") is not None:
        typer.echo(f"Queue:      {item['queuePosition']} in its project's queue")
    typer.echo(f"Image:      {(spec.get('spec') or {}).get('image')}")
    typer.echo("\nHistory:")
    for record in history:
        if record["meta"]["type"] == "PhaseUpdate":
            update = record["spec"]["phaseUpdate"]
            moment, message = record["meta"]["creationTimestamp"], update.get("message") or ""
            typer.echo(f"  {moment}  {update['phase']}  {message}".rstrip())
    typer.echo("\nPods:")
    table(
        ["NAME", "PHASE", "NODE", "IP", "RESTARTS"],
        [
            [
                p["name"],
                p["k8sPhase"],
                p.get("nodeName") or "",
                p.get("ip") or "",
                str(p.get("containers", [{}])[0].get("restartCount", 0)),
            ]
            for p in pods
        ],
        phase_column=None,
    )
    typer.echo("\nEvents:")
    for event in events:
        typer.echo(
            f"  {event['createdAt']}  {event['type']:7}  {event['reason']:12}  {event['message']}"
        )


# --- logs -------------------------------------------------------------------------------


@app.command()
def logs(
    workload: Workload,
    *,
    pod: Annotated[
        str | None, typer.Option("--pod", help="One pod; all of them if not given.")
    ] = None,
    follow: Annotated[
        bool, typer.Option("-f", "--follow", help="Stream new lines until the pods end.")
    ] = False,
    tail: Annotated[int | None, typer.Option("--tail", help="Only the last N lines.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only lines newer than this: 30s, 5m, 2h.")
    ] = None,
    timestamps: Annotated[
        bool, typer.Option("--timestamps", help="Prefix each line with its time.")
    ] = False,
    project: Project = None,
) -> None:
    """Print what the pods printed (every pod's, each line prefixed, without --pod)."""
    since_seconds = None if since is None else _seconds(since)
    with connected() as client:
        workload_id = _resolve(client, workload, project)
        names = [pod] if pod else [p["name"] for p in client.pods(workload_id)]
        prefix = pod is None
        _print_logs(
            client,
            workload_id,
            names,
            prefix=prefix,
            follow=follow,
            tail=tail,
            since=since_seconds,
            timestamps=timestamps,
        )


def _follow_all(client: "Client", workload_id: str) -> None:
    names = [p["name"] for p in client.pods(workload_id)]
    _print_logs(
        client,
        workload_id,
        names,
        prefix=True,
        follow=True,
        tail=None,
        since=None,
        timestamps=False,
    )


def _print_logs(
    client: "Client",
    workload_id: str,
    pods: list[str],
    *,
    prefix: bool,
    follow: bool,
    tail: int | None,
    since: int | None,
    timestamps: bool,
) -> None:
    lock = threading.Lock()
    width = max((len(p) for p in pods), default=0)
    failures: list[BaseException] = []

    def stream(pod: str) -> None:
        lines: Iterator[str] = client.logs(
            workload_id,
            pod,
            follow=follow,
            tail_lines=tail,
            since_seconds=since,
            timestamps=timestamps,
        )
        try:
            for line in lines:
                with lock:
                    sys.stdout.write(f"{pod:<{width}} | {line}" if prefix else line)
                    sys.stdout.flush()
        except BaseException as error:  # reported once all streams end
            failures.append(error)

    if len(pods) == 1 or not follow:
        for pod in pods:
            stream(pod)
    else:
        threads = [threading.Thread(target=stream, args=(pod,), daemon=True) for pod in pods]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]


# --- suspend, resume, delete ------------------------------------------------------------


@app.command()
def suspend(workload: Workload, project: Project = None) -> None:
    """Stop every pod and release the workload's resources; resume starts it again."""
    with connected() as client:
        workload_id = _resolve(client, workload, project)
        client.suspend(workload_id)
    typer.echo(f"workload {workload} suspending")


@app.command()
def resume(workload: Workload, project: Project = None) -> None:
    """Queue a suspended workload again."""
    with connected() as client:
        workload_id = _resolve(client, workload, project)
        client.resume(workload_id)
    typer.echo(f"workload {workload} resuming")


@app.command()
def delete(
    workload: Workload,
    project: Project = None,
    wait: Annotated[bool, typer.Option("--wait", help="Until it is gone.")] = False,
) -> None:
    """Stop every pod and delete the workload."""
    from lockstep.sdk import NotFound

    with connected() as client:
        workload_id = _resolve(client, workload, project)
        client.delete(workload_id)
        if wait:
            while True:
                try:
                    client.get_distributed(workload_id)
                except NotFound:
                    break
                time.sleep(0.2)
    typer.echo(f"workload {workload} deleted" if wait else f"workload {workload} deleting")


# --- helpers ----------------------------------------------------------------------------


def _resolve(client: "Client", workload: str, project: str | None) -> str:
    """A workload id from a name (in `project` when given) or an id."""
    if UUID.match(workload):
        return workload
    filters = [] if project is None else [f"projectId=={project_id(client, project)}"]
    found = list(client.list(name=workload, filter_by=filters))
    if not found:
        raise fail(f"no workload named {workload!r}", NOT_FOUND)
    if len(found) > 1:
        projects = ", ".join(sorted(str(w.get("projectName")) for w in found))
        raise fail(f"workloads named {workload!r} in several projects ({projects}): use -p", USAGE)
    return str(found[0]["id"])


def _seconds(text: str) -> int:
    match = re.fullmatch(r"(\d+)([smhd]?)", text.strip())
    if match is None:
        raise fail(f"--since takes a duration such as 30s, 5m, 2h or 1d, not {text!r}", USAGE)
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
    return int(match.group(1)) * unit


def _age(created: str | None) -> str:
    if not created:
        return ""
    from datetime import UTC, datetime

    moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
    seconds = int((datetime.now(UTC) - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"
