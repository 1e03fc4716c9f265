"""Process groups on Linux: start one behind a recording wrapper, tell whether it still lives,
signal it, and find every process that carries a pod's marker.

A pod's command runs under `/bin/sh`, which writes its own pid first and the command's exit
status last, so the outcome is on disk even when lockstep was not running when it ended. Both
files are in the pod's directory of lockstep's, which no pod reaches (see state.py), and the
shell finds `mv` on the standard PATH, not the one it was given. The command's stdout and
stderr go to the pod's output; the shell's own messages (such as "Terminated") go nowhere.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

POD_MARKER = "LOCKSTEP_POD_UID"
"""Set in every pod's environment; finds processes that left their process group."""

_WRAPPER = (
    'cd -- "$1" || { echo 126 > "$0"; exit 126; }; shift; '
    'echo $$ > "$0.pid"; IFS= read -r go <&3 || exit 125; exec 3<&-; '
    'trap true TERM; ( exec "$@" 2>&1 ); status=$?; '
    'echo "$status" > "$0.tmp" && command -p mv -f "$0.tmp" "$0"; exit "$status"'
)
"""Records its pid, waits at the gate (fd 3) until lockstep has confined it, runs the command
and records its exit status. Without the gate opened (lockstep died meanwhile) it ends with no
exit status, which recovery reads as a start to redo."""

_GATE = 3


@dataclass(frozen=True, slots=True)
class Inherited:
    """A file descriptor of lockstep's that the command gets as `number` (the caller closes
    its own copy once the command is started)."""

    descriptor: int
    number: int


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    output: Path,
    exit_file: Path,
    prepare: Callable[[int], None] | None = None,
    inherit: Sequence[Inherited] = (),
) -> int:
    """Start `argv` in `cwd` as the leader of a new session, its stdout and stderr written to
    `output` (a file or the pod's log pipe, opened read-write so that a pipe never blocks the
    open nor raises SIGPIPE). `prepare` gets the wrapper's pid before the command runs, to put
    limits on it that its processes inherit; if it raises, the command never runs. Returns the
    pid of the wrapper, which is the process group's id too."""
    gate_read, gate_write = os.pipe()
    try:
        pid = os.posix_spawn(
            "/bin/sh",
            ["/bin/sh", "-c", _WRAPPER, str(exit_file), str(cwd), *argv],
            dict(env),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, str(output), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, gate_read, _GATE),
                *((os.POSIX_SPAWN_DUP2, kept.descriptor, kept.number) for kept in inherit),
            ],
            setsid=True,
        )
    finally:
        os.close(gate_read)
    try:
        if prepare is not None:
            prepare(pid)
        os.write(gate_write, b"go\n")
    except BaseException:
        os.close(gate_write)  # the wrapper ends at its closed gate
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise
    os.close(gate_write)
    return pid


def reap(pid: int) -> None:
    """Collect a child's exit status so it leaves no zombie; a no-op for a non-child."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in {"Z", "X"}:
        return None
    return int(fields[19])


def is_alive(pid: int, ticks: int) -> bool:
    """Whether `pid` is still the process that started at `ticks` (pids are reused)."""
    return start_ticks(pid) == ticks


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send `sig` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


def marked_processes(uid: str) -> Iterator[int]:
    """Pids of every process whose environment holds this pod's marker."""
    needle = f"{POD_MARKER}={uid}".encode() + b"\0"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes():
                yield int(entry.name)


def kill_marked(uid: str) -> int:
    """SIGKILL every process that carries the marker; how many were signalled."""
    killed = 0
    for pid in marked_processes(uid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


def describe_exit(code: int) -> str:
    """A person's reading of a pod's exit status."""
    if code == 0:
        return "exited with code 0"
    if code == 127:
        return "exited with code 127 (command not found)"
    if code == 126:
        return "exited with code 126 (command not executable)"
    if code > 128:
        with contextlib.suppress(ValueError):
            return f"exited with code {code} (killed by {signal.Signals(code - 128).name})"
    return f"exited with code {code}"
