"""The remote-start agent of MPI workloads: what `mpirun` in the launcher pod runs instead of
ssh to start its daemon "on" a worker.

    python -m lockstep.runtimes.local.rsh <workload dir> [ssh options] <worker pod> <command>

It hands the command to the worker's own agent (worker_agent.py, what the worker runs as
sshd), which runs it inside the worker's sandbox with the worker's environment (so stopping
the worker stops it too), its output going into the worker's log; then it waits and exits
with the command's status, as ssh does. Killed, it takes the command with it. Options meant
for ssh (`-o X`, `-x`, …) are ignored.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

from lockstep.runtimes.local.worker_agent import address

_SSH_FLAGS_WITH_VALUE = frozenset({"-o", "-p", "-l", "-i", "-F", "-E", "-J", "-b", "-c", "-m"})
CONNECT_SECONDS = 30.0
"""How long a worker that runs but does not listen yet is waited for."""
FAILED = 255
"""ssh's own status when it cannot run the command."""


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


def main(arguments: list[str]) -> int:
    workload_dir = Path(arguments[0])
    host, command = split_arguments(arguments[1:])
    pod = host.split(".", 1)[0]
    agent = _connect(address(workload_dir.name, pod))
    if agent is None:
        print(
            f"rsh: pod {pod} of this workload takes no remote starts (only an MPI worker "
            "without a command of its own runs lockstep's agent)",
            file=sys.stderr,
        )
        return FAILED
    with agent:
        agent.sendall(json.dumps({"argv": command}).encode() + b"\n")
        answer = json.loads(agent.makefile("rb").readline() or b'{"error": "the worker ended"}')
    if "error" in answer:
        print(f"rsh: {pod}: {answer['error']}", file=sys.stderr)
        return FAILED
    return int(answer["exit"])


def _connect(name: str) -> socket.socket | None:
    """The worker's agent, waited for while the worker starts."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            agent.connect(name)
        except (ConnectionRefusedError, FileNotFoundError):
            agent.close()
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        else:
            return agent


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
