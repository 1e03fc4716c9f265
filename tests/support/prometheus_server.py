"""A real Prometheus server for tests (Debian's `prometheus` binary): scraping the given
targets every second, its time series database in a directory of the test's own, on a free
loopback port; stopped (terminated, killed if it lingers) when the `with` ends.

Also `instant`, an instant query of it (None until it answers one with data), to wait on.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.api import poll
from tests.support.server import free_port

START_TIMEOUT_SECONDS = 60.0

CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fixture
    honor_labels: true
    static_configs:
      - targets: [{targets}]
"""


def require_prometheus() -> str:
    found = shutil.which("prometheus")
    if found is None:
        pytest.skip("no `prometheus` binary (apt-get install prometheus)")
    return found


@contextmanager
def prometheus_scraping(directory: Path, targets: Sequence[str]) -> Iterator[str]:
    """A Prometheus scraping `targets` (`host:port`) every second, ready; its URL."""
    binary = require_prometheus()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "prometheus.yml"
    config.write_text(CONFIG.format(targets=", ".join(f'"{t}"' for t in targets)))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (directory / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
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
                what=lambda: (
                    f"Prometheus to be ready ({(directory / 'prometheus.log').read_text()[-2000:]})"
                ),
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


def instant(url: str, expression: str) -> list[dict[str, Any]] | None:
    """The result of an instant query, or None where it has none (or fails)."""
    try:
        response = httpx.get(f"{url}/api/v1/query", params={"query": expression}, timeout=5)
    except httpx.TransportError:
        return None
    if response.status_code != 200:
        return None
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    return result or None
