"""The reconciler's work queue (reconciler/queue.py): deduplication, delayed entries driven by
an injected fake clock, and closing. Nothing here sleeps: `take(timeout=0)` never waits."""

from __future__ import annotations

import pytest

from lockstep.reconciler.queue import WorkQueue


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> WorkQueue:
    return WorkQueue(monotonic=clock)


def test_empty_queue_gives_an_empty_set_without_waiting(queue: WorkQueue) -> None:
    assert queue.take(timeout=0) == set()


def test_added_keys_are_taken_together(queue: WorkQueue) -> None:
    queue.add("a")
    queue.add("b")
    assert queue.take(timeout=0) == {"a", "b"}
    assert queue.take(timeout=0) == set()


def test_a_key_added_twice_is_taken_once(queue: WorkQueue) -> None:
    queue.add("a")
    queue.add("a")
    assert queue.take(timeout=0) == {"a"}
    assert queue.take(timeout=0) == set()


def test_a_key_added_again_after_take_comes_back(queue: WorkQueue) -> None:
    queue.add("a")
    assert queue.take(timeout=0) == {"a"}
    queue.add("a")
    assert queue.take(timeout=0) == {"a"}


def test_delayed_key_is_not_ready_before_its_time(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("a", 5.0)
    assert queue.take(timeout=0) == set()
    clock.advance(4.75)
    assert queue.take(timeout=0) == set()
    clock.advance(0.25)
    assert queue.take(timeout=0) == {"a"}
    clock.advance(100)
    assert queue.take(timeout=0) == set(), "a delayed key is delivered once"


def test_delays_are_measured_from_when_they_were_added(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("late", 10)
    clock.advance(8)
    queue.add_after("early", 1)
    clock.advance(1)
    assert queue.take(timeout=0) == {"early"}
    clock.advance(1)
    assert queue.take(timeout=0) == {"late"}


def test_every_due_key_is_taken_at_once(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("a", 3)
    queue.add_after("b", 1)
    queue.add_after("c", 2)
    queue.add("d")
    clock.advance(3)
    assert queue.take(timeout=0) == {"a", "b", "c", "d"}


def test_due_delayed_key_merges_with_a_ready_duplicate(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("a", 1)
    queue.add_after("a", 2)
    queue.add("a")
    clock.advance(2)
    assert queue.take(timeout=0) == {"a"}
    assert queue.take(timeout=0) == set()


def test_a_ready_key_does_not_cancel_its_delayed_copy(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("a", 5)
    queue.add("a")
    assert queue.take(timeout=0) == {"a"}
    clock.advance(5)
    assert queue.take(timeout=0) == {"a"}


@pytest.mark.parametrize("delay", [0.0, -3.0])
def test_zero_or_negative_delay_is_ready_now(queue: WorkQueue, delay: float) -> None:
    queue.add_after("a", delay)
    assert queue.take(timeout=0) == {"a"}


def test_closed_queue_answers_none(queue: WorkQueue) -> None:
    queue.close()
    assert queue.take(timeout=0) is None


def test_close_wins_over_ready_keys(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("a")
    queue.add_after("b", 1)
    clock.advance(1)
    queue.close()
    assert queue.take(timeout=0) is None
    queue.add("c")
    assert queue.take(timeout=0) is None


def test_close_twice_is_harmless(queue: WorkQueue) -> None:
    queue.close()
    queue.close()
    assert queue.take(timeout=0) is None


def test_take_returns_a_set_the_caller_owns(queue: WorkQueue) -> None:
    queue.add("a")
    keys = queue.take(timeout=0)
    assert keys == {"a"}
    assert keys is not None
    keys.add("mutated")
    queue.add("b")
    assert queue.take(timeout=0) == {"b"}
