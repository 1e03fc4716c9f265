"""`lockstep secret` and `lockstep configmap`: create, list and delete a project's secrets and
config maps directly in the store, like `lockstep admin`. Output is JSON; a secret's values
are never printed, only its keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lockstep.cli.groups import command_group
from lockstep.cli.operator import DatabaseUrl, DataDir, operator_core, print_json

secret_app = command_group(no_args_is_help=True, help="Manage the secrets of a project.")
config_map_app = command_group(no_args_is_help=True, help="Manage the config maps of a project.")

Name = Annotated[str, typer.Argument(help="A DNS-1123 label: lower-case letters, digits, '-'.")]
ProjectOption = Annotated[str, typer.Option("--project", help="The project's id.")]
FromLiteral = Annotated[
    list[str] | None,
    typer.Option(
        "--from-literal",
        help="KEY=VALUE, repeatable. The value shows in the process list: prefer --from-file.",
    ),
]
FromFile = Annotated[
    list[str] | None,
    typer.Option(
        "--from-file",
        help="KEY=PATH or PATH (the key is the file's name), repeatable: the file's UTF-8 text.",
    ),
]
Replace = Annotated[
    bool, typer.Option("--replace", help="Replace the data of an existing one instead of failing.")
]


def gather_data(literals: list[str], files: list[str]) -> dict[str, str]:
    """The keys and values given by `--from-literal` and `--from-file`. Errors name the key
    or the file, never a value."""
    data: dict[str, str] = {}

    def add(key: str, value: str) -> None:
        if key in data:
            raise typer.BadParameter(f"the key {key!r} is given twice")
        data[key] = value

    for literal in literals:
        key, equals, value = literal.partition("=")
        if not equals or not key:
            raise typer.BadParameter("--from-literal takes KEY=VALUE")
        add(key, value)
    for entry in files:
        key, equals, path_text = entry.partition("=")
        path = Path(path_text if equals else entry)
        add(key if equals else path.name, _read_text(path))
    return data


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise typer.BadParameter(f"cannot read {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise typer.BadParameter(f"{path} is not UTF-8 text") from error


@secret_app.command("create")
def create_secret(
    name: Name,
    project: ProjectOption,
    *,
    from_literal: FromLiteral = None,
    from_file: FromFile = None,
    replace: Replace = False,
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a secret; prints its name and keys (never its values)."""
    from lockstep.api.views import secret
    from lockstep.auth.tokens import OPERATOR

    data = gather_data(from_literal or [], from_file or [])
    with operator_core(data_dir, database_url) as core:
        change = core.secrets.replace_secret if replace else core.secrets.create_secret
        print_json(secret(change(OPERATOR, project, name=name, data=data)))


@secret_app.command("list")
def list_secrets(
    project: ProjectOption, data_dir: DataDir = None, database_url: DatabaseUrl = None
) -> None:
    """List a project's secrets: names and keys, never values."""
    from lockstep.api.views import secret
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        print_json([secret(s) for s in core.secrets.secrets(OPERATOR, project)])


@secret_app.command("delete")
def delete_secret(
    name: Name, project: ProjectOption, data_dir: DataDir = None, database_url: DatabaseUrl = None
) -> None:
    """Delete a secret."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        core.secrets.delete_secret(OPERATOR, project, name)


@config_map_app.command("create")
def create_config_map(
    name: Name,
    project: ProjectOption,
    *,
    from_literal: FromLiteral = None,
    from_file: FromFile = None,
    replace: Replace = False,
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a config map; prints it with its data."""
    from lockstep.api.views import config_map
    from lockstep.auth.tokens import OPERATOR

    data = gather_data(from_literal or [], from_file or [])
    with operator_core(data_dir, database_url) as core:
        change = core.secrets.replace_config_map if replace else core.secrets.create_config_map
        print_json(config_map(change(OPERATOR, project, name=name, data=data)))


@config_map_app.command("list")
def list_config_maps(
    project: ProjectOption, data_dir: DataDir = None, database_url: DatabaseUrl = None
) -> None:
    """List a project's config maps with their data."""
    from lockstep.api.views import config_map
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        print_json([config_map(c) for c in core.secrets.config_maps(OPERATOR, project)])


@config_map_app.command("delete")
def delete_config_map(
    name: Name, project: ProjectOption, data_dir: DataDir = None, database_url: DatabaseUrl = None
) -> None:
    """Delete a config map."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        core.secrets.delete_config_map(OPERATOR, project, name)
