"""Where the CLI finds lockstep: named contexts (a server URL with a token, an application's
credentials or a user's refresh token) in a per-user file, one of them current;
`LOCKSTEP_URL` and `LOCKSTEP_TOKEN` override it.

The file is `$XDG_CONFIG_HOME/lockstep/config.json` (`~/.config/lockstep/config.json`), or
`LOCKSTEP_CONFIG`; it holds secrets, so it is written with mode 0600. A server's URL may be given
without its scheme (`localhost:8080`): it is then `http://localhost:8080`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lockstep.sdk import Client
    from lockstep.sdk import Retry as RetryPolicy


def server_url(text: str) -> str:
    """`text` as a URL: `http://` in front unless it names a scheme; no trailing slash."""
    text = text.strip()
    if "://" not in text:
        text = f"http://{text}"
    return text.rstrip("/")


@dataclass(frozen=True, slots=True)
class Context:
    url: str
    token: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    user: str | None = None
    """The user signed in (`lockstep login --user`), whose `refresh_token` this is."""
    refresh_token: str | None = None

    def client(self, retry: RetryPolicy | None = None) -> Client:
        """An SDK client for this server, with these credentials."""
        from lockstep.sdk import Client, Retry

        return Client(
            server_url(self.url),
            token=self.token,
            client_id=self.client_id,
            client_secret=self.client_secret,
            refresh_token=self.refresh_token,
            retry=retry or Retry(),
        )


@dataclass(slots=True)
class Contexts:
    current: str | None = None
    contexts: dict[str, Context] = field(default_factory=dict)


class NoContext(Exception):
    """Nothing says which server to talk to."""


def config_path() -> Path:
    explicit = os.environ.get("LOCKSTEP_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else Path.home() / ".config") / "lockstep" / "config.json"


def load(path: Path | None = None) -> Contexts:
    path = path or config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return Contexts()
    return Contexts(
        current=data.get("current"),
        contexts={name: Context(**fields) for name, fields in data.get("contexts", {}).items()},
    )


def save(contexts: Contexts, path: Path | None = None) -> Path:
    """Write the file atomically, readable by its owner only."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {
        "current": contexts.current,
        "contexts": {
            name: {k: v for k, v in asdict(context).items() if v is not None}
            for name, context in contexts.contexts.items()
        },
    }
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(data, handle, indent=2)
    temporary.replace(path)
    return path


def active(context_name: str | None = None) -> Context:
    """The context to use: `LOCKSTEP_URL`/`LOCKSTEP_TOKEN` over the named or current one."""
    given_url = os.environ.get("LOCKSTEP_URL")
    url = server_url(given_url) if given_url else None
    token = os.environ.get("LOCKSTEP_TOKEN")
    saved = load()
    name = context_name or saved.current
    chosen = saved.contexts.get(name) if name else None
    if context_name and chosen is None:
        raise NoContext(f"no context named {context_name!r}; see `lockstep config get-contexts`")
    if chosen is None:
        if url is None:
            raise NoContext("not logged in: run `lockstep login HOST:PORT` or set LOCKSTEP_URL")
        return Context(url=url, token=token)
    if token is not None:
        return Context(url=url or chosen.url, token=token)
    if url is not None:
        return Context(
            url=url,
            token=chosen.token,
            client_id=chosen.client_id,
            client_secret=chosen.client_secret,
            user=chosen.user,
            refresh_token=chosen.refresh_token,
        )
    return chosen
