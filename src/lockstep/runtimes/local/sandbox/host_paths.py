"""A pod's hostPaths, pinned for one start: each opened once (`O_PATH`), checked to be the very
path it was when the pod was made (bound at its real path, checked against what an
administrator allowed: policy.py), and handed to the sandbox as a descriptor. bwrap binds the
descriptor (`--bind-fd`), and a hostPath kept out of this machine's later mounts is first bound
from it onto a directory of lockstep's (`staging`), so nothing between the check and the mount
goes by path: a link that a pod writing a directory above the hostPath puts there meanwhile
leads nowhere.

Used by the local runtime before each start and by MPI's worker agent before each command.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lockstep.runtimes.base import PodStartError

FIRST_FD = 6
"""The descriptor of a pod's first hostPath in its sandbox's processes (3 is the start's gate,
4 the seccomp filter, 5 the environment)."""
MOVED = "a symbolic link now stands where the hostPath was when the pod was made: "
"""How a pod whose hostPath moved is told so."""


@dataclass(frozen=True, slots=True)
class HostPaths:
    """Where bwrap finds each pinned hostPath, by the path it was asked by."""

    descriptors: dict[str, int] = field(default_factory=dict)
    """Source → the descriptor number it has in the sandbox's processes."""
    staged: dict[str, str] = field(default_factory=dict)
    """Source → the directory (or file) of lockstep's it is bound onto first, as a private
    mount (mountPropagation None)."""


@dataclass(frozen=True, slots=True)
class Pinned:
    """Opened descriptors (lockstep's own numbers: close them once the start is done) and
    what the sandbox is told of them."""

    opened: tuple[tuple[int, int], ...]
    """(descriptor here, number in the sandbox's processes)."""
    host_paths: HostPaths


def pin(
    sources: Sequence[str], *, private: Sequence[str], staging: Path, in_place: bool = False
) -> Pinned:
    """Open each of `sources`; `PodStartError` naming those that are no longer their own
    real path. Those in `private` get a place in `staging` (made here, lockstep's) to be
    bound onto first. The sandbox's processes get the descriptors as `FIRST_FD` on, or, with
    `in_place`, as the numbers they have here (handed on with `subprocess`'s `pass_fds`)."""
    opened: list[tuple[int, int]] = []
    moved: list[str] = []
    host_paths = HostPaths()
    try:
        for place, source in enumerate(dict.fromkeys(sources), start=FIRST_FD):
            try:
                descriptor = os.open(source, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue  # a missing hostPath: the start names it (volumes/prepare.py)
            number = descriptor if in_place else place
            opened.append((descriptor, number))
            found = os.fstat(descriptor)
            resolved = str(Path(f"/proc/self/fd/{descriptor}").readlink())
            if stat.S_ISLNK(found.st_mode) or resolved != source:
                moved.append(source)
                continue
            host_paths.descriptors[source] = number
            if source in private:
                host_paths.staged[source] = _stage(staging, number, found)
        if moved:
            raise PodStartError(f"storage: {MOVED}{', '.join(moved)}")
    except BaseException:
        close(opened)
        raise
    return Pinned(tuple(opened), host_paths)


def close(opened: Sequence[tuple[int, int]]) -> None:
    for descriptor, _ in opened:
        with contextlib.suppress(OSError):
            os.close(descriptor)


def _stage(staging: Path, number: int, found: os.stat_result) -> str:
    """An empty directory, or file, of lockstep's to bind a hostPath onto."""
    staging.mkdir(mode=0o700, exist_ok=True)
    place = staging / str(number)
    if stat.S_ISDIR(found.st_mode):
        place.mkdir(exist_ok=True)
    else:
        place.touch(exist_ok=True)
    return str(place)
