"""A thread that watches pods for a bound the kernel does not hold for lockstep — memory
without cgroups (sandbox/limits.py), disk (disk_watch.py): every few seconds, while it watches
any pod, it asks which are past their bound and tells of each, and sleeps while it watches
none. What is watched, and how it is measured, is the subclass's."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

Watched = TypeVar("Watched")


class Watchdog(Generic[Watched]):
    """Tells `on_exceeded` of each watched pod (by uid) that `over` finds past its bound,
    every `every` seconds."""

    def __init__(self, on_exceeded: Callable[[str], None], *, every: float, name: str) -> None:
        self._on_exceeded = on_exceeded
        self._every = every
        self._pods: dict[str, Watched] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def over(self, watched: dict[str, Watched]) -> Iterable[str]:
        """The uids of the watched pods past their bound now."""
        raise NotImplementedError

    def forget(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._thread.join(timeout=5)

    def _watch(self, uid: str, watched: Watched) -> None:
        with self._lock:
            self._pods[uid] = watched
        self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            with self._lock:
                watched = dict(self._pods)
            if not watched:
                self._wake.wait()
                self._wake.clear()
                continue
            for uid in self.over(watched):
                if self._closed:
                    return
                self._on_exceeded(uid)
            self._wake.wait(self._every)
            self._wake.clear()
