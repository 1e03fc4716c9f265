"""What the benchmarks share: a fresh `lockstep serve` on SQLite or PostgreSQL, a token, and
wrk with its output parsed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

ADMIN_ID = "bench-admin"
ADMIN_SECRET = "bench-admin-secret"
POSTGRES_URL = os.environ.get(
    "LOCKSTEP_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
WRK_SCRIPTS = Path(__file__).resolve().parent / "wrk"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ensure_wrk() -> str:
    """wrk, installed from Debian's packages when missing."""
    found = shutil.which("wrk")
    if found:
        return found
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, capture_output=True)
        found = shutil.which("wrk")
        if found:
            return found
    sys.exit("the benchmarks need wrk (Debian package 'wrk')")


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    name = f"lockstep_bench_{uuid.uuid4().hex[:10]}"
    base = POSTGRES_URL.rpartition("/")[0]
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def analyze(database_url: str | None) -> None:
    """Gather PostgreSQL's planner statistics (SQLite: nothing to do), as autovacuum does a
    while after a load: measured right after seeding, the planner would still take the tables
    for empty and pick plans no running server keeps for long."""
    if database_url is None:
        return
    with psycopg.connect(database_url.replace("+psycopg", ""), autocommit=True) as connection:
        connection.execute("ANALYZE")


@contextmanager
def store(backend: str) -> Iterator[str | None]:
    """None means SQLite in the server's data dir."""
    if backend == "sqlite":
        yield None
        return
    with postgres_database() as url:
        yield url


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    token: str = ""
    cluster_id: str = ""

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = httpx.request(
            method,
            self.url + path,
            json=body,
            headers={"Authorization": f"Bearer {self.token}"} if self.token else {},
            timeout=30,
        )
        response.raise_for_status()
        return response.json()

    def rss_kib(self) -> tuple[int, int]:
        """Resident memory now and at its peak, in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        values = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.MULTILINE))
        return int(values["VmRSS"]), int(values["VmHWM"])


@contextmanager
def source_of(ref: str) -> Iterator[Path]:
    """The `src` folder of the git revision `ref`, exported to a temporary folder: what a
    baseline server runs (`server(..., source=...)`) beside the working tree's."""
    with tempfile.TemporaryDirectory(prefix="lockstep-baseline-") as folder:
        root = Path(__file__).resolve().parent.parent
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", ref, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder) / "src"


def never_fitting(cluster_id: str, name: str, **spec: object) -> dict[str, object]:
    """A workload that asks for more CPU than any machine has: stored, scheduled and parked
    Pending, so nothing runs; `spec` adds to its spec (a distributed one's framework, …)."""
    return {
        "name": name,
        "projectId": "1",
        "clusterId": cluster_id,
        "spec": {
            "image": "python:3.11",
            "command": "python3",
            "args": "train.py",
            "compute": {"cpuCoreRequest": 100000},
            **spec,
        },
    }


@contextmanager
def revisions(baseline: str | None) -> Iterator[dict[str, Path | None]]:
    """The code each server of a side-by-side run runs, by name: the revision `baseline`'s
    `src` (when given), then the working tree's ("current", None)."""
    if baseline is None:
        yield {"current": None}
        return
    with source_of(baseline) as source:
        yield {baseline: source, "current": None}


@contextmanager
def server(
    database_url: str | None,
    *,
    data_dir: Path | None = None,
    settings: dict[str, str] | None = None,
    source: Path | None = None,
) -> Iterator[Server]:
    """`lockstep serve` on a free port with its own data dir, logged in as administrator;
    `settings` are further LOCKSTEP_* variables it is started with; `source`: the `src` folder
    whose lockstep it runs (`source_of`), else the installed one."""
    directory = data_dir or Path(tempfile.mkdtemp(prefix="lockstep-bench-"))
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")},
        "LOCKSTEP_DATA_DIR": str(directory),
        "LOCKSTEP_PORT": str(port),
        "LOCKSTEP_BOOTSTRAP_CLIENT_ID": ADMIN_ID,
        "LOCKSTEP_BOOTSTRAP_CLIENT_SECRET": ADMIN_SECRET,
        "LOCKSTEP_LOG_LEVEL": "warning",
    }
    if database_url:
        env["LOCKSTEP_DATABASE_URL"] = database_url
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")])
    env |= settings or {}
    log = (directory.parent / f"{directory.name}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    running = Server(f"http://127.0.0.1:{port}", process, directory)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                token = running.call(
                    "POST",
                    "/api/v1/token",
                    {"grantType": "app_token", "AppId": ADMIN_ID, "AppSecret": ADMIN_SECRET},
                )
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"lockstep did not start; see {log.name}") from None
                time.sleep(0.1)
        running.token = token["accessToken"]
        running.cluster_id = running.call("GET", "/api/v1/clusters")[0]["uuid"]
        yield running
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        log.close()
        if data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)


@dataclass(frozen=True)
class WrkResult:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int

    def row(self) -> str:
        rate, p50, p99 = self.requests_per_second, self.p50_ms, self.p99_ms
        return f"{rate:10.0f} {p50:9.2f} {p99:9.2f} {self.errors:7d}"


def _milliseconds(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise ValueError(f"wrk printed a latency I cannot read: {text!r}")
    return float(match[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[match[2]]


def wrk(
    server: Server,
    script: str,
    *,
    seconds: int,
    connections: int,
    threads: int,
    env: dict[str, str],
) -> WrkResult:
    """Run wrk with one of bench/wrk/*.lua against `server`."""
    output = subprocess.run(
        [
            ensure_wrk(),
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            str(WRK_SCRIPTS / script),
            server.url,
        ],
        env={**os.environ, "TOKEN": server.token, "CLUSTER_ID": server.cluster_id, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    p50 = _milliseconds(re.search(r"^\s+50%\s+(\S+)", output, re.MULTILINE).group(1))  # type: ignore[union-attr]
    p99 = _milliseconds(re.search(r"^\s+99%\s+(\S+)", output, re.MULTILINE).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    errors = (int(failed.group(1)) if failed else 0) + (
        sum(int(x) for x in socket_errors.groups()) if socket_errors else 0
    )
    return WrkResult(rate, p50, p99, total, errors)
