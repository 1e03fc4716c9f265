"""Settings from CLI flags over `LOCKSTEP_*` environment variables over defaults."""

from __future__ import annotations

from typing import Any

import typer
from pydantic import ValidationError

from lockstep.config import Settings


def settings_from(**flags: Any) -> Settings:
    """The settings, or exit status 2 with one line per setting that is wrong, each named as
    the variable that sets it."""
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
