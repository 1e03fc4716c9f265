"""A real `lockstep serve` in a subprocess, on a free port, with its own data dir."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from lockstep.runtimes.local import network
from lockstep.runtimes.local.processes import kill_marked, signal_group
from lockstep.runtimes.local.state import PodFiles
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveServer:
    def __init__(
        self,
        data_dir: Path,
        database_url: str | None = None,
        *,
        cwd: Path | None = None,
        bootstrap_credentials: bool = True,
        settings: dict[str, str] | None = None,
    ) -> None:
        """`settings`: more LOCKSTEP_* variables (name without the prefix → value)."""
        self.data_dir = data_dir
        self.database_url = database_url
        self.cwd = cwd
        self.bootstrap_credentials = bootstrap_credentials
        self.settings = {
            "RESTART_BACKOFF_SECONDS": "0.2",
            "ALLOWED_HOST_PATHS": '["/var/tmp:rw"]',  # the tests' shared files (conftest.py)
            **(settings or {}),
        }
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self._clients: list[httpx.Client] = []
        self.log_path = (cwd or data_dir.parent) / f"server-{self.port}.log"

    def environment(self) -> dict[str, str]:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")},
            "LOCKSTEP_DATA_DIR": str(self.data_dir),
            "LOCKSTEP_HOST": "127.0.0.1",
            "LOCKSTEP_PORT": str(self.port),
            "LOCKSTEP_LOG_FORMAT": "text",
            **{f"LOCKSTEP_{name}": value for name, value in self.settings.items()},
        }
        if self.bootstrap_credentials:
            env["LOCKSTEP_BOOTSTRAP_CLIENT_ID"] = ADMIN_ID
            env["LOCKSTEP_BOOTSTRAP_CLIENT_SECRET"] = ADMIN_SECRET
        if self.database_url:
            env["LOCKSTEP_DATABASE_URL"] = self.database_url
        return env

    def start(self, *, timeout: float = 30.0) -> LiveServer:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "lockstep", "serve"],
                env=self.environment(),
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        poll(
            self._ready,
            timeout=timeout,
            what=lambda: f"lockstep to listen on {self.url}; log:\n{self.log()}",
        )
        return self

    def _ready(self) -> bool | None:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"lockstep exited with {self.process.returncode}:\n{self.log()}")
        try:
            httpx.get(f"{self.url}/api/v1/clusters", timeout=1.0)
        except httpx.TransportError:
            return None
        return True

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def api(self) -> Api:
        """A client logged in as the administrator, closed when the server stops."""
        client = httpx.Client(base_url=self.url, timeout=30.0)
        self._clients.append(client)
        return Api.login(client)

    def stop(self, sig: signal.Signals = signal.SIGTERM, *, timeout: float = 30.0) -> int:
        """Stop lockstep (its pods keep running, as in production)."""
        assert self.process is not None
        for client in self._clients:
            client.close()
        self._clients.clear()
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill_pods(self) -> None:
        """Remove every process of every pod this server's runtime knows (test clean-up)."""
        kill_pods((self.cwd or Path.cwd()) / self.data_dir / "runtime" / "local")


def kill_pods(runtime_root: Path) -> None:
    """Kill every process of every pod under a local runtime's directory, and end every
    workload's network there (its pasta)."""
    if not runtime_root.is_dir():
        return
    for state_file in runtime_root.glob("*/*/state.json"):
        with contextlib.suppress(Exception):
            state = PodFiles(state_file.parent).read_state()
            if state.pid is not None and not state.swept:
                signal_group(state.pid, signal.SIGKILL)
            kill_marked(state.uid)
    for workload_dir in runtime_root.iterdir():
        network.release(workload_dir)
