"""A real Prometheus server for tests (Debian's `prometheus` binary), on a free loopback port
with its time series database in a directory of the test's own, scraping every second either
a live lockstep's `/metrics` with an application's credentials (`scraping`) or fixture
exporters (`scraping_targets`); ready when the `with` starts, stopped (terminated, killed if it
lingers) when it ends. And its query API: `evaluate` and `query`."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.api import ADMIN_ID, ADMIN_SECRET, poll
from tests.support.server import LiveServer, free_port

START_TIMEOUT_SECONDS = 60.0

LOCKSTEP_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: lockstep
    metrics_path: /metrics
    basic_auth:
      username: {username}
      password_file: {password_file}
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""

FIXTURE_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fixture
    honor_labels: true
    static_configs:
      - targets: [{targets}]
"""


@contextmanager
def scraping(server: LiveServer, directory: Path) -> Iterator[str]:
    """A Prometheus scraping `server`'s `/metrics` as its administrator; its URL."""
    password = directory / "password"
    password.write_text(ADMIN_SECRET)
    config = LOCKSTEP_CONFIG.format(username=ADMIN_ID, password_file=password, port=server.port)
    with _prometheus(directory, config) as url:
        yield url


@contextmanager
def scraping_targets(directory: Path, targets: Sequence[str]) -> Iterator[str]:
    """A Prometheus scraping `targets` (`host:port`), keeping their labels; its URL."""
    config = FIXTURE_CONFIG.format(targets=", ".join(f'"{t}"' for t in targets))
    with _prometheus(directory, config) as url:
        yield url


@contextmanager
def _prometheus(directory: Path, config: str) -> Iterator[str]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "prometheus.yml").write_text(config)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = directory / "prometheus.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            poll(
                lambda: _ready(url, process),
                timeout=START_TIMEOUT_SECONDS,
                every=0.2,
                what=lambda: f"Prometheus to be ready ({log_path.read_text()[-2000:]})",
            )
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _ready(url: str, process: subprocess.Popen[bytes]) -> bool | None:
    if process.poll() is not None:
        raise AssertionError(f"Prometheus exited with status {process.returncode}")
    try:
        return httpx.get(f"{url}/-/ready", timeout=2).status_code == 200 or None
    except httpx.TransportError:
        return None


def evaluate(url: str, expression: str) -> dict[str, Any] | None:
    """Prometheus's whole answer to an instant query (`status`, then `data` or `error`); None
    while it is not ready to answer (not listening, or starting: a plain-text 503)."""
    try:
        response = httpx.get(f"{url}/api/v1/query", params={"query": expression}, timeout=5)
    except httpx.TransportError:
        return None
    if not response.headers.get("content-type", "").startswith("application/json"):
        return None
    answer: dict[str, Any] = response.json()
    return answer


def query(url: str, expression: str) -> list[dict[str, Any]] | None:
    """The series an instant query finds; None while there are none (or it does not answer)."""
    answer = evaluate(url, expression)
    if answer is None or answer.get("status") != "success":
        return None
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result or None
