"""A person's sign-in from the CLI, run as a user runs it (subprocesses) against a live server:
an operator makes the user with `lockstep admin create-user`, the user runs `lockstep login
--user` (with --password or at the hidden prompt), the context file keeps their refresh token
and never their password (mode 0600), and every later command works as the user until they
are signed out, their password is reset or they are deleted (exit status 4 from then on). Also
the refusals of `login` (a wrong password: 4; two kinds of credentials: 2) and the operator's
recovery commands `admin reset-password|list-users|delete-user|grant --user`."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.e2e.test_training_cli import Cli
from tests.support.api import poll
from tests.support.server import LiveServer

EMAIL = "ada@example.com"
RESEARCHER = ("--role", "L1 researcher", "--scope", "project:1")


def admin(server: LiveServer, *args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    """`lockstep admin …` on the live server's store, as its operator runs it (no token)."""
    done = subprocess.run(
        [sys.executable, "-m", "lockstep", "admin", *args],
        env=server.environment(),
        cwd=server.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    return done


def admin_json(server: LiveServer, *args: str) -> Any:
    return json.loads(admin(server, *args).stdout)


def attempt(cli: Cli, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`lockstep …` with `cli`'s config, whatever its exit status; `stdin` is its input. It runs
    in a session of its own, without a controlling terminal, so that a hidden prompt (getpass)
    reads stdin rather than the terminal of whoever runs the tests."""
    return subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        env=cli.env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        start_new_session=True,
    )


def login_args(server: LiveServer, email: str, password: str) -> tuple[str, ...]:
    return ("login", "--url", server.url, "--user", email, "--password", password)


def values(data: object) -> Iterator[object]:
    """Every value in a JSON document, at any depth (keys included)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from values(value)
    elif isinstance(data, list):
        for item in data:
            yield from values(item)
    else:
        yield data


def project_ids(cli: Cli) -> list[str]:
    return [str(p["id"]) for p in cli.json("project", "list", "--json")]


def test_a_user_logs_in_and_the_cli_keeps_their_refresh_token_not_their_password(
    live_server: LiveServer, tmp_path: Path
) -> None:
    created = admin_json(live_server, "create-user", EMAIL, *RESEARCHER)
    assert set(created) == {"id", "username", "tempPassword", "accessRuleId"}
    assert created["username"] == EMAIL
    password = str(created["tempPassword"])
    cli = Cli(live_server, tmp_path)

    logged = cli(*login_args(live_server, EMAIL, password)).stdout
    assert logged.startswith(f"logged in to {live_server.url} as context ")
    rows = [line.split() for line in cli("config", "get-contexts").stdout.splitlines()]
    assert rows[0] == ["CURRENT", "NAME", "URL", "AUTH"]
    (row,) = rows[1:]
    assert row[0] == "*" and row[2] == live_server.url and row[3:] == ["user", EMAIL]

    assert stat.S_IMODE(cli.config.stat().st_mode) == 0o600
    text = cli.config.read_text()
    saved = json.loads(text)
    (context,) = saved["contexts"].values()
    assert context["user"] == EMAIL and context["url"] == live_server.url
    assert isinstance(context["refresh_token"], str) and context["refresh_token"]
    assert set(context) == {"url", "user", "refresh_token"}
    assert password not in list(values(saved)) and password not in text

    assert "1" in project_ids(cli)  # each command obtains an access token with the refresh one
    assert "1" in project_ids(cli)


def test_login_asks_for_the_password_when_it_is_not_given(
    live_server: LiveServer, tmp_path: Path
) -> None:
    password = str(admin_json(live_server, "create-user", EMAIL, *RESEARCHER)["tempPassword"])
    cli = Cli(live_server, tmp_path)

    done = attempt(cli, "login", "--url", live_server.url, "--user", EMAIL, stdin=f"{password}\n")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "password" in done.stderr + done.stdout  # the prompt
    assert password not in done.stdout + done.stderr  # not echoed
    assert "logged in to" in done.stdout
    assert password not in cli.config.read_text()
    assert "1" in project_ids(cli)


def test_a_wrong_password_is_refused_and_saves_nothing(
    live_server: LiveServer, tmp_path: Path
) -> None:
    admin(live_server, "create-user", EMAIL, *RESEARCHER)
    cli = Cli(live_server, tmp_path)

    refused = cli(*login_args(live_server, EMAIL, "Not-The-Password-1"), status=4).stderr
    assert refused.startswith(f"error: {live_server.url} refused: ")
    assert "not valid" in refused and "Traceback" not in refused
    unknown = cli(*login_args(live_server, "nobody@example.com", "Whatever-Pass-2"), status=4)
    assert unknown.stderr == refused  # the same answer: it tells no names
    assert not cli.config.exists()
    cli("config", "current-context", status=3)


def test_login_takes_one_kind_of_credentials(live_server: LiveServer, tmp_path: Path) -> None:
    cli = Cli(live_server, tmp_path)
    url = ("login", "--url", live_server.url)
    user = ("--user", EMAIL, "--password", "Some-Password-3")
    application = ("--client-id", "app", "--client-secret", "secret")
    token = ("--token", "t")
    for given in ((*user, *application), (*user, *token), (*application, *token)):
        refused = cli(*url, *given, status=2).stderr
        assert "give one of --client-id (and its secret), --user, --sso or --token" in refused
    assert not cli.config.exists()


def test_signing_a_user_out_refuses_the_cli_from_then_on(
    live_server: LiveServer, tmp_path: Path
) -> None:
    created = admin_json(live_server, "create-user", EMAIL, *RESEARCHER)
    cli = Cli(live_server, tmp_path)
    cli(*login_args(live_server, EMAIL, str(created["tempPassword"])))
    assert "1" in project_ids(cli)

    response = live_server.api().post(f"/api/v1/users/{created['id']}/logout")
    assert response.status_code == 200, response.text

    def refused() -> subprocess.CompletedProcess[str] | None:
        done = attempt(cli, "project", "list", "--json")
        return done if done.returncode != 0 else None

    done = poll(refused, timeout=15, what="the CLI to be refused after the user's logout")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ") and "signed out" in done.stderr
    assert "Traceback" not in done.stderr
    cli("project", "list", "--json", status=4)  # and stays refused


def test_the_operator_resets_lists_and_deletes_users(
    live_server: LiveServer, tmp_path: Path
) -> None:
    created = admin_json(live_server, "create-user", EMAIL, *RESEARCHER)
    old = str(created["tempPassword"])
    cli = Cli(live_server, tmp_path / "ada")
    cli(*login_args(live_server, EMAIL, old))
    assert "1" in project_ids(cli)

    reset = admin_json(live_server, "reset-password", EMAIL)
    assert set(reset) == {"tempPassword"}
    new = str(reset["tempPassword"])
    assert new != old
    # The reset signs the user out: the saved refresh token is refused.
    cli("project", "list", "--json", status=4)
    fresh = Cli(live_server, tmp_path / "fresh")
    assert "not valid" in fresh(*login_args(live_server, EMAIL, old), status=4).stderr
    assert not fresh.config.exists()
    cli(*login_args(live_server, EMAIL, new))
    assert "1" in project_ids(cli)

    listed = admin_json(live_server, "list-users")
    assert isinstance(listed, list)
    (user,) = [u for u in listed if u["username"] == EMAIL]
    assert user["id"] == created["id"] and set(user) == {"id", "username", "createdAt"}
    assert old not in json.dumps(listed) and new not in json.dumps(listed)

    admin(live_server, "delete-user", EMAIL)
    assert EMAIL not in [u["username"] for u in admin_json(live_server, "list-users")]
    refused = cli("project", "list", "--json", status=4).stderr  # the saved token is refused
    assert "Traceback" not in refused
    gone = fresh(*login_args(live_server, EMAIL, new), status=4).stderr
    assert "not valid" in gone
    missing = admin(live_server, "delete-user", EMAIL, status=1).stderr
    assert missing.strip() == f"error: no user is named {EMAIL!r}"

    nobody = admin(
        live_server, "grant", "--user", "nobody@example.com", *RESEARCHER, status=1
    ).stderr
    assert nobody.strip() == "error: no user is named 'nobody@example.com'"
