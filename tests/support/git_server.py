"""A git repository and an HTTP git server for tests: a bare repository with two branches
and a tag (`make_repository`), and `git http-backend` behind HTTP Basic auth (`GitServer`),
which records what it saw (requests, and the processes of this machine while git waited)."""

from __future__ import annotations

import base64
import contextlib
import os
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit

USER = "alice"
PASSWORD = "s3cr:t/p@ss w%rd+"
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
GIT_ENV = {k: v for k, v in GIT_ENV.items() if k not in {"GIT_DIR", "GIT_WORK_TREE"}}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@dataclass(frozen=True)
class Repository:
    """A bare repository: main (first ← second), dev (← third, off second), tag v1 on first."""

    bare: Path
    first: str
    second: str
    third: str

    @property
    def url(self) -> str:
        return self.bare.as_uri()


def make_repository(tmp_path: Path) -> Repository:
    """The repository `Repository` describes, made under `tmp_path`."""
    work = tmp_path / "work"
    work.mkdir()
    git("init", "--quiet", "--initial-branch", "main", cwd=work)
    commits = []
    for branch, text in (("main", "first"), ("main", "second"), ("dev", "third")):
        if branch == "dev":
            git("checkout", "--quiet", "-b", "dev", cwd=work)
        (work / "README").write_text(f"{text}\n")
        git("add", "README", cwd=work)
        git("commit", "--quiet", "-m", text, cwd=work)
        commits.append(git("rev-parse", "HEAD", cwd=work))
    git("tag", "--annotate", "-m", "v1", "v1", commits[0], cwd=work)
    git("checkout", "--quiet", "main", cwd=work)
    bare = tmp_path / "origin.git"
    git("clone", "--quiet", "--bare", str(work), str(bare), cwd=tmp_path)
    return Repository(bare, *commits)


@dataclass
class Seen:
    """What the server saw: each request, and the processes of this machine while git waited
    for an authenticated answer (argv of all, environment of ours) and lockstep's temp files."""

    paths: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    processes: list[bytes] = field(default_factory=list)
    temp_files: dict[str, int] = field(default_factory=dict)


class GitServer(ThreadingHTTPServer):
    def __init__(self, root: Path, temp: Path, *, echo: bool, redirect_to: str | None) -> None:
        super().__init__(("127.0.0.1", 0), GitHandler)
        self.root, self.temp, self.echo, self.redirect_to = root, temp, echo, redirect_to
        self.seen = Seen()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{name}"


@contextmanager
def serving(repositories: Path, temp: Path) -> Iterator[GitServer]:
    """A plain server (no echo, no redirect) of the bare repositories in `repositories`,
    shut down on leaving."""
    server = GitServer(repositories, temp, echo=False, redirect_to=None)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,))
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def snapshot_processes() -> list[bytes]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            for part in ("cmdline", "environ"):
                with contextlib.suppress(OSError):  # gone, or another user's environment
                    found.append((entry / part).read_bytes())
    return found


def pkt_line(text: str) -> bytes:
    data = text.encode()
    return f"{len(data) + 4:04x}".encode() + data


class GitHandler(BaseHTTPRequestHandler):
    server: GitServer

    def do_GET(self) -> None:
        self.serve()

    def do_POST(self) -> None:
        self.serve()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        seen = self.server.seen
        seen.paths.append(self.path)
        authorization = self.headers.get("Authorization")
        seen.authorizations.append(authorization)
        if self.server.redirect_to is not None:
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to.rstrip("/") + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if authorization is None or (authorization != expected and not self.server.echo):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if authorization != expected:
            self.refuse_with_echo(authorization)
            return
        seen.processes += snapshot_processes()
        for path in self.server.temp.rglob("*"):
            seen.temp_files[str(path.relative_to(self.server.temp))] = stat.S_IMODE(
                path.stat().st_mode
            )
        self.run_backend(body)

    def refuse_with_echo(self, authorization: str) -> None:
        """A careless server: its error quotes the credentials it got, in every form."""
        pair = base64.b64decode(authorization.removeprefix("Basic ")).decode()
        password = pair.partition(":")[2]
        echo = f"denied {pair} {quote(password, safe='')} {quote_plus(password)} {authorization}"
        body = pkt_line("# service=git-upload-pack\n") + b"0000" + pkt_line(f"ERR {echo}\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def run_backend(self, body: bytes) -> None:
        url = urlsplit(self.path)
        env = {
            **GIT_ENV,
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": USER,
            "REMOTE_ADDR": "127.0.0.1",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        result = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=True
        )
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(": ")
            if name.lower() == "status":
                status = int(value.split()[0])
            else:
                headers.append((name, value))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
