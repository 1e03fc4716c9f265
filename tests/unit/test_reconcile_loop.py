"""What every backend's reconciler shares (reconciler/reconcile_loop.py): a workload that ends
now is deleted its autoDeletionTimeAfterCompletionSeconds later, and looked at again then; one
that had already ended, or asks for no deletion, gets no time; an ended workload is due for
deletion once its time has come."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from lockstep.domain.phases import Phase
from lockstep.domain.workload import Workload
from lockstep.reconciler.queue import WorkQueue
from lockstep.reconciler.reconcile_loop import ReconcileLoop
from lockstep.store.database import Database
from tests.unit.k8s import workload_of
from tests.unit.specs import request_body

NOW = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


class Loop(ReconcileLoop):
    def recover(self) -> None:
        pass

    def run_pass(self, keys: set[str]) -> None:
        pass


class Queue(WorkQueue):
    def __init__(self) -> None:
        super().__init__()
        self.later: list[tuple[str, float]] = []

    def add_after(self, key: str, delay: float) -> None:
        self.later.append((key, delay))


def loop(queue: Queue) -> Loop:
    return Loop(cast(Database, None), clock=lambda: NOW, queue=queue, resync_seconds=30.0)


def running(**spec: Any) -> Workload:
    workload = workload_of(request_body(spec={"numWorkers": 1, **spec}))
    return replace(workload, actual_phase=Phase.RUNNING)


def test_a_workload_ending_now_is_deleted_its_seconds_later() -> None:
    queue = Queue()
    workload = running(autoDeletionTimeAfterCompletionSeconds=60)
    assert loop(queue)._auto_delete_at(workload) == NOW + timedelta(seconds=60)
    assert queue.later == [(workload.id, 60.0)]


def test_no_time_without_the_setting_or_for_a_workload_already_ended() -> None:
    queue = Queue()
    assert loop(queue)._auto_delete_at(running()) is None
    ended = replace(running(autoDeletionTimeAfterCompletionSeconds=60), actual_phase=Phase.FAILED)
    assert loop(queue)._auto_delete_at(ended) is None
    assert queue.later == []


def test_an_ended_workload_is_due_once_its_time_has_come() -> None:
    queue = Queue()
    ended = replace(running(), actual_phase=Phase.COMPLETED)
    assert not loop(queue)._due_for_deletion(ended)
    later = replace(ended, auto_delete_at=NOW + timedelta(seconds=5))
    assert not loop(queue)._due_for_deletion(later)
    assert queue.later == [(ended.id, 5.0)]
    assert loop(queue)._due_for_deletion(replace(ended, auto_delete_at=NOW))
