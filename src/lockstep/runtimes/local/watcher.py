"""Wake the reconciler the moment a pod's process ends: one thread waiting on pidfds.

pidfds work for processes lockstep started and for those it re-adopted after a restart (which
are not its children), so both are watched the same way, without polling. Ended children are
reaped here, so none lingers as a zombie.
"""

from __future__ import annotations

import os
import selectors
import threading
from collections.abc import Callable
from dataclasses import dataclass

from lockstep.runtimes.local.processes import reap


@dataclass(slots=True)
class _Watched:
    key: str
    pid: int


class ExitWatcher:
    def __init__(self, on_exit: Callable[[str], None]) -> None:
        self._on_exit = on_exit
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe()
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockstep-exit-watcher", daemon=True)
        self._thread.start()

    def watch(self, pid: int, key: str) -> None:
        """Call `on_exit(key)` once `pid` has ended (at once if it already has)."""
        try:
            descriptor = os.pidfd_open(pid)
        except ProcessLookupError:
            reap(pid)
            self._on_exit(key)
            return
        with self._lock:
            self._selector.register(descriptor, selectors.EVENT_READ, _Watched(key, pid))
        os.write(self._wake_write, b"x")

    def _run(self) -> None:
        while True:
            for selected, _ in self._selector.select():
                if selected.data is None:
                    os.read(self._wake_read, 4096)
                    if self._closed:
                        return
                    continue
                watched: _Watched = selected.data
                with self._lock:
                    self._selector.unregister(selected.fd)
                os.close(selected.fd)
                reap(watched.pid)
                self._on_exit(watched.key)

    def close(self) -> None:
        self._closed = True
        os.write(self._wake_write, b"x")
        self._thread.join(timeout=5)
        with self._lock:
            for key in list(self._selector.get_map().values()):
                if key.data is not None:
                    os.close(key.fd)
            self._selector.close()
        os.close(self._wake_read)
        os.close(self._wake_write)
