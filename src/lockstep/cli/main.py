"""`lockstep`: the entry point.

A command group is built only when it is named. Building a group's commands (typer reads every
parameter of every command) costs more than starting Python, so `lockstep training list` builds
`training` alone and `lockstep --help` lists the groups from their one-line descriptions. For
the same reason typer's Rich help is off unless `TYPER_USE_RICH=1`: lockstep's own tables and
progress still use Rich.
"""

import importlib
import os
import sys
from pathlib import Path
from typing import Annotated

os.environ.setdefault("TYPER_USE_RICH", "0")  # read when typer is imported, just below
# httpx imports its own command line (and with it parts of Rich and Click) when it can; the
# lockstep command never runs it, and a None module makes that import fail fast.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import typer  # noqa: E402

from lockstep.cli import login, render  # noqa: E402
from lockstep.cli.groups import command_group  # noqa: E402

GROUPS: dict[str, tuple[str, str, str]] = {
    "training": (
        "lockstep.cli.training",
        "app",
        "Submit and manage training workloads: distributed ones and single-node trainings.",
    ),
    "workspace": ("lockstep.cli.workspace", "app", "Submit and manage workspaces."),
    "project": ("lockstep.cli.projects", "app", "Projects."),
    "department": ("lockstep.cli.departments", "app", "Departments."),
    "node-pool": ("lockstep.cli.node_pools", "app", "Node pools."),
    "cluster": ("lockstep.cli.projects", "cluster_app", "The cluster and its nodes."),
    "config": ("lockstep.cli.login", "config_app", "Switch between lockstep servers."),
    "admin": (
        "lockstep.cli.admin",
        "app",
        "Administer applications, access rules and the organization (on the store).",
    ),
    "secret": ("lockstep.cli.secrets", "secret_app", "Manage the secrets of a project."),
    "configmap": ("lockstep.cli.secrets", "config_map_app", "Manage the config maps of a project."),
    "volume": ("lockstep.cli.volumes", "app", "Manage the volumes (claims) of a project."),
}
"""Group name → the module and attribute of its Typer app, and its description."""

app = command_group(
    name="lockstep",
    no_args_is_help=True,
    help="A control plane for distributed training that speaks the Run:ai REST API.",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command inherits them
)


def _print_version(wanted: bool) -> None:
    if wanted:
        from lockstep import __version__

        typer.echo(f"lockstep {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ] = False,
) -> None:
    """A control plane for distributed training that speaks the Run:ai REST API."""


app.command("login")(login.login)
app.command("render")(render.render)


@app.command("queue")
def queue(
    project: Annotated[
        str | None, typer.Option("-p", "--project", help="Project name or id.")
    ] = None,
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="json or yaml instead of tables.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Per project and node pool: deserved share, fair share, allocated, requested; then the
    waiting workloads in the order they will be admitted, and why each waits."""
    from lockstep.cli.queue import show

    show(project, output, as_json)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on [LOCKSTEP_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on [LOCKSTEP_PORT].")] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Directory for the store, keys and pods [LOCKSTEP_DATA_DIR]."),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            help="URL of the store; SQLite in the data dir if unset [LOCKSTEP_DATABASE_URL]."
        ),
    ] = None,
    *,
    api_processes: Annotated[
        int | None,
        typer.Option(
            help="Processes serving the API; above 1 needs PostgreSQL [LOCKSTEP_API_PROCESSES]."
        ),
    ] = None,
    max_request_bytes: Annotated[
        int | None,
        typer.Option(help="Largest request body accepted [LOCKSTEP_MAX_REQUEST_BYTES]."),
    ] = None,
    max_workers: Annotated[
        int | None, typer.Option(help="Most workers of a workload [LOCKSTEP_MAX_WORKERS].")
    ] = None,
    max_workloads_per_project: Annotated[
        int | None,
        typer.Option(
            help="Most unfinished workloads of a project; 0: no limit "
            "[LOCKSTEP_MAX_WORKLOADS_PER_PROJECT]."
        ),
    ] = None,
    max_pods_per_project: Annotated[
        int | None,
        typer.Option(
            help="Most pods of a project placed at once; 0: no limit "
            "[LOCKSTEP_MAX_PODS_PER_PROJECT]."
        ),
    ] = None,
    max_command_length: Annotated[
        int | None,
        typer.Option(help="Longest command, and args, of a pod [LOCKSTEP_MAX_COMMAND_LENGTH]."),
    ] = None,
    max_log_streams: Annotated[
        int | None,
        typer.Option(help="Most pod logs answered at once [LOCKSTEP_MAX_LOG_STREAMS]."),
    ] = None,
    max_log_streams_per_caller: Annotated[
        int | None,
        typer.Option(
            help="Most pod logs answered at once to one caller "
            "[LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER]."
        ),
    ] = None,
    max_watch_streams_per_caller: Annotated[
        int | None,
        typer.Option(
            help="Most change streams one caller holds open "
            "[LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER]."
        ),
    ] = None,
    token_requests_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Secret checks a client address may ask, and refused ones an application id "
            "may have, a minute [LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE]."
        ),
    ] = None,
    token_checks_at_once: Annotated[
        int | None,
        typer.Option(help="Most secret checks hashing at once [LOCKSTEP_TOKEN_CHECKS_AT_ONCE]."),
    ] = None,
    max_connections: Annotated[
        int | None,
        typer.Option(
            help="Most connections one API process keeps open [LOCKSTEP_MAX_CONNECTIONS]."
        ),
    ] = None,
    header_timeout_seconds: Annotated[
        float | None,
        typer.Option(
            help="Seconds a client has to send a request's headers "
            "[LOCKSTEP_HEADER_TIMEOUT_SECONDS]."
        ),
    ] = None,
    metrics_interval_seconds: Annotated[
        float | None,
        typer.Option(
            help="Seconds between samples of pods' usage [LOCKSTEP_METRICS_INTERVAL_SECONDS]."
        ),
    ] = None,
    prometheus_url: Annotated[
        str | None,
        typer.Option(
            help="The cluster's Prometheus, for metrics on Kubernetes [LOCKSTEP_PROMETHEUS_URL]."
        ),
    ] = None,
    prometheus_timeout_seconds: Annotated[
        float | None,
        typer.Option(
            help="Longest wait for the Prometheus's answer [LOCKSTEP_PROMETHEUS_TIMEOUT_SECONDS]."
        ),
    ] = None,
    prometheus_min_range_seconds: Annotated[
        float | None,
        typer.Option(
            help="Shortest range a point is measured over [LOCKSTEP_PROMETHEUS_MIN_RANGE_SECONDS]."
        ),
    ] = None,
    access_log: Annotated[bool, typer.Option(help="Log every request.")] = False,
) -> None:
    """Run the API, the reconciler and the local runtime."""
    from lockstep.cli.serve import run_server
    from lockstep.cli.settings import settings_from

    run_server(
        settings_from(
            host=host,
            port=port,
            data_dir=data_dir,
            database_url=database_url,
            api_processes=api_processes,
            max_request_bytes=max_request_bytes,
            max_workers=max_workers,
            max_workloads_per_project=max_workloads_per_project,
            max_pods_per_project=max_pods_per_project,
            max_command_length=max_command_length,
            max_log_streams=max_log_streams,
            max_log_streams_per_caller=max_log_streams_per_caller,
            max_watch_streams_per_caller=max_watch_streams_per_caller,
            token_requests_per_minute=token_requests_per_minute,
            token_checks_at_once=token_checks_at_once,
            max_connections=max_connections,
            header_timeout_seconds=header_timeout_seconds,
            metrics_interval_seconds=metrics_interval_seconds,
            prometheus_url=prometheus_url,
            prometheus_timeout_seconds=prometheus_timeout_seconds,
            prometheus_min_range_seconds=prometheus_min_range_seconds,
        ),
        access_log=access_log,
    )


@app.command()
def version() -> None:
    """Print lockstep's version."""
    from lockstep import __version__

    typer.echo(__version__)


def add_groups(words: list[str]) -> None:
    """The group the first of `words` names in full (a group module's `prepare` gets the rest,
    to do the same one level down); the others as their description only."""
    wanted = words[0] if words else None
    for name, (module_name, attribute, description) in GROUPS.items():
        if name == wanted:
            module = importlib.import_module(module_name)
            prepare = getattr(module, "prepare", None)
            if prepare is not None:
                prepare(words[1:])
            group = getattr(module, attribute)
        else:
            group = command_group(help=description)
        app.add_typer(group, name=name, help=description)


def command_words(argv: list[str]) -> list[str]:
    """The words of a command line that are not options (for shell completion, those of the
    line being completed: bash passes it in COMP_WORDS, zsh and fish in _TYPER_COMPLETE_ARGS)."""
    if os.environ.get("_LOCKSTEP_COMPLETE"):
        line = os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS", "")
        argv = line.split()[1:]
    return [word for word in argv if not word.startswith("-")]


def run() -> None:
    add_groups(command_words(sys.argv[1:]))
    # Named, so that completion answers to _LOCKSTEP_COMPLETE however lockstep was started.
    app(prog_name="lockstep")
