"""A controller that reconciles only while this process leads: with several lockstep
replicas sharing one store (the Kubernetes runtime), each serves the API and tries for the
store's leadership lock; the one holding it runs the reconciler, the others wait to take
over. A leader that loses the lock (its store connection died) stops acting at once.

Changes reach the leader wherever they were made: through the store's change feed when the
store is PostgreSQL, directly when this process is the only one (SQLite).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from lockstep.reconciler.queue import WorkQueue
from lockstep.store.change_feed import ChangeFeed
from lockstep.store.leadership import Leadership

log = logging.getLogger(__name__)


class Acting(Protocol):
    """What the leader runs: started with a queue of workload ids, stopped when it leads no
    more."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class LeaderController:
    def __init__(
        self,
        leadership: Leadership,
        act: Callable[[WorkQueue], Acting],
        *,
        feed: ChangeFeed | None = None,
        check_seconds: float = 1.0,
    ) -> None:
        """`act` builds what the leader runs, fed by the queue it is given."""
        self._leadership = leadership
        self._act = act
        self._feed = feed
        self._check_seconds = check_seconds
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._queue: WorkQueue | None = None
        self._acting: Acting | None = None
        self._threads: list[threading.Thread] = []
        self.leading = threading.Event()
        """Set while this process leads (for tests and the log)."""

    def start(self) -> None:
        self._spawn(self._campaign, "lockstep-leadership")
        if self._feed is not None:
            self._spawn(self._feed_listen, "lockstep-change-feed")

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _feed_listen(self) -> None:
        assert self._feed is not None
        self._feed.listen(self._enqueue, self._stopping)

    def _campaign(self) -> None:
        while not self._stopping.is_set():
            if self._acting is None:
                if self._leadership.try_acquire():
                    self._lead()
            elif not self._leadership.still_held():
                log.error("lost the leadership: no longer reconciling")
                self._step_down()
            self._stopping.wait(self._check_seconds)

    def _lead(self) -> None:
        queue = WorkQueue()
        acting = self._act(queue)
        with self._lock:
            self._queue, self._acting = queue, acting
        acting.start()
        self.leading.set()
        log.info("leading: this process reconciles")

    def _step_down(self) -> None:
        with self._lock:
            acting, self._acting, self._queue = self._acting, None, None
        self.leading.clear()
        if acting is not None:
            acting.stop()

    def _enqueue(self, workload_id: str) -> None:
        with self._lock:
            if self._queue is not None:
                self._queue.add(workload_id)

    def notify(self, workload_id: str) -> None:
        if self._feed is not None:
            self._feed.publish(workload_id)
        else:
            self._enqueue(workload_id)

    def stop(self) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self._step_down()
        self._leadership.release()
