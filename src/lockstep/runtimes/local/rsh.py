"""The remote-start agent of MPI workloads: what `mpirun` in the launcher pod runs instead of
ssh to start its daemon "on" a worker.

    python -m lockstep.runtimes.local.rsh <workload dir> [ssh options] <worker pod> <command>

The command runs inside the named worker pod as far as one machine allows: with that pod's
environment (including its marker, so stopping the pod stops it too), in its sandbox (its
mounts, identity and privileges) and working directory, with its output going into the pod's
log. Options meant for ssh (`-o X`, `-x`, …) are ignored.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from lockstep.runtimes.local.launch import Launch
from lockstep.runtimes.local.sandbox import SandboxSpec, command
from lockstep.runtimes.local.sandboxes import SECCOMP_FD, seccomp_descriptor
from lockstep.runtimes.local.state import PodFiles, read_json

_SSH_FLAGS_WITH_VALUE = frozenset({"-o", "-p", "-l", "-i", "-F", "-E", "-J", "-b", "-c", "-m"})


def split_arguments(arguments: list[str]) -> tuple[str, list[str]]:
    """The host and the command among ssh-style arguments."""
    remaining = list(arguments)
    while remaining and remaining[0].startswith("-"):
        flag = remaining.pop(0)
        if flag in _SSH_FLAGS_WITH_VALUE and remaining:
            remaining.pop(0)
    if len(remaining) < 2:
        raise SystemExit("usage: rsh <workload dir> [ssh options] <pod> <command>")
    return remaining[0], remaining[1:]


def main(arguments: list[str]) -> None:
    workload_dir = Path(arguments[0])
    host, command = split_arguments(arguments[1:])
    pod = host.split(".", 1)[0]
    files = PodFiles(workload_dir / pod)
    if not files.launch.exists():
        raise SystemExit(f"rsh: no pod named {pod} in this workload")
    launch = Launch.from_json(read_json(files.launch))
    argv = ["/bin/sh", "-c", " ".join(command)]
    if launch.sandbox is None:
        os.chdir(launch.working_dir or files.directory)
    else:
        os.chdir(files.directory)
        argv = in_sandbox(launch.sandbox, argv)
    output = os.open(files.pipe, os.O_RDWR)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    os.execve(argv[0], argv, dict(launch.env))  # noqa: S606


def in_sandbox(sandbox: SandboxSpec, argv: list[str]) -> list[str]:
    """`argv` in the worker's own sandbox (its mounts, identity and privileges), started from
    inside the launcher's: bwrap in bwrap, which needs a launcher free to make namespaces."""
    tools = {name: shutil.which(name) for name in ("bwrap", "env", "setpriv")}
    missing = sorted(name for name, path in tools.items() if path is None)
    if missing:
        raise SystemExit(f"rsh: {', '.join(missing)} not found for the worker's sandbox")
    seccomp_fd = None
    if sandbox.seccomp:
        descriptor = seccomp_descriptor(sandbox.capabilities or ())
        os.dup2(descriptor, SECCOMP_FD)  # the copy is inherited; bwrap reads it
        os.close(descriptor)
        seccomp_fd = SECCOMP_FD
    return command(
        sandbox,
        argv,
        bwrap=str(tools["bwrap"]),
        env=str(tools["env"]),
        setpriv=str(tools["setpriv"]),
        seccomp_fd=seccomp_fd,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
