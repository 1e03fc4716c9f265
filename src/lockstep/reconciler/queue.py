"""A work queue of workload ids: deduplicated, with delayed entries, safe across threads.
Beside workload ids it carries `ORGANIZATION_CHANGED`."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable

ORGANIZATION_CHANGED = "lockstep:organization"
"""Queued when a project or department (or its quotas) changed: the local reconciler runs a
scheduling cycle, the Kubernetes one syncs the scheduler's queues."""


class WorkQueue:
    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ready: set[str] = set()
        self._delayed: list[tuple[float, str]] = []
        self._condition = threading.Condition()
        self._monotonic = monotonic
        self._closed = False

    def add(self, key: str) -> None:
        with self._condition:
            self._ready.add(key)
            self._condition.notify()

    def add_after(self, key: str, delay: float) -> None:
        with self._condition:
            heapq.heappush(self._delayed, (self._monotonic() + max(delay, 0.0), key))
            self._condition.notify()

    def take(self, timeout: float) -> set[str] | None:
        """Every ready key, waiting up to `timeout` for one; None once closed."""
        deadline = self._monotonic() + timeout
        with self._condition:
            while True:
                if self._closed:
                    return None
                now = self._monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    self._ready.add(heapq.heappop(self._delayed)[1])
                if self._ready:
                    keys, self._ready = self._ready, set()
                    return keys
                if now >= deadline:
                    return set()
                wake = min([deadline, *(at for at, _ in self._delayed[:1])])
                self._condition.wait(max(wake - now, 0.0))

    def pause(self, seconds: float) -> bool:
        """Wait `seconds` (nothing if not positive) unless closed first; False once closed."""
        deadline = self._monotonic() + seconds
        with self._condition:
            while not self._closed:
                remaining = deadline - self._monotonic()
                if remaining <= 0:
                    return True
                self._condition.wait(remaining)
            return False

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()
