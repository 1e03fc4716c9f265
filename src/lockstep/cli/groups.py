"""Every command group of `lockstep` is made here, so that a mistyped command gets one
suggestion: Click 8.4 and newer suggest close names themselves (`Did you mean 'pytorch'?`),
and typer adds the same again unless told not to."""

import click.exceptions
import typer

CLICK_SUGGESTS = hasattr(click.exceptions, "NoSuchCommand")
"""Click's own "no such command" error, which suggests, arrived in Click 8.4."""


def command_group(**options: object) -> typer.Typer:
    """A Typer app (see typer.Typer for `options`) that suggests close commands once."""
    return typer.Typer(suggest_commands=not CLICK_SUGGESTS, **options)  # type: ignore[arg-type]
