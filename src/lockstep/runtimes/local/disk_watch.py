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
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

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


class DiskWatchdog:
    """Tells `on_exceeded` of each pod whose writable layers hold more than its limit."""

    def __init__(self, on_exceeded: Callable[[str], None], *, every: float = CHECK_SECONDS) -> None:
        self._on_exceeded = on_exceeded
        self._every = every
        self._pods: dict[str, _Watched] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockstep-disk", daemon=True)
        self._thread.start()

    def watch(self, uid: str, directories: Iterable[Path], limit: int) -> None:
        with self._lock:
            self._pods[uid] = _Watched(tuple(directories), limit)
        self._wake.set()

    def forget(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._closed:
            with self._lock:
                watched = dict(self._pods)
            if not watched:
                self._wake.wait()
                self._wake.clear()
                continue
            for uid, pod in watched.items():
                if self._closed:
                    return
                if disk_usage(pod.directories) > pod.limit:
                    self._on_exceeded(uid)
            self._wake.wait(self._every)
            self._wake.clear()
