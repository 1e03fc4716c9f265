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


def described_only() -> None:
    """Stands for a command that is slow to build in the listing of its group: the command
    itself is built only when its name is on the command line (see cli/main.py), so this one
    never runs."""
