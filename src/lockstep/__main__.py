"""`python -m lockstep` is the `lockstep` command."""

from lockstep.cli.main import run

run()
