"""How the CLI prints: tables (in colour on a terminal) for people, JSON or YAML for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import typer

PHASE_STYLES = {
    "Running": "green",
    "Completed": "blue",
    "Failed": "red",
    "Pending": "yellow",
    "Stopped": "dim",
}


def as_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


def as_yaml(data: Any) -> None:
    import yaml

    typer.echo(yaml.safe_dump(data, sort_keys=False).rstrip())


def structured(data: Any, output: str | None) -> bool:
    """Print `data` as JSON or YAML when asked; False when a table is wanted."""
    if output == "json":
        as_json(data)
        return True
    if output == "yaml":
        as_yaml(data)
        return True
    return False


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, phase_column: int | None = None
) -> None:
    """Columns aligned: drawn by Rich, in colour, on a terminal; plain text elsewhere."""
    if not sys.stdout.isatty():
        columns = list(zip(headers, *rows, strict=True))
        widths = [max(len(cell) for cell in column) for column in columns]
        for line in (headers, *rows):
            padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            typer.echo("  ".join(padded).rstrip())
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True, file=sys.stdout)
    shown = Table(box=None, header_style="bold", pad_edge=False)
    for header in headers:
        shown.add_column(header)
    for row in rows:
        cells = list(row)
        if phase_column is not None and console.is_terminal:
            style = PHASE_STYLES.get(cells[phase_column])
            if style:
                cells[phase_column] = f"[{style}]{cells[phase_column]}[/]"
        shown.add_row(*cells)
    console.print(shown)
