"""`lockstep secret` and `lockstep configmap`: create, list and delete a project's secrets and
config maps directly in the store, like `lockstep admin`: one set of commands, added once per
kind. Output is JSON; a secret's values are never printed, only its keys."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from lockstep.cli.groups import command_group
from lockstep.cli.operator import DatabaseUrl, DataDir, operator_core, print_json

if TYPE_CHECKING:
    from lockstep.domain.secrets import SecretKind

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


KindName = Literal["secret", "config map"]
"""A `SecretKind`'s value: the domain module is imported only when a command runs."""


def _kind(name: KindName) -> SecretKind:
    from lockstep.domain.secrets import SecretKind

    return SecretKind(name)


def _add_commands(
    app: typer.Typer, kind: KindName, *, create_help: str, list_help: str, delete_help: str
) -> None:
    """`create`, `list` and `delete` of one kind (named by its value), in `app`."""

    def create(
        name: Name,
        project: ProjectOption,
        *,
        from_literal: FromLiteral = None,
        from_file: FromFile = None,
        replace: Replace = False,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        from lockstep.api.views import secret
        from lockstep.auth.tokens import OPERATOR

        data = gather_data(from_literal or [], from_file or [])
        with operator_core(data_dir, database_url) as core:
            change = core.secrets.replace if replace else core.secrets.create
            print_json(secret(change(OPERATOR, _kind(kind), project, name=name, data=data)))

    def listing(
        project: ProjectOption, data_dir: DataDir = None, database_url: DatabaseUrl = None
    ) -> None:
        from lockstep.api.views import secret
        from lockstep.auth.tokens import OPERATOR

        with operator_core(data_dir, database_url) as core:
            print_json([secret(s) for s in core.secrets.secrets(OPERATOR, _kind(kind), project)])

    def delete(
        name: Name,
        project: ProjectOption,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        from lockstep.auth.tokens import OPERATOR

        with operator_core(data_dir, database_url) as core:
            core.secrets.delete(OPERATOR, _kind(kind), project, name)

    app.command("create", help=create_help)(create)
    app.command("list", help=list_help)(listing)
    app.command("delete", help=delete_help)(delete)


_add_commands(
    secret_app,
    "secret",
    create_help="Create a secret; prints its name and keys (never its values).",
    list_help="List a project's secrets: names and keys, never values.",
    delete_help="Delete a secret.",
)
_add_commands(
    config_map_app,
    "config map",
    create_help="Create a config map; prints it with its data.",
    list_help="List a project's config maps with their data.",
    delete_help="Delete a config map.",
)
