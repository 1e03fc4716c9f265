"""A real Prometheus server (Debian's `prometheus` binary) scraping a live lockstep's
`/metrics` every second with an application's credentials, and its query API."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.api import ADMIN_ID, ADMIN_SECRET
from tests.support.server import LiveServer, free_port

PROMETHEUS_CONFIG = """\
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


@contextmanager
def scraping(server: LiveServer, directory: Path) -> Iterator[str]:
    """A Prometheus server scraping `server`, its config, log and data in `directory`; its URL."""
    password = directory / "password"
    password.write_text(ADMIN_SECRET)
    config = directory / "prometheus.yml"
    config.write_text(
        PROMETHEUS_CONFIG.format(username=ADMIN_ID, password_file=password, port=server.port)
    )
    port = free_port()
    with (directory / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={directory / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
    """The series an instant query finds; None while there are none (or it does not listen)."""
    answer = evaluate(url, expression)
    if answer is None or answer.get("status") != "success":
        return None
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result or None
