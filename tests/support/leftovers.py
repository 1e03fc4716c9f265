"""Processes a test run left behind: its own descendants, and the pods its servers started
(processes carrying lockstep's pod marker, `LOCKSTEP_POD_UID`, whose pod belongs to the run:
their directory, or their uid's state file, lies under the run's temporary directory). Pods
are started in sessions of their own and outlive whoever started them, so they are found by
their marker rather than by their parent. Pods of another test run on the same machine are
not this run's, and are left alone.

conftest.py checks at the end of every run that none is left, waiting with a deadline for
processes that are being reaped, then kills those that are and fails the run naming them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lockstep.runtimes.local.processes import POD_MARKER

_MARKER = POD_MARKER.encode() + b"="
_PWD = b"PWD="


@dataclass(frozen=True, slots=True)
class Leftover:
    pid: int
    command: str
    why: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.why}): {self.command}"


@dataclass(frozen=True, slots=True)
class _Process:
    pid: int
    parent: int
    environment: dict[bytes, bytes]
    directory: str


def _processes() -> Iterator[_Process]:
    """Every live process of this machine (zombies are dead: their parent reaps them)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
            if state in {"Z", "X"}:
                continue
            environment: dict[bytes, bytes] = {}
            with contextlib.suppress(OSError):
                for item in (entry / "environ").read_bytes().split(b"\0"):
                    if item.startswith((_MARKER, _PWD)):
                        key, _, value = item.partition(b"=")
                        environment[key] = value
            directory = ""
            with contextlib.suppress(OSError):
                directory = str((entry / "cwd").readlink()).removesuffix(" (deleted)")
            yield _Process(int(entry.name), int(parent), environment, directory)


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:160] or "?"


def _pod_uids(root: Path) -> set[str]:
    """The uids of the pods whose state files lie under `root`."""
    uids: set[str] = set()
    if not root.is_dir():
        return uids
    for directory, _, files in os.walk(root):  # a dead mount below is passed over
        if "state.json" not in files:
            continue
        with contextlib.suppress(OSError, ValueError, AttributeError):
            uid = json.loads((Path(directory) / "state.json").read_text()).get("uid")
            if isinstance(uid, str):
                uids.add(uid)
    return uids


def _under(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(f"{root}/")


def leftovers(run: int, root: Path, *, uids: set[str] | None = None) -> list[Leftover]:
    """The live processes that test run `run` (its pid) left: its descendants, and the pods
    whose directory or state file lies under `root`, its temporary directory (`uids`: those
    of the state files, when already read)."""
    processes = {p.pid: p for p in _processes()}
    uids = _pod_uids(root) if uids is None else uids
    found: list[Leftover] = []
    for process in processes.values():
        if process.pid == run:
            continue
        why = None
        if _descends(process, run, processes):
            why = "started by the test run"
        uid = process.environment.get(_MARKER[:-1])
        if uid is not None:
            where = process.environment.get(_PWD, b"").decode(errors="replace")
            mine = uid.decode(errors="replace") in uids or any(
                _under(path, root) for path in (where, process.directory)
            )
            if mine:
                why = f"pod {uid.decode(errors='replace')} in {where or process.directory}"
        if why is not None:
            found.append(Leftover(process.pid, _command(process.pid), why))
    return sorted(found, key=lambda leftover: leftover.pid)


def _descends(process: _Process, ancestor: int, processes: dict[int, _Process]) -> bool:
    seen: set[int] = set()
    parent = process.parent
    while parent not in seen and parent > 1:
        if parent == ancestor:
            return True
        seen.add(parent)
        above = processes.get(parent)
        if above is None:
            return False
        parent = above.parent
    return False


def still_left(run: int, root: Path, *, timeout: float, every: float = 0.1) -> list[Leftover]:
    """What is still left once `timeout` seconds have passed, or nothing as soon as nothing
    is: processes that were just stopped get the time to end and be reaped."""
    deadline = time.monotonic() + timeout
    uids = _pod_uids(root)  # the run is over: no pod starts any more
    while True:
        found = leftovers(run, root, uids=uids)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(every)


def kill(found: list[Leftover]) -> None:
    for leftover in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(leftover.pid, signal.SIGKILL)
