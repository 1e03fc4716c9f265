"""What an MPI worker without a command runs on this machine, as sshd runs in a worker's
container: it waits for the launcher's remote starts and runs each one inside the worker's
sandbox.

    python -m lockstep.runtimes.local.worker_agent

The agent is the worker pod's process (its process group, limits and log) but runs outside the
worker's sandbox, as lockstep's own user, like sshd running as root in a container: it builds
the sandbox for each command itself. So the launcher's remote starts (`rsh.py`) need nothing
of the launcher's own sandbox; a launcher with a seccomp filter, dropped capabilities or
another user starts ranks in its workers all the same. Being lockstep's, the agent runs with
lockstep's environment, in the pod's directory of lockstep's: the pod's environment (its
spec's) it reads once from the descriptor `ENVIRONMENT_FD`, and hands it to each command's
sandbox the same way.

It listens on an abstract Unix socket named after the workload and the pod (`address`), and
serves only processes of the same workload (their pod marker, read from the peer's
environment). A request is one JSON line, `{"argv": [...]}`; the answer, once the command has
ended, `{"exit": <status>}`. A client that goes away takes its command with it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.pod_launch import WORKLOAD_DIR, Launch
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.runtimes.local.sandbox import environment, host_paths
from lockstep.runtimes.local.sandbox.policy import (
    fresh_root_layer,
    host_path_sources,
    seccomp_descriptor,
)
from lockstep.runtimes.local.sandbox.probe import Sandboxing, probe
from lockstep.runtimes.local.state import PodFiles, read_json

REQUEST_TIMEOUT = 30.0
"""Seconds a client has to send its request line."""

MAX_REQUEST = 1 << 20
"""The longest request line read, in bytes."""


def address(workload_id: str, pod_name: str) -> str:
    """The abstract socket a worker's agent listens on (no file: no path length to fit, and
    nothing to reach through directories a sandboxed launcher may not enter)."""
    return f"\0lockstep/{workload_id}/{pod_name}"


def main() -> None:
    workload_dir = Path(os.environ[WORKLOAD_DIR])
    files = PodFiles(workload_dir / os.environ["HOSTNAME"])
    launch = Launch.from_json(read_json(files.launch))
    sandboxing = None
    pod_env = dict(os.environ)  # without a sandbox, the pod's own
    if launch.sandbox is not None:
        sandboxing = probe(try_layers=False)
        pod_env = environment.read(environment.ENVIRONMENT_FD)
    pod_env.pop(WORKLOAD_DIR, None)
    pod = _Pod(files, launch, sandboxing, pod_env)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address(workload_dir.name, launch.pod_name))
    listener.listen(64)
    # Stopped with its pod: a clean end, as sshd's (its commands get the signal too).
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print(f"serving remote starts for {launch.pod_name}", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(
            target=_serve,
            args=(connection, workload_dir, pod),
            daemon=True,
        ).start()


@dataclasses.dataclass(frozen=True, slots=True)
class _Pod:
    """The worker the agent serves: its files, launch, this machine's sandbox, and the pod's
    environment (its spec's, which each command gets)."""

    files: PodFiles
    launch: Launch
    sandboxing: Sandboxing | None
    env: Mapping[str, str]


def _serve(connection: socket.socket, workload_dir: Path, pod: _Pod) -> None:
    with connection:
        # The request is read before any answer, a refusal included: a client still sending
        # to a closed connection would see a broken pipe instead of the reason.
        connection.settimeout(REQUEST_TIMEOUT)
        try:
            line = connection.makefile("rb").readline(MAX_REQUEST)
        except OSError:
            return
        connection.settimeout(None)
        if not _of_this_workload(connection, workload_dir):
            _answer(connection, {"error": "not a process of this workload"})
            return
        try:
            request = json.loads(line or b"{}")
        except ValueError:
            request = None
        argv = request.get("argv") if isinstance(request, dict) else None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            _answer(connection, {"error": "a request is {'argv': [strings]}"})
            return
        try:
            status = _run(argv, connection, pod)
        except OSError as error:
            _answer(connection, {"error": f"could not start the command: {error}"})
            return
        if status is not None:  # a signal's death as a shell reports it
            _answer(connection, {"exit": status if status >= 0 else 128 - status})


def _run(argv: Sequence[str], connection: socket.socket, pod: _Pod) -> int | None:
    """Run the command in the pod's sandbox until it ends (its exit status) or the client goes
    away (None: the command is killed)."""
    files, launch, sandboxing, pod_env = pod.files, pod.launch, pod.sandboxing, pod.env
    line = ["/bin/sh", "-c", " ".join(argv)]
    env = dict(pod_env)
    cwd = str(files.directory)  # the sandbox changes to the working directory itself
    passed: list[int] = []
    if launch.sandbox is None:
        cwd = launch.working_dir or str(files.work)
    else:
        if sandboxing is None or not sandboxing.available:
            reason = "no sandbox" if sandboxing is None else sandboxing.problem
            raise OSError(f"the worker's sandbox cannot be made here: {reason}")
        env = dict(os.environ)  # lockstep's own: bwrap gives the command the pod's
        passed.append(environment.descriptor(pod_env))
        if launch.sandbox.seccomp:  # bwrap reads the filter from a descriptor it inherits
            passed.append(seccomp_descriptor(launch.sandbox.capabilities or ()))
    pinned = _pinned(launch, files, passed)
    layer = None
    if launch.sandbox is not None and sandboxing is not None:
        sandbox = launch.sandbox
        if sandbox.root_layer is not None:  # each command's own, under the pod's veiled layer
            Path(sandbox.root_layer.directory).mkdir(parents=True, exist_ok=True)
            layer = tempfile.mkdtemp(prefix="command-", dir=sandbox.root_layer.directory)
            own = dataclasses.replace(sandbox.root_layer, directory=layer)
            fresh_root_layer(own)
            sandbox = dataclasses.replace(sandbox, root_layer=own)
        seccomp_fd = passed[1] if launch.sandbox.seccomp else None
        line = sandboxing.command(
            sandbox, line, seccomp_fd=seccomp_fd, env_fd=passed[0], host_paths=pinned
        )
    try:
        child = subprocess.Popen(line, env=env, cwd=cwd, stdin=subprocess.DEVNULL, pass_fds=passed)
    finally:
        for descriptor in passed:
            os.close(descriptor)
    ended = os.pidfd_open(child.pid)
    try:
        while True:
            ready, _, _ = select.select([connection.fileno(), ended], [], [])
            if ended in ready:
                return child.wait()
            if not connection.recv(4096):  # the client is gone: so is its command
                child.kill()
                child.wait()
                return None
    finally:
        os.close(ended)
        if layer is not None:
            shutil.rmtree(layer, ignore_errors=True)


def _pinned(launch: Launch, files: PodFiles, passed: list[int]) -> host_paths.HostPaths:
    """The worker's hostPaths pinned for one command, their descriptors added to `passed`;
    `OSError` (the command's refusal) for one that moved since the pod was made."""
    if launch.sandbox is None:
        return host_paths.HostPaths()
    try:
        pinned = host_paths.pin(
            host_path_sources(launch),
            private=launch.sandbox.private_sources,
            staging=files.host_paths,
            in_place=True,
        )
    except PodStartError as error:
        for descriptor in passed:
            os.close(descriptor)
        raise OSError(str(error)) from error
    passed.extend(descriptor for descriptor, _ in pinned.opened)
    return pinned.host_paths


def _of_this_workload(connection: socket.socket, workload_dir: Path) -> bool:
    """The peer carries the marker of one of the workload's pods (its launcher's)."""
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
    )
    pid, _, _ = struct.unpack("3i", credentials)
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    for pod_dir in workload_dir.iterdir():
        with contextlib.suppress(OSError, KeyError, TypeError, ValueError):
            uid = PodFiles(pod_dir).read_state().uid
            if f"{POD_MARKER}={uid}".encode() + b"\0" in environ:
                return True
    return False


def _answer(connection: socket.socket, answer: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        connection.sendall(json.dumps(answer).encode() + b"\n")


if __name__ == "__main__":
    main()
