"""What the operator commands (`lockstep admin`, `secret`, `configmap`) share: the options
naming the store, opening it, turning lockstep's errors into `error: ...` and exit status 1,
and printing JSON. Whoever can run them holds the store, so they need no token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from lockstep.assembly import Core

DataDir = Annotated[Path | None, typer.Option(help="lockstep's data dir [LOCKSTEP_DATA_DIR].")]
DatabaseUrl = Annotated[str | None, typer.Option(help="URL of the store [LOCKSTEP_DATABASE_URL].")]


@contextmanager
def operator_core(data_dir: Path | None, database_url: str | None) -> Iterator[Core]:
    """The store and services, opened from the flags over `LOCKSTEP_*` settings."""
    from lockstep.assembly import open_core
    from lockstep.cli.settings import settings_from
    from lockstep.domain.errors import LockstepError

    core = open_core(settings_from(data_dir=data_dir, database_url=database_url))
    try:
        yield core
    except LockstepError as error:
        typer.echo(f"error: {error.message}", err=True)
        raise typer.Exit(1) from error
    finally:
        core.close()


def print_json(data: object) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))
