"""How much disk a pod's writable layers hold — its root's copy-on-write layer and its own
directory — and a watchdog that evicts a pod once they hold more than its limit, as the
kubelet evicts a pod past its ephemeral-storage limit: measured every few seconds (so a pod may
write past its limit for that long), the pod killed, its status `Evicted`.

A pod writes what it likes there, so the walk never follows a link and counts each file once
(hard links), in blocks actually used. Used by the local runtime for every pod it starts.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lockstep.runtimes.local.watchdog import Watchdog

EVICTED = "Evicted"
"""The reason of a pod killed for its disk, as the kubelet gives it."""
CHECK_SECONDS = 10.0
"""How often the watchdog measures, as the kubelet's housekeeping does."""
_BLOCK = 512


def disk_usage(directories: Iterable[Path]) -> int:
    """The bytes the files and directories under `directories` occupy on disk, each inode
    once, no link followed, nothing outside them counted."""
    seen: set[tuple[int, int]] = set()
    total = 0
    pending = [str(directory) for directory in directories]
    while pending:
        with contextlib.suppress(OSError), os.scandir(pending.pop()) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    found = entry.stat(follow_symlinks=False)
                    key = (found.st_dev, found.st_ino)
                    if key not in seen:
                        seen.add(key)
                        total += found.st_blocks * _BLOCK
                    if stat.S_ISDIR(found.st_mode):
                        pending.append(entry.path)
    return total


@dataclass(frozen=True, slots=True)
class _Watched:
    directories: tuple[Path, ...]
    limit: int


class DiskWatchdog(Watchdog[_Watched]):
    """Tells `on_exceeded` of each pod whose writable layers hold more than its limit."""

    def __init__(self, on_exceeded: Callable[[str], None], *, every: float = CHECK_SECONDS) -> None:
        super().__init__(on_exceeded, every=every, name="lockstep-disk")

    def watch(self, uid: str, directories: Iterable[Path], limit: int) -> None:
        self._watch(uid, _Watched(tuple(directories), limit))

    def over(self, watched: dict[str, _Watched]) -> Iterator[str]:
        for uid, pod in watched.items():
            if disk_usage(pod.directories) > pod.limit:
                yield uid
