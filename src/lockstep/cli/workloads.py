"""The commands that manage submitted workloads — list, describe, logs, suspend, resume,
delete — added to a group for the kinds it manages (`lockstep training`: distributed workloads
and trainings; `lockstep workspace`: workspaces). A workload is named by its name or id; each
call goes to its own kind's path, found from the generic workload's `type`."""

import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lockstep.cli.connection import NOT_FOUND, USAGE, connected, fail, project_id
from lockstep.cli.flags import AsJson, Output, Project
from lockstep.cli.output import structured, table

if TYPE_CHECKING:
    from lockstep.sdk import Client

FOLLOWED_PODS = 16
"""The most pods whose logs are followed at once: a server streams one caller at most 20 logs at
once by default (LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER), and the caller may be following others."""

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True, slots=True)
class Kinds:
    """The kinds of workload a group manages (their `type`s) and what its messages call one."""

    types: frozenset[str]
    noun: str

    def filters(self) -> list[str]:
        """The list's filterBy term when the group manages one kind (else none: filtered here)."""
        return [f"type=={next(iter(self.types))}"] if len(self.types) == 1 else []

    def managed(self, workloads: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
        return [w for w in workloads if w.get("type", "Distributed") in self.types]


@dataclass(frozen=True, slots=True)
class Found:
    id: str
    type: str


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


def add_commands(app: typer.Typer, kinds: Kinds) -> None:
    """Add list, describe, logs, suspend, resume and delete to `app`, for `kinds`."""
    _add_reading(app, kinds)
    _add_actions(app, kinds)


def _add_reading(app: typer.Typer, kinds: Kinds) -> None:
    """list, describe and logs."""
    noun = kinds.noun

    @app.command("list")
    def list_workloads(
        project: Project = None,
        phase: Annotated[
            str | None, typer.Option("--phase", help="Only those in this phase.")
        ] = None,
        as_json: AsJson = False,
        output: Output = None,
    ) -> None:
        with connected() as client:
            filters = kinds.filters()
            if project is not None:
                filters.append(f"projectId=={project_id(client, project)}")
            workloads = kinds.managed(
                client.list(phase=phase, filter_by=filters, sort_by="createdAt", sort_order="desc")
            )
        if not structured(workloads, "json" if as_json else output):
            _table(workloads, several=len(kinds.types) > 1)

    list_workloads.__doc__ = f"List the {noun}s, newest first."

    @app.command()
    def describe(workload: Workload, project: Project = None, output: Output = None) -> None:
        with connected() as client:
            found = resolve(client, workload, project, kinds)
            item = client.get(found.id)
            spec = client.of_type(found.type).get(found.id).model_dump(mode="json", by_alias=True)
            pods = client.pods(found.id)
            events = client.events(found.id)
            history = client.history(found.id)
        described = {
            "workload": item,
            "spec": spec,
            "pods": pods,
            "events": events,
            "history": history,
        }
        if not structured(described, output):
            _describe(item, spec, pods, events, history)

    describe.__doc__ = f"The {noun}'s spec, phase, pending reason, ports, history, pods, events."

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
            workload_id = resolve(client, workload, project, kinds).id
            names = [pod] if pod else [p["name"] for p in client.pods(workload_id)]
            print_logs(
                client,
                workload_id,
                names,
                prefix=pod is None,
                follow=follow,
                tail=tail,
                since=since_seconds,
                timestamps=timestamps,
            )


def _add_actions(app: typer.Typer, kinds: Kinds) -> None:
    """suspend, resume and delete, each sent to the workload's own kind's path."""
    noun = kinds.noun

    @app.command()
    def suspend(workload: Workload, project: Project = None) -> None:
        with connected() as client:
            found = resolve(client, workload, project, kinds)
            client.of_type(found.type).suspend(found.id)
        typer.echo(f"{noun} {workload} suspending")

    suspend.__doc__ = f"Stop every pod and release the {noun}'s resources; resume starts it again."

    @app.command()
    def resume(workload: Workload, project: Project = None) -> None:
        with connected() as client:
            found = resolve(client, workload, project, kinds)
            client.of_type(found.type).resume(found.id)
        typer.echo(f"{noun} {workload} resuming")

    resume.__doc__ = f"Queue a suspended {noun} again."

    @app.command()
    def delete(
        workload: Workload,
        project: Project = None,
        wait: Annotated[bool, typer.Option("--wait", help="Until it is gone.")] = False,
    ) -> None:
        from lockstep.sdk import NotFound

        with connected() as client:
            found = resolve(client, workload, project, kinds)
            calls = client.of_type(found.type)
            calls.delete(found.id)
            if wait:
                while True:
                    try:
                        calls.get(found.id)
                    except NotFound:
                        break
                    time.sleep(0.2)
        typer.echo(f"{noun} {workload} deleted" if wait else f"{noun} {workload} deleting")

    delete.__doc__ = f"Stop every pod and delete the {noun}."


def resolve(client: "Client", workload: str, project: str | None, kinds: Kinds) -> Found:
    """The workload a name (in `project` when given) or an id names, among `kinds`."""
    if UUID.match(workload):
        item = client.get(workload)
        if item["type"] not in kinds.types:
            raise fail(f"{workload} is a {item['type'].lower()}, not a {kinds.noun}", NOT_FOUND)
        return Found(workload, item["type"])
    filters = kinds.filters()
    if project is not None:
        filters.append(f"projectId=={project_id(client, project)}")
    found = kinds.managed(client.list(name=workload, filter_by=filters))
    if not found:
        raise fail(f"no {kinds.noun} named {workload!r}", NOT_FOUND)
    if len(found) > 1:
        projects = ", ".join(sorted(str(w.get("projectName")) for w in found))
        raise fail(
            f"{kinds.noun}s named {workload!r} in several projects ({projects}): use -p", USAGE
        )
    return Found(str(found[0]["id"]), str(found[0]["type"]))


def _table(workloads: list[dict[str, Any]], *, several: bool) -> None:
    """The list: with each workload's type and framework when the group has several kinds."""
    headers = ["NAME", "TYPE", "PROJECT", "FRAMEWORK", "PHASE", "RUNNING", "AGE"]
    rows = [
        [
            w["name"],
            w.get("type") or "",
            w.get("projectName") or "",
            w.get("distributedFramework") or "",
            w["phase"],
            f"{w.get('runningPods', 0)}/{w.get('requestedPods', {}).get('number', '?')}",
            _age(w.get("createdAt")),
        ]
        for w in workloads
    ]
    if not several:
        headers = [h for h in headers if h not in ("TYPE", "FRAMEWORK")]
        rows = [[r[0], *r[2:3], *r[4:]] for r in rows]
    table(headers, rows, phase_column=headers.index("PHASE"))


def _describe(
    item: dict[str, Any],
    spec: dict[str, Any],
    pods: list[dict[str, Any]],
    events: list[dict[str, Any]],
    history: list[dict[str, Any]],
) -> None:
    pod_spec = spec.get("spec") or {}
    typer.echo(f"Name:       {item['name']} ({item['id']})")
    typer.echo(f"Type:       {item.get('type')}")
    typer.echo(f"Project:    {item.get('projectName')}")
    if item.get("distributedFramework"):
        typer.echo(f"Framework:  {item['distributedFramework']}")
    typer.echo(f"Phase:      {item['phase']}")
    if item.get("phaseMessage"):
        label = "Pending:" if item["phase"] == "Pending" else "Message:"
        typer.echo(f"{label:11} {item['phaseMessage']}")
    if item.get("phaseReason"):
        typer.echo(f"Reason:     {item['phaseReason']}")
    if item.get("queuePosition") is not None:
        typer.echo(f"Queue:      {item['queuePosition']} in its project's queue")
    typer.echo(f"Image:      {pod_spec.get('image')}")
    for key, label in (("completions", "Completions:"), ("parallelism", "Parallelism:")):
        if pod_spec.get(key) is not None:
            typer.echo(f"{label:11} {pod_spec[key]}")
    for line in _ports(pod_spec, pods):
        typer.echo(f"Port:       {line}")
    for url in item.get("urls") or ():
        typer.echo(f"URL:        {url}")
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


def _ports(pod_spec: dict[str, Any], pods: list[dict[str, Any]]) -> list[str]:
    """Each container port the spec asks for, and where a running pod's is reached (its IP and
    the port of the machine bound to it)."""
    reached: dict[int, list[str]] = {}
    for pod in pods:
        if pod.get("k8sPhase") != "Running":
            continue
        for container in pod.get("containers") or ():
            for port in container.get("ports") or ():
                if port.get("hostPort"):
                    host = pod.get("ip") or pod.get("nodeName") or "localhost"
                    where = f"http://{host}:{port['hostPort']}"
                    reached.setdefault(int(port["containerPort"]), []).append(where)
    lines = []
    for port in pod_spec.get("ports") or ():
        container = port.get("container")
        if container is None:
            continue
        places = reached.get(int(container))
        lines.append(f"{container} -> {', '.join(places)}" if places else str(container))
    return lines


def follow_all(client: "Client", workload_id: str) -> None:
    """Stream every pod's log, each line prefixed with its pod, until the pods end."""
    names = [p["name"] for p in client.pods(workload_id)]
    print_logs(
        client,
        workload_id,
        names,
        prefix=True,
        follow=True,
        tail=None,
        since=None,
        timestamps=False,
    )


def print_logs(
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
    if follow and len(pods) > FOLLOWED_PODS:
        typer.echo(
            f"following the logs of the first {FOLLOWED_PODS} of {len(pods)} pods (a server "
            "streams one caller only so many at once); follow another with `logs --pod`",
            err=True,
        )
        pods = pods[:FOLLOWED_PODS]
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
