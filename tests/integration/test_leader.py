"""Reconciling only while leading (reconciler/leader.py): of two controllers sharing a store,
one leads and acts; a change notified on the other reaches it (PostgreSQL's change feed);
when the leader stops, the other takes over."""

from __future__ import annotations

import threading

from lockstep.reconciler.leader import LeaderController
from lockstep.reconciler.queue import WorkQueue
from lockstep.store.change_feed import ChangeFeed
from lockstep.store.database import Database
from lockstep.store.leadership import leadership_of
from tests.support.api import poll


class Recording:
    """Stands for the reconciler: takes ids from its queue and remembers them."""

    def __init__(self, queue: WorkQueue) -> None:
        self.queue = queue
        self.seen: list[str] = []
        self.running = False
        self._thread = threading.Thread(target=self._take, daemon=True)

    def start(self) -> None:
        self.running = True
        self._thread.start()

    def _take(self) -> None:
        while (keys := self.queue.take(timeout=1.0)) is not None:
            self.seen.extend(sorted(keys))

    def stop(self) -> None:
        self.queue.close()
        self._thread.join()
        self.running = False


def controller(database: Database, acting: list[Recording]) -> LeaderController:
    def act(queue: WorkQueue) -> Recording:
        acting.append(Recording(queue))
        return acting[-1]

    feed = None if database.is_sqlite else ChangeFeed(database)
    return LeaderController(leadership_of(database), act, feed=feed, check_seconds=0.05)


def test_one_leads_hears_the_others_changes_and_hands_over(database_url: str) -> None:
    first_db, second_db = Database(database_url), Database(database_url)
    first_acts: list[Recording] = []
    second_acts: list[Recording] = []
    first, second = controller(first_db, first_acts), controller(second_db, second_acts)
    try:
        first.start()
        assert first.leading.wait(10)
        second.start()
        if not first_db.is_sqlite:  # SQLite has one process, which hears its own changes
            # The feed's listener may not be connected yet: notify until the leader hears.
            def heard() -> list[str] | None:
                second.notify("w-1")
                return first_acts[0].seen or None

            poll(
                heard,
                what="a change notified on the follower, seen by the leader",
                timeout=10,
                every=0.2,
            )
            assert set(first_acts[0].seen) == {"w-1"}
        first.notify("w-2")
        poll(
            lambda: "w-2" in first_acts[0].seen or None, what="the leader's own change", timeout=10
        )
        assert not second.leading.is_set() and second_acts == []
        first.stop()
        assert not first_acts[0].running
        assert second.leading.wait(10)
        assert second_acts[0].running
    finally:
        first.stop()
        second.stop()
        first_db.dispose()
        second_db.dispose()
