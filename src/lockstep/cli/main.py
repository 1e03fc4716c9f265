"""`lockstep`: the entry point and its command groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lockstep.cli import admin, login, projects, training, values

app = typer.Typer(
    name="lockstep",
    no_args_is_help=True,
    help="A control plane for distributed training that speaks the Run:ai REST API.",
    pretty_exceptions_enable=False,
)
app.add_typer(admin.app, name="admin")
app.add_typer(values.secret_app, name="secret")
app.add_typer(values.config_map_app, name="configmap")
app.add_typer(training.app, name="training")
app.add_typer(projects.app, name="project")
app.add_typer(login.config_app, name="config")
app.command("login")(login.login)


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
    access_log: Annotated[bool, typer.Option(help="Log every request.")] = False,
) -> None:
    """Run the API, the reconciler and the local runtime in one process."""
    from lockstep.cli.serve import run_server
    from lockstep.cli.settings import settings_from

    run_server(
        settings_from(host=host, port=port, data_dir=data_dir, database_url=database_url),
        access_log=access_log,
    )


@app.command()
def version() -> None:
    """Print lockstep's version."""
    from lockstep import __version__

    typer.echo(__version__)


def run() -> None:
    # Named, so that completion answers to _LOCKSTEP_COMPLETE however lockstep was started.
    app(prog_name="lockstep")
