"""How CLI commands reach lockstep and end: an SDK client for the active context, and every
failure turned into a one-line message on stderr and an exit status scripts can rely on:

    0 ok · 1 the workload failed (when waited on) · 2 usage · 3 not found · 4 not authorized
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from lockstep.sdk import Client

OK, WORKLOAD_FAILED, USAGE, NOT_FOUND, NOT_AUTHORIZED = 0, 1, 2, 3, 4


def fail(message: str, status: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(status)


def project_id(client: Client, project: str | None) -> str:
    """The id of the project named (by id or name), or of the caller's only project."""
    projects = client.projects()
    if project is None:
        if len(projects) == 1:
            return str(projects[0]["id"])
        raise fail("say which project with -p/--project", USAGE)
    for candidate in projects:
        if str(candidate["id"]) == str(project) or candidate["name"] == project:
            return str(candidate["id"])
    raise fail(f"no project {project!r} that you can see", NOT_FOUND)


@contextmanager
def connected(context: str | None = None) -> Iterator[Client]:
    """A client for the active context; lockstep's errors end the command with their status."""
    from lockstep.cli.contexts import NoContext, active
    from lockstep.sdk import (
        ApiError,
        ClientError,
        Forbidden,
        InvalidRequest,
        NotFound,
        Unauthorized,
        WorkloadEnded,
    )

    try:
        chosen = active(context)
    except NoContext as error:
        raise fail(str(error), USAGE) from error
    client = chosen.client()
    try:
        yield client
    except WorkloadEnded as error:
        raise fail(str(error), WORKLOAD_FAILED) from error
    except NotFound as error:
        raise fail(error.message, NOT_FOUND) from error
    except (Unauthorized, Forbidden) as error:
        raise fail(error.message, NOT_AUTHORIZED) from error
    except InvalidRequest as error:
        raise fail(error.message, USAGE) from error
    except ApiError as error:
        raise fail(f"{error.message} (HTTP {error.status})", WORKLOAD_FAILED) from error
    except ClientError as error:
        raise fail(str(error), WORKLOAD_FAILED) from error
    finally:
        client.close()
