"""The store on its own, on SQLite and PostgreSQL: what the API and the reconciler rely on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from lockstep.domain.errors import Conflict
from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.domain.workload import Event, EventType, PhaseChange, Workload, WorkloadUpdate
from lockstep.domain.workload_request import WorkloadRequest
from lockstep.schemas.distributed import DistributedFramework
from lockstep.store.database import Database

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    store = Database(database_url)
    store.migrate()
    with store.write() as unit:
        cluster = unit.organization.add_cluster(str(uuid.uuid4()), "local", NOW)
        department = unit.organization.add_department(
            name="default", cluster_id=cluster.id, created_by="test", resources=[], now=NOW
        )
        unit.organization.add_project(
            name="default",
            cluster_id=cluster.id,
            department_id=department.id,
            created_by="test",
            requested_namespace=None,
            resources=[],
            now=NOW,
        )
    yield store
    store.dispose()


def new_workload(database: Database, name: str = "job", *, created_at: datetime = NOW) -> Workload:
    with database.read() as unit:
        project = unit.organization.projects()[0]
    return Workload(
        id=str(uuid.uuid4()),
        name=name,
        requested_name=name,
        project_id=project.id,
        department_id=project.department_id,
        cluster_id=project.cluster_id,
        created_by="test",
        created_at=created_at,
        desired_phase=DesiredPhase.RUNNING,
        actual_phase=Phase.CREATING,
        phase_message="",
        phase_updated_at=NOW,
        framework=DistributedFramework.PYTORCH,
        request=WorkloadRequest(
            WorkloadKind.DISTRIBUTED,
            {"spec": {"image": "x", "distributedFramework": "PyTorch", "numWorkers": 1}},
        ),
        priority_class="train",
        priority=50,
    )


def test_live_names_are_unique_per_project_and_nothing_is_half_stored(database: Database) -> None:
    first = new_workload(database)
    with database.write() as unit:
        unit.workloads.insert(first)
    with pytest.raises(Conflict), database.write() as unit:
        unit.workloads.insert(new_workload(database))
    with database.read() as unit:
        assert list(unit.workloads.get_many([first.id])) == [first.id]
        assert len(unit.workloads.history(first.id, offset=0, limit=10)) == 1


def test_history_keeps_the_order_of_changes_made_in_the_same_instant(database: Database) -> None:
    workload = new_workload(database)
    with database.write() as unit:
        unit.workloads.insert(workload)
    current = workload
    messages = [f"step {i}" for i in range(12)]
    with database.write() as unit:
        for message in messages:
            unit.workloads.apply(current, WorkloadUpdate(message=message), NOW)
            current = replace(current, phase_message=message)
        event = Event(
            str(uuid.uuid4()),
            workload.id,
            NOW,
            EventType.NORMAL,
            "Scheduled",
            "ok",
            "Workload",
            "job",
        )
        unit.workloads.apply(current, WorkloadUpdate(events=[event]), NOW)
    with database.read() as unit:
        history = unit.workloads.history(workload.id, offset=0, limit=50)
    changes = [r.message for r in history if isinstance(r, PhaseChange)]
    assert changes == ["", *messages]
    assert isinstance(history[-1], Event)


def test_a_workload_passing_through_a_phase_records_both(database: Database) -> None:
    workload = new_workload(database)
    with database.write() as unit:
        unit.workloads.insert(workload)
        change = WorkloadUpdate(
            phase=Phase.INITIALIZING, message="starting pods", through=Phase.PENDING
        )
        unit.workloads.apply(workload, change, NOW + timedelta(seconds=1))
    with database.read() as unit:
        phases = [
            r.phase
            for r in unit.workloads.history(workload.id, offset=0, limit=10)
            if isinstance(r, PhaseChange)
        ]
        stored = unit.workloads.get(workload.id)
    assert phases == [Phase.CREATING, Phase.PENDING, Phase.INITIALIZING]
    assert stored is not None and stored.actual_phase is Phase.INITIALIZING


def test_parked_workloads_leave_the_queue_until_unparked(database: Database) -> None:
    workloads = [
        new_workload(database, f"job-{i}", created_at=NOW + timedelta(seconds=i)) for i in range(3)
    ]
    with database.write() as unit:
        for workload in workloads:
            unit.workloads.insert(workload)
        unit.workloads.apply(workloads[1], WorkloadUpdate(phase=Phase.PENDING, parked=True), NOW)
    with database.read() as unit:
        assert [w.name for w in unit.workloads.queue_heads(per_project=10, limit=10)] == [
            "job-0",
            "job-2",
        ]
    with database.write() as unit:
        unit.workloads.unpark_all()
    with database.read() as unit:
        assert sorted(w.name for w in unit.workloads.queue_heads(per_project=10, limit=10)) == [
            "job-0",
            "job-1",
            "job-2",
        ]


def test_deleted_workloads_are_kept_but_hidden(database: Database) -> None:
    workload = new_workload(database)
    with database.write() as unit:
        unit.workloads.insert(workload)
        unit.workloads.apply(workload, WorkloadUpdate(deleted=True), NOW)
    with database.read() as unit:
        assert unit.workloads.get(workload.id) is None
        kept = unit.workloads.get(workload.id, include_deleted=True)
        assert kept is not None and kept.deleted_at == NOW
    with database.write() as unit:
        unit.workloads.insert(new_workload(database))  # the name is free again


def test_the_queue_is_read_per_project_and_positions_count_within_one(database: Database) -> None:
    with database.write() as unit:
        first = unit.organization.projects()[0]
        other = unit.organization.add_project(
            name="other",
            cluster_id=first.cluster_id,
            department_id=first.department_id,
            created_by="test",
            requested_namespace=None,
            resources=[],
            now=NOW,
        )
    crowd = [
        new_workload(database, f"crowd-{i}", created_at=NOW + timedelta(seconds=i))
        for i in range(5)
    ]
    late = replace(
        new_workload(database, "late", created_at=NOW + timedelta(seconds=9)),
        project_id=other.id,
    )
    urgent = replace(
        new_workload(database, "urgent", created_at=NOW + timedelta(seconds=10)), priority=100
    )
    with database.write() as unit:
        for workload in [*crowd, late, urgent]:
            unit.workloads.insert(workload)
    with database.read() as unit:
        heads = unit.workloads.queue_heads(per_project=2, limit=10)
        # Two of each project's queue, by priority then age: the crowd does not hide `late`.
        assert [w.name for w in heads] == ["urgent", "crowd-0", "late"]
        assert unit.workloads.queue_position(crowd[3]) == 5  # urgent and crowd-0..2 ahead
        assert unit.workloads.queue_position(late) == 1
        assert [w.name for w in unit.workloads.queue_heads(per_project=9, limit=3)] == [
            "urgent",
            "crowd-0",
            "crowd-1",
        ]


def test_why_a_workload_waits_is_kept_while_pending_only(database: Database) -> None:
    from lockstep.domain.workload import PendingMessage

    workload = new_workload(database)
    why = PendingMessage("default", "OverLimit", "over its GPU limit", org_type="project")
    with database.write() as unit:
        unit.workloads.insert(workload)
        unit.workloads.apply(
            workload, WorkloadUpdate(phase=Phase.PENDING, message="waits", pending=(why,)), NOW
        )
    with database.read() as unit:
        pending = unit.workloads.get(workload.id)
    assert pending is not None and pending.pending == (why,)
    assert pending.phase_reason == "OverLimit"
    with database.write() as unit:
        unit.workloads.apply(pending, WorkloadUpdate(phase=Phase.INITIALIZING), NOW)
    with database.read() as unit:
        started = unit.workloads.get(workload.id)
    assert started is not None and started.pending == () and started.phase_reason is None
