"""A sandboxed pod's environment, handed to its sandbox through a descriptor, and the
environment lockstep's own processes around the sandbox run with.

A pod's environment is its spec's: whatever a researcher puts there (`LD_PRELOAD`, `PATH`,
`PYTHONPATH`, `GIT_SSH_COMMAND`, …) must reach the pod's command and nothing of lockstep's.
The processes that build a sandbox — the wrapper that records the exit status, `unshare`,
bwrap, the set-up of remote volumes, MPI's worker agent — run on this machine outside the
sandbox, often as root, so they run with `host_environment` alone. bwrap reads the pod's
variables from a descriptor (`--args`: `--clearenv`, then `--setenv NAME VALUE` for each), so
they never appear on a command line either, where `ps` would show a secret's value to anyone.

Used by the local runtime when it starts a pod, and by MPI's worker agent for each command.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from lockstep.runtimes.local.sandbox.memory_file import memory_file

ENVIRONMENT_FD = 5
"""The descriptor on which a pod's bwrap (or worker agent) reads the pod's environment."""

HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH of lockstep's processes around a sandbox."""

_CLEAR = b"--clearenv"
_SET = b"--setenv"


def host_environment(marker: Mapping[str, str]) -> dict[str, str]:
    """What lockstep's processes around a sandbox run with: a fixed PATH and the pod's
    marker (which finds them among this machine's processes), nothing of the pod's spec."""
    return {"PATH": HOST_PATH, **marker}


def checked(env: Mapping[str, str]) -> None:
    """`ValueError` naming a variable that no environment can hold: a name that is empty or
    holds `=`, or a name or value that holds a NUL (which would end one of bwrap's arguments
    and begin another)."""
    for name, value in env.items():
        if not name or "=" in name or "\0" in name:
            raise ValueError(f"the environment variable name {name[:64]!r} is not a valid name")
        if "\0" in value:
            raise ValueError(f"the environment variable {name[:64]} holds a NUL character")


def arguments(env: Mapping[str, str]) -> bytes:
    """bwrap's arguments that give the sandboxed command exactly `env`, NUL-separated."""
    checked(env)
    parts = [_CLEAR]
    for name, value in env.items():
        parts += [_SET, name.encode(), value.encode()]
    return b"\0".join(parts) + b"\0"


def parse(data: bytes) -> dict[str, str]:
    """The environment `arguments` describes (`ValueError` for anything else)."""
    parts = data.split(b"\0")
    if parts[-1] != b"" or parts[0] != _CLEAR or (len(parts) - 2) % 3:
        raise ValueError("not an environment written by lockstep")
    env: dict[str, str] = {}
    for at in range(1, len(parts) - 1, 3):
        if parts[at] != _SET:
            raise ValueError("not an environment written by lockstep")
        env[parts[at + 1].decode()] = parts[at + 2].decode()
    return env


def descriptor(env: Mapping[str, str]) -> int:
    """A close-on-exec memfd holding `arguments(env)`, positioned at its start. The caller
    hands it to one child as `ENVIRONMENT_FD` and closes its own copy once that child runs;
    bwrap reads it to the end and closes it before the pod's command runs."""
    return memory_file("lockstep-pod-environment", arguments(env))


def read(fd: int) -> dict[str, str]:
    """The environment on descriptor `fd`, read to its end (the descriptor is closed)."""
    chunks = []
    with os.fdopen(fd, "rb", closefd=True) as handle:
        while chunk := handle.read(1 << 16):
            chunks.append(chunk)
    return parse(b"".join(chunks))
