"""`lockstep login` and `lockstep config`: remember servers as named contexts and switch
between them (see contexts.py for the file and the environment overrides)."""

from typing import TYPE_CHECKING, Annotated

import typer

from lockstep.cli.connection import NOT_AUTHORIZED, NOT_FOUND, USAGE, fail
from lockstep.cli.groups import command_group
from lockstep.cli.output import table

if TYPE_CHECKING:
    from lockstep.cli.contexts import Context

config_app = command_group(no_args_is_help=True, help="Switch between lockstep servers.")


def login(
    server: Annotated[
        str | None,
        typer.Argument(
            help="The lockstep server, e.g. host:8080 (http:// unless it says https://)."
        ),
    ] = None,
    *,
    url: Annotated[
        str | None, typer.Option("--url", help="The server, as an option instead.")
    ] = None,
    client_id: Annotated[
        str | None, typer.Option("--client-id", help="An application's id.")
    ] = None,
    client_secret: Annotated[
        str | None,
        typer.Option("--client-secret", help="Its secret (asked for when not given)."),
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Sign in as a user (their email) instead.")
    ] = None,
    password: Annotated[
        str | None,
        typer.Option("--password", help="The user's password (asked for when not given)."),
    ] = None,
    sso: Annotated[
        str | None,
        typer.Option(
            "--sso",
            help="Sign in through this identity provider (its alias) in your browser instead.",
        ),
    ] = None,
    token: Annotated[str | None, typer.Option("--token", help="A token instead.")] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="Name of the context (default: the host).")
    ] = None,
) -> None:
    """Check the credentials against the server and make it the current context. A user's
    password is not kept: the refresh token it is exchanged for is (until the user signs out
    or it expires, LOCKSTEP_REFRESH_TOKEN_TTL_SECONDS on the server). With --sso the user
    signs in through an identity provider in their browser, and the same is kept."""
    from lockstep.cli import contexts
    from lockstep.sdk import ApiError, ClientError

    given = server or url
    if given is None or (server is not None and url is not None and server != url):
        raise fail("name the server once: `lockstep login HOST:PORT` or --url URL", USAGE)
    url = contexts.server_url(given)
    if [token, client_id, user, sso].count(None) != 3:
        raise fail("give one of --client-id (and its secret), --user, --sso or --token", USAGE)
    if password is not None and user is None:
        raise fail("--password goes with --user", USAGE)
    if client_id is not None and client_secret is None:
        client_secret = typer.prompt("client secret", hide_input=True)
    refresh_token = None
    if user is not None:
        given = password if password is not None else typer.prompt("password", hide_input=True)
        refresh_token = _signed_in(url, user, given)
    if sso is not None:
        from lockstep.cli.browser_sign_in import browser_sign_in

        signed_in = browser_sign_in(url, sso)
        user, refresh_token = signed_in.email, signed_in.refresh_token
    checked = contexts.Context(
        url=url,
        token=token,
        client_id=client_id,
        client_secret=client_secret,
        user=user,
        refresh_token=refresh_token,
    )
    try:
        with checked.client() as client:
            client.projects()
    except ApiError as error:
        status = NOT_AUTHORIZED if error.status in {401, 403} else 1
        raise fail(f"{url} refused: {error.message}", status) from error
    except ClientError as error:
        raise fail(str(error), 1) from error
    name = context or _host_of(url)
    saved = contexts.load()
    saved.contexts[name] = checked
    saved.current = name
    path = contexts.save(saved)
    typer.echo(f"logged in to {url} as context {name} ({path})")


def _signed_in(url: str, user: str, password: str) -> str:
    """The refresh token of a user's sign-in with their password."""
    import httpx

    body = {"grantType": "password", "username": user, "password": password}
    try:
        response = httpx.post(f"{url}/api/v1/token", json=body, timeout=30)
    except httpx.HTTPError as error:
        raise fail(f"cannot reach {url}: {error}", 1) from error
    if response.status_code != 200:
        try:
            message = str(response.json()["message"])
        except (ValueError, KeyError, TypeError):
            message = response.text[:200]
        status = NOT_AUTHORIZED if response.status_code in {401, 429} else 1
        raise fail(f"{url} refused: {message}", status)
    return str(response.json()["refreshToken"])


def _host_of(url: str) -> str:
    """`host:port` of a URL, the name a context gets by default."""
    import httpx

    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host


@config_app.command("get-contexts")
def get_contexts() -> None:
    """List the saved contexts; the current one is marked."""
    from lockstep.cli import contexts

    saved = contexts.load()
    rows = [
        [
            "*" if name == saved.current else "",
            name,
            context.url,
            _auth_of(context),
        ]
        for name, context in sorted(saved.contexts.items())
    ]
    table(["CURRENT", "NAME", "URL", "AUTH"], rows)


def _auth_of(context: "Context") -> str:
    if context.token:
        return "token"
    if context.user:
        return f"user {context.user}"
    return f"application {context.client_id or ''}"


@config_app.command("use-context")
def use_context(name: Annotated[str, typer.Argument(help="A saved context.")]) -> None:
    """Make a saved context the current one."""
    from lockstep.cli import contexts

    saved = contexts.load()
    if name not in saved.contexts:
        raise fail(f"no context named {name!r}", NOT_FOUND)
    saved.current = name
    contexts.save(saved)
    typer.echo(f"current context: {name}")


@config_app.command("current-context")
def current_context() -> None:
    """Print the current context's name."""
    from lockstep.cli import contexts

    saved = contexts.load()
    if saved.current is None:
        raise fail("no current context: run `lockstep login`", NOT_FOUND)
    typer.echo(saved.current)


@config_app.command("delete-context")
def delete_context(name: Annotated[str, typer.Argument(help="A saved context.")]) -> None:
    """Forget a saved context (and its credentials)."""
    from lockstep.cli import contexts

    saved = contexts.load()
    if saved.contexts.pop(name, None) is None:
        raise fail(f"no context named {name!r}", NOT_FOUND)
    if saved.current == name:
        saved.current = None
    contexts.save(saved)
    typer.echo(f"deleted context {name}")
