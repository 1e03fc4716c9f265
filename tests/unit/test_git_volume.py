"""The git volume's pure parts (runtimes/local/volumes/git.py): credentials from the project's
secrets (secretRef, or the older passwordSecret fields) and the messages when one is missing,
the checks made before git runs, redaction of every form of a credential, and the argv and
environment given to git, which never hold a credential."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.git import (
    REDACTED,
    GitCredentials,
    GitSource,
    check_source,
    clone_argv,
    credential_config,
    credential_lines,
    credentials_of,
    display,
    fetch_all_argv,
    fetch_argv,
    git_environment,
    origin_of,
    redact,
    secret_forms,
    source_of,
    transport_of,
)
from lockstep.schemas.storage import Git

PASSWORD = "s3cr:t/p@ss w%rd+"
KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
REPO = "https://git.example.com/team/repo.git"
SOURCE = GitSource(REPO, branch="main", revision="v1", username="alice", password=PASSWORD)
SECRETS = ProjectSecrets(
    secrets={
        "creds": {"User": "alice", "Password": PASSWORD},
        "login": {"name": "bob", "token": "t0ken"},
        "deploy": {"ssh-privatekey": KEY},
    }
)


def entry(**fields: Any) -> Git:
    return Git.model_validate_json(json.dumps({"repository": REPO, "path": "/code", **fields}))


# --- credentials from the project's secrets ---------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"secretRef": {"name": "creds"}}, GitCredentials("alice", PASSWORD)),
        (
            {"secretRef": {"name": "creds", "authenticationMethod": "password"}},
            GitCredentials("alice", PASSWORD),
        ),
        (
            {
                "secretRef": {
                    "name": "login",
                    "secretKeyOfUser": "name",
                    "secretKeyOfPassword": "token",
                }
            },
            GitCredentials("bob", "t0ken"),
        ),
        ({"passwordSecret": "creds"}, GitCredentials("alice", PASSWORD)),
        (
            {"passwordSecret": "login", "secretKeyOfUser": "name", "secretKeyOfPassword": "token"},
            GitCredentials("bob", "t0ken"),
        ),
        (
            {"secretRef": {"name": "creds"}, "passwordSecret": "login"},
            GitCredentials("alice", PASSWORD),
        ),
        (
            {"secretRef": {"name": "deploy", "authenticationMethod": "ssh-key"}},
            GitCredentials(ssh_key=KEY),
        ),
        ({}, None),
        ({"secretKeyOfUser": "name"}, None),
    ],
    ids=[
        "secretRef, default keys",
        "secretRef, password method",
        "secretRef, named keys",
        "passwordSecret, default keys",
        "passwordSecret, named keys",
        "secretRef wins over passwordSecret",
        "secretRef, ssh key",
        "no secret",
        "keys without a secret",
    ],
)
def test_credentials_come_from_the_secret_the_entry_names(
    fields: dict[str, Any], expected: GitCredentials | None
) -> None:
    assert credentials_of(entry(**fields), SECRETS) == expected


@pytest.mark.parametrize(
    ("fields", "secret", "key"),
    [
        ({"secretRef": {"name": "absent"}}, "absent", "User"),
        ({"secretRef": {"name": "creds", "secretKeyOfPassword": "pw"}}, "creds", "pw"),
        ({"passwordSecret": "login"}, "login", "User"),
        ({"passwordSecret": "creds", "secretKeyOfUser": "who"}, "creds", "who"),
        (
            {"secretRef": {"name": "creds", "authenticationMethod": "ssh-key"}},
            "creds",
            "ssh-privatekey",
        ),
    ],
)
def test_a_missing_secret_or_key_is_named_without_any_value(
    fields: dict[str, Any], secret: str, key: str
) -> None:
    with pytest.raises(VolumeError) as raised:
        credentials_of(entry(**fields), SECRETS)
    message = str(raised.value)
    assert message == (
        f"cannot clone {REPO}: the project has no secret {secret!r} with a key {key!r}"
    )
    assert PASSWORD not in message
    assert "alice" not in message
    assert isinstance(raised.value, PodStartError)


def test_a_credential_with_a_line_break_is_refused_without_showing_it() -> None:
    secrets = ProjectSecrets(secrets={"creds": {"User": "alice", "Password": f"{PASSWORD}\n"}})
    with pytest.raises(
        VolumeError, match="key 'Password' of secret 'creds' holds a line break"
    ) as raised:
        credentials_of(entry(secretRef={"name": "creds"}), secrets)
    assert PASSWORD not in str(raised.value)


def test_an_entry_becomes_a_source() -> None:
    git = entry(branch="dev", revision="abc1234", passwordSecret="creds")
    assert source_of(git, SECRETS) == GitSource(
        REPO, branch="dev", revision="abc1234", username="alice", password=PASSWORD
    )
    assert source_of(entry(), SECRETS) == GitSource(REPO)
    with pytest.raises(VolumeError, match="needs a repository"):
        source_of(Git.model_validate_json('{"path": "/code"}'), SECRETS)


def test_no_repr_shows_a_credential() -> None:
    shown = repr(GitSource(REPO, username="alice", password=PASSWORD, ssh_key=KEY))
    shown += repr(GitCredentials("alice", PASSWORD, KEY))
    assert "alice" in shown
    assert PASSWORD not in shown
    assert "OPENSSH" not in shown


# --- redaction ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "leaked",
    [
        PASSWORD,
        quote(PASSWORD, safe=""),
        quote(PASSWORD),
        quote_plus(PASSWORD),
        quote(PASSWORD, safe="").lower(),
        f"alice:{PASSWORD}",
        f"https://alice:{quote(PASSWORD, safe='')}@git.example.com/team/repo.git",
        base64.b64encode(f"alice:{PASSWORD}".encode()).decode(),
    ],
    ids=[
        "plain",
        "encoded",
        "encoded but /",
        "form-encoded",
        "lower-case hex",
        "pair",
        "in a URL",
        "basic",
    ],
)
def test_every_form_of_the_password_is_redacted(leaked: str) -> None:
    message = f"fatal: could not read from {leaked}: denied"
    redacted = redact(message, secret_forms(SOURCE))
    assert REDACTED in redacted
    assert PASSWORD not in redacted
    assert quote(PASSWORD, safe="") not in redacted
    assert redacted.startswith("fatal: could not read from ")
    assert redacted.endswith(": denied")


def test_a_pair_is_redacted_whole_and_the_username_alone_is_kept() -> None:
    assert redact(f"for alice:{PASSWORD} (alice)", secret_forms(SOURCE)) == "for *** (alice)"


def test_the_ssh_key_is_redacted() -> None:
    forms = secret_forms(GitSource("git@host:repo", ssh_key=KEY + "\n"))
    assert redact(f"key: {KEY}.", forms) == "key: ***."
    assert redact(f"key: {quote(KEY, safe='')}.", forms) == "key: ***."


def test_nothing_is_redacted_without_a_secret() -> None:
    assert secret_forms(GitSource(REPO)) == ()
    assert secret_forms(GitSource(REPO, username="alice", password="")) == ()
    assert redact("fatal: nope", ()) == "fatal: nope"
    assert redact("fatal: nope", ("",)) == "fatal: nope"


def test_a_password_in_a_url_is_not_displayed() -> None:
    encoded = quote(PASSWORD, safe="")
    assert display(f"https://alice:{encoded}@host/r.git") == "https://alice:***@host/r.git"
    assert display("https://alice@host/r.git") == "https://alice@host/r.git"
    assert display("git@host:r.git") == "git@host:r.git"


# --- checks before git runs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repository", "transport"),
    [
        ("https://host/r.git", "https"),
        ("HTTP://host/r.git", "http"),
        ("ssh://git@host:22/r.git", "ssh"),
        ("git@github.com:org/r.git", "ssh"),
        ("git://host/r.git", "git"),
        ("file:///srv/r.git", "file"),
        ("/srv/r.git", "file"),
        ("./a:b/r.git", "file"),
        ("ext::sh -c touch% /tmp/x", "ext"),
    ],
)
def test_the_transport_of_a_repository(repository: str, transport: str) -> None:
    assert transport_of(repository) == transport


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            GitSource(f"https://alice:{quote(PASSWORD, safe='')}@host/r.git"),
            "the URL holds a password",
        ),
        (GitSource("ext::sh -c id"), "not ext"),
        (GitSource("--upload-pack=touch /tmp/x"), "not a repository URL or path"),
        (GitSource(REPO, branch="--orphan"), "'--orphan' is not a valid branch"),
        (GitSource(REPO, revision="HEAD:secret.txt"), "is not a valid revision"),
        (GitSource(REPO, revision="a b"), "is not a valid revision"),
        (GitSource("git@host:r.git", username="alice", password=PASSWORD), "over http(s) only"),
        (GitSource(REPO, ssh_key=KEY), "needs an ssh repository URL"),
        (GitSource(REPO, username="alice", password=f"{PASSWORD}\r"), "line break"),
    ],
)
def test_what_git_must_not_be_asked_is_refused(source: GitSource, message: str) -> None:
    with pytest.raises(VolumeError) as raised:
        check_source(source)
    assert message in str(raised.value)
    assert redact(str(raised.value), secret_forms(GitSource(REPO, password=PASSWORD))) == str(
        raised.value
    )


def test_good_sources_pass() -> None:
    check_source(SOURCE)
    check_source(GitSource("git@host:org/r.git", branch="release/1.0", ssh_key=KEY))
    check_source(GitSource("/srv/r.git", revision="0123abc"))


# --- argv and environment -----------------------------------------------------------------------


def test_the_credential_helper_is_scoped_to_the_origin_and_reads_a_file() -> None:
    config = credential_config("https://Git.Example.com:8443/team/r.git", Path("/tmp/x/creds"))
    assert config == [
        "-c",
        "credential.helper=",
        "-c",
        "credential.https://Git.Example.com:8443.helper="
        '!f() { test "$1" != get || cat /tmp/x/creds; }; f',
    ]
    assert credential_config(REPO, None) == []
    assert origin_of("https://alice@[::1]:8080/r.git") == "https://[::1]:8080"
    with pytest.raises(VolumeError, match="not a valid URL"):
        origin_of("https://a=b;c/r.git")


def test_the_helper_prints_git_credential_lines() -> None:
    assert credential_lines(SOURCE) == f"username=alice\npassword={PASSWORD}\n"
    assert credential_lines(GitSource(REPO, password="p")) == "password=p\n"


def test_argv_never_holds_a_credential() -> None:
    config = credential_config(REPO, Path("/tmp/lockstep-git-1/credentials"))
    argvs = [
        clone_argv(SOURCE, Path("/vol/code"), config=config),
        fetch_argv("v1", config=config),
        fetch_all_argv(shallow=True, config=config),
    ]
    assert argvs[0] == [
        "git",
        *config,
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--no-checkout",
        "--branch",
        "main",
        "--",
        REPO,
        "/vol/code",
    ]
    for argv in argvs:
        for argument in argv:
            assert not any(form in argument for form in secret_forms(SOURCE)), argument


def test_clone_argv_without_a_revision_checks_the_branch_out() -> None:
    assert clone_argv(GitSource(REPO), Path("/v"), config=[]) == [
        "git",
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--",
        REPO,
        "/v",
    ]


def test_git_never_prompts_nor_reads_configuration_lockstep_does_not_control() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/lockstep",
        "GIT_DIR": "/elsewhere/.git",
        "GIT_ASKPASS": "/usr/bin/ksshaskpass",
        "SSH_ASKPASS": "/usr/bin/ksshaskpass",
        "GIT_SSH_COMMAND": "ssh -i /home/lockstep/.ssh/id",
        "GIT_TRACE_CURL": "1",
        "GIT_SSL_CAINFO": "/etc/ca.pem",
        "GIT_PROXY_COMMAND": "corkscrew",
    }
    env = git_environment(base, ssh_key_file=None)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/lockstep",
        "GIT_SSL_CAINFO": "/etc/ca.pem",
        "GIT_PROXY_COMMAND": "corkscrew",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
        "LC_ALL": "C",
    }


def test_an_ssh_key_is_named_by_its_file_only() -> None:
    env = git_environment({}, ssh_key_file=Path("/tmp/lockstep-git-1/ssh-key"))
    assert env["GIT_SSH_COMMAND"] == (
        "ssh -i /tmp/lockstep-git-1/ssh-key -o IdentitiesOnly=yes -o BatchMode=yes"
    )
    assert all("OPENSSH" not in value for value in env.values())
