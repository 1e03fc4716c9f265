"""Settings from CLI flags over `LOCKSTEP_*` environment variables over defaults."""

from __future__ import annotations

from typing import Any

import typer
from pydantic import ValidationError

from lockstep.cli.data_dir import AmbiguousDataDir, chosen_data_dir
from lockstep.config import Settings


def settings_from(**flags: Any) -> Settings:
    """The settings, or exit status 2 with one line per setting that is wrong, each named as
    the variable that sets it. A command that names its data dir (`data_dir=…`, None when the
    flag is not given) finds it as `serve` does (data_dir.py)."""
    if "data_dir" in flags:
        try:
            flags["data_dir"] = chosen_data_dir(flags["data_dir"])
        except AmbiguousDataDir as error:
            typer.echo(f"lockstep: {error}", err=True)
            raise typer.Exit(2) from None
    try:
        return Settings(**{name: value for name, value in flags.items() if value is not None})
    except ValidationError as error:
        for problem in error.errors(include_url=False):
            message = str(problem["msg"]).removeprefix("Value error, ")
            if problem["loc"]:
                first, *rest = (str(part) for part in problem["loc"])
                where = f" ({'.'.join(rest)})" if rest else ""
                message = f"LOCKSTEP_{first.upper()}{where}: {message}"
            typer.echo(f"lockstep: {message}", err=True)
        raise typer.Exit(2) from None
