"""One scheduling cycle (scheduler/cycle.py): strict FIFO gang admission on what is free,
head-of-line blocking, parking of gangs that could never fit, and the messages users see."""

from __future__ import annotations

from decimal import Decimal

from lockstep.scheduler.cycle import Candidate, Snapshot, schedule
from lockstep.scheduler.resources import Resources


def gpus(count: str, *, cpu: str = "0") -> Resources:
    return Resources(cpu=Decimal(cpu), gpus=Decimal(count))


MACHINE = Resources(cpu=Decimal(16), memory=Decimal(64 * 2**30), gpus=Decimal(8))


def idle(capacity: Resources = MACHINE) -> Snapshot:
    return Snapshot(capacity=capacity, used=Resources())


def candidate(workload_id: str, request: Resources) -> Candidate:
    return Candidate(workload_id=workload_id, name=f"name-{workload_id}", request=request)


def test_free_is_capacity_minus_used() -> None:
    snapshot = Snapshot(capacity=MACHINE, used=gpus("3", cpu="4"))
    assert snapshot.free == Resources(cpu=Decimal(12), memory=MACHINE.memory, gpus=Decimal(5))


def test_nothing_to_schedule() -> None:
    decisions = schedule(idle(), [])
    assert (decisions.admitted, decisions.parked, decisions.waiting) == ([], {}, {})


def test_everything_that_fits_is_admitted_in_order() -> None:
    heads = [candidate("a", gpus("4")), candidate("b", gpus("2")), candidate("c", gpus("2"))]
    decisions = schedule(idle(), heads)
    assert decisions.admitted == ["a", "b", "c"]
    assert decisions.waiting == {}
    assert decisions.parked == {}


def test_admission_uses_up_free_capacity_within_the_cycle() -> None:
    heads = [candidate("a", gpus("6")), candidate("b", gpus("3"))]
    decisions = schedule(idle(), heads)
    assert decisions.admitted == ["a"]
    assert decisions.waiting == {
        "b": "waiting for resources: 3 GPUs requested, 2 available",
    }


def test_what_is_already_used_is_not_free() -> None:
    snapshot = Snapshot(capacity=MACHINE, used=gpus("7"))
    decisions = schedule(snapshot, [candidate("a", gpus("2"))])
    assert decisions.admitted == []
    assert decisions.waiting == {"a": "waiting for resources: 2 GPUs requested, 1 available"}


def test_head_of_line_blocks_smaller_gangs_behind_it() -> None:
    """Strict FIFO: a big gang that fits the machine is never starved by small ones."""
    snapshot = Snapshot(capacity=MACHINE, used=gpus("4"))
    heads = [
        candidate("big", gpus("8")),
        candidate("small", gpus("1")),
        candidate("tiny", gpus("0")),
    ]
    decisions = schedule(snapshot, heads)
    assert decisions.admitted == []
    assert decisions.waiting == {
        "big": "waiting for resources: 8 GPUs requested, 4 available",
        "small": "queued behind workload name-big",
        "tiny": "queued behind workload name-big",
    }


def test_gangs_ahead_of_the_blocker_are_still_admitted() -> None:
    heads = [candidate("a", gpus("2")), candidate("big", gpus("8")), candidate("c", gpus("1"))]
    decisions = schedule(idle(), heads)
    assert decisions.admitted == ["a"]
    assert decisions.waiting["big"] == "waiting for resources: 8 GPUs requested, 6 available"
    assert decisions.waiting["c"] == "queued behind workload name-big"


def test_a_gang_that_can_never_fit_is_parked_and_blocks_no_one() -> None:
    heads = [candidate("huge", gpus("9")), candidate("a", gpus("8"))]
    decisions = schedule(idle(), heads)
    assert decisions.parked == {
        "huge": "the workload can never fit this cluster: 9 GPUs requested, 8 available",
    }
    assert decisions.admitted == ["a"]
    assert decisions.waiting == {}


def test_parking_is_judged_on_capacity_even_behind_a_blocker() -> None:
    snapshot = Snapshot(capacity=MACHINE, used=gpus("8"))
    heads = [candidate("a", gpus("1")), candidate("huge", gpus("9")), candidate("b", gpus("1"))]
    decisions = schedule(snapshot, heads)
    assert set(decisions.parked) == {"huge"}
    assert decisions.waiting == {
        "a": "waiting for resources: 1 GPUs requested, 0 available",
        "b": "queued behind workload name-a",
    }


def test_parking_message_lists_every_missing_resource() -> None:
    capacity = Resources(cpu=Decimal(2), memory=Decimal(1000), gpus=Decimal(0))
    request = Resources(cpu=Decimal("2.5"), memory=Decimal(1000), gpus=Decimal(1))
    decisions = schedule(idle(capacity), [candidate("a", request)])
    assert decisions.parked == {
        "a": "the workload can never fit this cluster: "
        "2.5 CPU cores requested, 2 available; 1 GPUs requested, 0 available"
    }


def test_each_candidate_gets_exactly_one_decision() -> None:
    snapshot = Snapshot(capacity=MACHINE, used=gpus("2"))
    heads = [candidate(str(i), gpus(str(size))) for i, size in enumerate([1, 9, 3, 4, 1, 12, 0, 2])]
    decisions = schedule(snapshot, heads)
    buckets = [set(decisions.admitted), set(decisions.parked), set(decisions.waiting)]
    assert set.union(*buckets) == {c.workload_id for c in heads}
    assert sum(len(b) for b in buckets) == len(heads)
    admitted = sum((c.request for c in heads if c.workload_id in decisions.admitted), Resources())
    assert admitted.fits_in(snapshot.free)
    assert decisions.admitted == ["0", "2"]


def test_schedule_is_pure() -> None:
    snapshot = Snapshot(capacity=MACHINE, used=gpus("1"))
    heads = (candidate("a", gpus("4")), candidate("b", gpus("4")))
    first = schedule(snapshot, heads)
    second = schedule(snapshot, heads)
    assert first == second
    assert snapshot.free.gpus == Decimal(7)
