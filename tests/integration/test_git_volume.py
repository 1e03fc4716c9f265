"""The git volume (runtimes/local/volumes/git.py) against real repositories the test creates:
a branch, a revision that is not the branch's tip (commit id, abbreviated id, tag), git's own
message for a missing branch or revision, a repository served by `git http-backend` behind
HTTP Basic auth (right and wrong credentials; the password never in a message, a log record,
a URL, nor the argv or environment of any process while git runs), an ssh key handed to ssh
through a 0600 file only, temporary files removed, and a clone that outruns its timeout."""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, quote_plus

import pytest

from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.git import GitSource, clone
from tests.support.git_server import (
    PASSWORD,
    USER,
    GitServer,
    Repository,
    git,
    make_repository,
)

KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
TIMEOUT = 30.0


@pytest.fixture
def repository(tmp_path: Path) -> Repository:
    return make_repository(tmp_path)


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where clone's temporary files go, to see them while git runs and gone afterwards."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def readme(into: Path) -> str:
    return (into / "README").read_text()


# --- local repositories -------------------------------------------------------------------------


def test_a_branch_is_cloned_at_its_tip(repository: Repository, tmp_path: Path) -> None:
    into = tmp_path / "vol" / "code"
    assert clone(GitSource(repository.url, branch="dev"), into, timeout=TIMEOUT) == repository.third
    assert readme(into) == "third\n"
    assert clone(GitSource(repository.url), tmp_path / "head", timeout=TIMEOUT) == repository.second
    assert git("remote", "get-url", "origin", cwd=into) == repository.url


@pytest.mark.parametrize("revision", ["full id", "abbreviated id", "tag"])
def test_a_revision_that_is_not_the_tip_is_checked_out(
    repository: Repository, tmp_path: Path, revision: str
) -> None:
    name = {"full id": repository.first, "abbreviated id": repository.first[:8], "tag": "v1"}
    into = tmp_path / "code"
    into.mkdir()
    source = GitSource(repository.url, branch="main", revision=name[revision])
    assert clone(source, into, timeout=TIMEOUT) == repository.first
    assert readme(into) == "first\n"
    assert git("status", "--porcelain", cwd=into) == ""


def test_a_revision_of_another_branch(repository: Repository, tmp_path: Path) -> None:
    source = GitSource(repository.url, branch="main", revision=repository.third)
    assert clone(source, tmp_path / "code", timeout=TIMEOUT) == repository.third


def test_a_missing_branch_fails_with_gits_message(repository: Repository, tmp_path: Path) -> None:
    into = tmp_path / "code"
    with pytest.raises(VolumeError) as raised:
        clone(GitSource(repository.url, branch="nope"), into, timeout=TIMEOUT)
    assert str(raised.value).startswith(f"cannot clone {repository.url}: ")
    assert "Remote branch nope not found in upstream origin" in str(raised.value)
    assert not into.exists()


def test_a_missing_revision_fails_and_leaves_the_directory_empty(
    repository: Repository, tmp_path: Path
) -> None:
    into = tmp_path / "code"
    into.mkdir()
    with pytest.raises(VolumeError) as raised:
        clone(GitSource(repository.url, revision="nope"), into, timeout=TIMEOUT)
    assert str(raised.value) == (
        f"cannot clone {repository.url}: revision 'nope' not found: "
        "fatal: couldn't find remote ref nope"
    )
    assert list(into.iterdir()) == []
    assert clone(GitSource(repository.url), into, timeout=TIMEOUT) == repository.second


def test_a_directory_with_content_is_left_alone(repository: Repository, tmp_path: Path) -> None:
    into = tmp_path / "code"
    into.mkdir()
    (into / "mine").write_text("keep")
    with pytest.raises(VolumeError, match="exists and is not an empty directory"):
        clone(GitSource(repository.url), into, timeout=TIMEOUT)
    assert (into / "mine").read_text() == "keep"


# --- over HTTP, behind Basic auth -----------------------------------------------------------------


class Serve(Protocol):
    def __call__(self, *, echo: bool = False, redirect_to: str | None = None) -> GitServer: ...


@pytest.fixture
def serve(repository: Repository, private_tmp: Path) -> Iterator[Serve]:
    """Starts servers of the test's repository; each is shut down when the test ends."""
    started: list[tuple[GitServer, threading.Thread]] = []

    def start(*, echo: bool = False, redirect_to: str | None = None) -> GitServer:
        server = GitServer(repository.bare.parent, private_tmp, echo=echo, redirect_to=redirect_to)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,))
        thread.start()
        started.append((server, thread))
        return server

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join()


def every_form(text: str) -> list[str]:
    """Where the password would show in `text`, in any form."""
    forms = [PASSWORD, quote(PASSWORD, safe=""), quote_plus(PASSWORD)]
    forms.append(base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
    return [form for form in forms if form in text]


def test_credentials_from_a_secret_clone_over_http(
    repository: Repository,
    serve: Serve,
    tmp_path: Path,
    private_tmp: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lockstep")
    server = serve()
    source = GitSource(server.url("origin.git"), revision="v1", username=USER, password=PASSWORD)
    into = tmp_path / "code"
    assert clone(source, into, timeout=TIMEOUT) == repository.first
    assert readme(into) == "first\n"
    seen = server.seen
    assert seen.authorizations[0] is None  # asked first, then answered 401
    assert "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() in (
        seen.authorizations
    )
    assert not [path for path in seen.paths if every_form(path)]
    assert any(b"git-remote-http" in argv for argv in seen.processes)  # git was caught waiting
    assert not [argv for argv in seen.processes if every_form(argv.decode(errors="replace"))]
    (directory,) = {name.split("/")[0] for name in seen.temp_files}
    assert seen.temp_files == {directory: 0o700, f"{directory}/credentials": 0o600}
    assert list(private_tmp.iterdir()) == []
    assert not every_form(caplog.text)
    assert not every_form((into / ".git" / "config").read_text())


def test_a_wrong_password_fails_without_showing_it(
    serve: Serve,
    tmp_path: Path,
    private_tmp: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lockstep")
    server = serve()
    source = GitSource(server.url("origin.git"), username=USER, password=PASSWORD[::-1])
    with pytest.raises(VolumeError) as raised:
        clone(source, tmp_path / "code", timeout=TIMEOUT)
    assert str(raised.value) == (
        f"cannot clone {server.url('origin.git')}: fatal: Authentication failed for "
        f"'{server.url('origin.git')}/'"
    )
    assert not every_form(str(raised.value)) and PASSWORD[::-1] not in str(raised.value)
    assert PASSWORD[::-1] not in caplog.text
    assert list(private_tmp.iterdir()) == []
    assert not (tmp_path / "code").exists()


def test_a_server_quoting_the_credentials_is_redacted(
    serve: Serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lockstep")
    server = serve(echo=True)
    wrong = PASSWORD[::-1]
    source = GitSource(server.url("origin.git"), username=USER, password=wrong)
    with pytest.raises(VolumeError) as raised:
        clone(source, tmp_path / "code", timeout=TIMEOUT)
    assert str(raised.value) == (
        f"cannot clone {server.url('origin.git')}: "
        "fatal: remote error: denied *** *** *** Basic ***"
    )
    assert wrong not in caplog.text


def test_without_credentials_git_fails_at_once_instead_of_prompting(
    serve: Serve, tmp_path: Path
) -> None:
    server = serve()
    with pytest.raises(VolumeError, match="could not read Username"):
        clone(GitSource(server.url("origin.git")), tmp_path / "code", timeout=TIMEOUT)


def test_credentials_go_to_their_origin_only(serve: Serve, tmp_path: Path) -> None:
    """The helper answers for the repository's scheme, host and port only: a server that the
    repository's redirects to (another port of the same host) is given no credentials."""
    elsewhere = serve()
    asked = serve(redirect_to=elsewhere.url(""))
    source = GitSource(asked.url("origin.git"), username=USER, password=PASSWORD)
    with pytest.raises(VolumeError) as raised:
        clone(source, tmp_path / "code", timeout=TIMEOUT)
    assert f"could not read Username for '{elsewhere.url('')[:-1]}'" in str(raised.value)
    assert asked.seen.authorizations == [None]
    assert elsewhere.seen.authorizations == [None]


# --- ssh, time ----------------------------------------------------------------------------------


FAKE_SSH = """#!{python}
# Stands in for ssh: records its argv and the key file it was given, then runs the command it
# was asked to run on the server (as sshd would, here), with git's environment.
import json, os, stat, subprocess, sys
argv = sys.argv[1:]
key = argv[argv.index("-i") + 1]
record = {{
    "argv": argv,
    "key_mode": stat.S_IMODE(os.stat(key).st_mode),
    "key": open(key).read(),
    "environ": dict(os.environ),
}}
with open({record!r}, "a") as out:
    out.write(json.dumps(record) + "\\n")
sys.exit(subprocess.call(["sh", "-c", argv[-1]]))
"""


def test_an_ssh_key_reaches_ssh_through_a_private_file_only(
    repository: Repository,
    tmp_path: Path,
    private_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stand-in for ssh (no ssh server here): what ssh would be given, and its clean-up."""
    bin_dir, record = tmp_path / "bin", tmp_path / "ssh.jsonl"
    bin_dir.mkdir()
    ssh = bin_dir / "ssh"
    ssh.write_text(FAKE_SSH.format(python=sys.executable, record=str(record)))
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    source = GitSource(f"ssh://git@git.invalid{repository.bare}", branch="dev", ssh_key=KEY)
    assert clone(source, tmp_path / "code", timeout=TIMEOUT) == repository.third
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert calls
    for call in calls:
        key_file = call["argv"][call["argv"].index("-i") + 1]
        assert call["argv"][:6] == [
            "-i",
            key_file,
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
        ]
        assert Path(key_file).parent.parent == private_tmp
        assert (call["key_mode"], call["key"]) == (0o600, f"{KEY}\n")
        assert not any("OPENSSH" in argument for argument in call["argv"])
        assert not any("OPENSSH" in value for value in call["environ"].values())
    assert list(private_tmp.iterdir()) == []


def test_a_clone_past_its_timeout_is_stopped(tmp_path: Path, private_tmp: Path) -> None:
    """A server that accepts and never answers: git and its helper are killed."""
    release = threading.Event()

    class Silent(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            release.wait(TIMEOUT)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Silent) as server:
        thread = threading.Thread(target=server.serve_forever, args=(0.05,))
        thread.start()
        url = f"http://127.0.0.1:{server.server_address[1]}/origin.git"
        try:
            with pytest.raises(VolumeError) as raised:
                clone(GitSource(url, username=USER, password=PASSWORD), tmp_path / "c", timeout=0.5)
        finally:
            release.set()
            server.shutdown()
            thread.join()
    assert str(raised.value) == f"cannot clone {url}: git did not finish within 0.5 s"
    assert not (tmp_path / "c").exists()
    assert list(private_tmp.iterdir()) == []
