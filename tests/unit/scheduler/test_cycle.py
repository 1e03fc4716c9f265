"""One scheduling cycle (scheduler/cycle.py): strict FIFO gang admission on what is free,
head-of-line blocking, parking of gangs that could never fit, and the messages users see."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from decimal import Decimal

from lockstep.domain.cluster import Gpu, Node
from lockstep.scheduler.cycle import schedule
from lockstep.scheduler.decisions import Decisions, Preemption
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import GpuNeed, PodNeed
from lockstep.scheduler.gang.shape import GangShape, NumberedNames, PodGroup
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage

MACHINE = Node("m", "default", Decimal(16), Decimal(64 * 2**30), tuple(Gpu(i) for i in range(8)))


def gang(workload_id: str, *gpus: int, cpu: str = "0") -> Candidate:
    """One pod per entry of `gpus`, each asking for that many whole GPUs."""
    needs = [
        PodNeed(f"{workload_id}-{i}", cpu=Decimal(cpu), gpu=GpuNeed(devices=count))
        for i, count in enumerate(gpus)
    ]
    return Candidate(workload_id=workload_id, name=f"name-{workload_id}", shape=GangShape.of(needs))


def messages(decisions: Decisions) -> dict[str, str]:
    """What each waiting workload's user reads."""
    return {workload_id: waiting.message for workload_id, waiting in decisions.waiting.items()}


def idle(node: Node = MACHINE) -> Usage:
    return Usage([node])


def using(gpus: int) -> Usage:
    usage = idle()
    placed = place(usage, [PodNeed("other", gpu=GpuNeed(devices=gpus))])
    assert isinstance(placed, dict)
    return usage


def test_nothing_to_schedule() -> None:
    decisions = schedule(idle(), [])
    assert (decisions.admitted, decisions.parked, messages(decisions)) == ({}, {}, {})


def test_everything_that_fits_is_admitted_in_order_on_distinct_devices() -> None:
    heads = [gang("a", 4), gang("b", 1, 1), gang("c", 2)]
    decisions = schedule(idle(), heads)
    assert list(decisions.admitted) == ["a", "b", "c"]
    assert (messages(decisions), decisions.parked) == ({}, {})
    devices = [i for placed in decisions.admitted.values() for a in placed.values() for i in a.gpus]
    assert sorted(devices) == list(range(8))
    assert decisions.admitted["a"]["a-0"].gpus == (0, 1, 2, 3)


def test_admission_uses_up_free_capacity_within_the_cycle() -> None:
    decisions = schedule(idle(), [gang("a", 6), gang("b", 3)])
    assert list(decisions.admitted) == ["a"]
    assert messages(decisions) == {"b": "waiting for resources: needs 3 GPUs, 2 free"}


def test_what_is_already_used_is_not_free() -> None:
    decisions = schedule(using(7), [gang("a", 2)])
    assert decisions.admitted == {}
    assert messages(decisions) == {"a": "waiting for resources: needs 2 GPUs, 1 free"}


def test_head_of_line_blocks_smaller_gangs_behind_it() -> None:
    """Strict FIFO: a big gang that fits the machine is never starved by small ones."""
    heads = [gang("big", 8), gang("small", 1), gang("tiny", 0)]
    decisions = schedule(using(4), heads)
    assert decisions.admitted == {}
    assert messages(decisions) == {
        "big": "waiting for resources: needs 8 GPUs, 4 free",
        "small": "queued behind workload name-big",
        "tiny": "queued behind workload name-big",
    }


def test_gangs_ahead_of_the_blocker_are_still_admitted() -> None:
    decisions = schedule(idle(), [gang("a", 2), gang("big", 8), gang("c", 1)])
    assert list(decisions.admitted) == ["a"]
    assert decisions.waiting["big"].message == "waiting for resources: needs 8 GPUs, 6 free"
    assert decisions.waiting["c"].message == "queued behind workload name-big"


def test_a_gang_that_can_never_fit_is_parked_and_blocks_no_one() -> None:
    decisions = schedule(idle(), [gang("huge", 5, 4), gang("a", 8)])
    assert decisions.parked == {
        "huge": "the workload can never fit this cluster: needs 9 GPUs, 8 in all"
    }
    assert list(decisions.admitted) == ["a"]
    assert messages(decisions) == {}


def test_parking_is_judged_on_an_idle_cluster_even_behind_a_blocker() -> None:
    heads = [gang("a", 1), gang("huge", 9), gang("b", 1)]
    decisions = schedule(using(8), heads)
    assert set(decisions.parked) == {"huge"}
    assert messages(decisions) == {
        "a": "waiting for resources: needs 1 GPU, 0 free",
        "b": "queued behind workload name-a",
    }


def test_parking_message_lists_every_missing_resource() -> None:
    small = Node("m", "default", Decimal(2), Decimal(1000))
    need = PodNeed("a-0", cpu=Decimal("2.5"), memory=Decimal(2048), gpu=GpuNeed(devices=1))
    decisions = schedule(idle(small), [Candidate("a", "name-a", GangShape.of([need]))])
    assert decisions.parked == {
        "a": "the workload can never fit this cluster: needs 1 GPU, 0 in all; "
        "needs 2.5 CPU cores, 2 in all; needs 2Ki of memory, 1000 in all"
    }


def test_each_candidate_gets_exactly_one_decision() -> None:
    sizes = [1, 9, 3, 4, 1, 12, 0, 2]
    heads = [gang(str(i), size) for i, size in enumerate(sizes)]
    decisions = schedule(using(2), heads)
    buckets = [set(decisions.admitted), set(decisions.parked), set(decisions.waiting)]
    assert set.union(*buckets) == {c.workload_id for c in heads}
    assert sum(len(b) for b in buckets) == len(heads)
    assert list(decisions.admitted) == ["0", "2"]
    assert set(decisions.parked) == {"1", "5"}


def test_schedule_counts_what_it_admits_in_the_usage_it_is_given() -> None:
    usage = using(1)
    heads = (gang("a", 4), gang("b", 4))
    decisions = schedule(usage, heads)
    assert list(decisions.admitted) == ["a"]
    assert usage.free_gpus(MACHINE) == Decimal(3)
    again = schedule(usage, heads)
    assert again.admitted == {}


def holder(workload_id: str, gpus: int, usage: Usage, **fields: object) -> Holder:
    """An admitted workload holding `gpus` whole GPUs, counted in `usage`."""
    need = PodNeed(f"{workload_id}-0", gpu=GpuNeed(devices=gpus))
    placed = place(usage, [need])
    assert isinstance(placed, dict)
    return Holder(workload_id, f"name-{workload_id}", [need], placed, **fields)  # type: ignore[arg-type]


def urgent(workload_id: str, gpus: int, priority: int = 100) -> Candidate:
    return Candidate(
        workload_id,
        f"name-{workload_id}",
        GangShape.of([PodNeed(f"{workload_id}-0", gpu=GpuNeed(gpus))]),
        None,
        priority,
    )


def test_a_higher_priority_gang_preempts_the_newest_lowest_priority_holders() -> None:
    usage = idle()
    holders = [
        holder("old", 3, usage, priority=50, preemptible=True),
        holder("new", 3, usage, priority=50, preemptible=True),
        holder("mid", 2, usage, priority=75, preemptible=True),
    ]
    decisions = schedule(usage, [urgent("u", 3)], holders)
    assert decisions.preempted == {"new": Preemption("name-u", reclaim=False)}
    assert messages(decisions) == {"u": "waiting for preempted workloads to stop: name-new"}
    assert decisions.admitted == {}
    # several when one is not enough, still the lowest priority first
    decisions = schedule(usage, [urgent("v", 6)], holders)
    assert list(decisions.preempted) == ["new", "old"]


def test_nothing_is_preempted_that_would_not_make_room() -> None:
    usage = idle()
    holders = [
        holder("keep", 4, usage, priority=100, preemptible=False),
        holder("low", 4, usage, priority=50, preemptible=True),
    ]
    decisions = schedule(usage, [urgent("u", 6)], holders)
    assert decisions.preempted == {}
    assert messages(decisions) == {"u": "waiting for resources: needs 6 GPUs, 0 free"}


def test_only_lower_priority_preemptible_holders_are_preempted() -> None:
    usage = idle()
    holders = [
        holder("same", 4, usage, priority=100, preemptible=True),
        holder("fixed", 4, usage, priority=50, preemptible=False),
    ]
    decisions = schedule(usage, [urgent("u", 2)], holders)
    assert decisions.preempted == {}


def test_holders_already_leaving_are_waited_for_not_preempted_again() -> None:
    usage = idle()
    holders = [
        holder("leaving", 4, usage, priority=50, preemptible=True, leaving=True),
        holder("low", 4, usage, priority=50, preemptible=True),
    ]
    decisions = schedule(usage, [urgent("u", 4)], holders)
    assert decisions.preempted == {}
    assert messages(decisions) == {"u": "waiting for preempted workloads to stop"}


def elastic(workload_id: str, pods: int, required: int, gpus: int = 1) -> Candidate:
    needs = [PodNeed(f"{workload_id}-{i}", gpu=GpuNeed(devices=gpus)) for i in range(pods)]
    return Candidate(workload_id, f"name-{workload_id}", GangShape.of(needs), None, 0, required)


def test_an_elastic_gang_starts_with_its_minimum_and_what_else_fits() -> None:
    decisions = schedule(using(3), [elastic("e", pods=8, required=3)])
    assert sorted(decisions.admitted["e"]) == ["e-0", "e-1", "e-2", "e-3", "e-4"]
    assert messages(decisions) == {}


def test_an_elastic_gang_waits_when_even_its_minimum_does_not_fit_and_says_so() -> None:
    decisions = schedule(using(6), [elastic("e", pods=4, required=3)])
    assert decisions.admitted == {}
    assert messages(decisions) == {"e": "waiting for resources: needs 3 GPUs, 2 free"}
    parked = schedule(idle(), [elastic("f", pods=12, required=9)])
    assert parked.parked == {"f": "the workload can never fit this cluster: needs 9 GPUs, 8 in all"}


def test_elastic_holders_grow_into_free_room_only_when_nobody_waits() -> None:
    usage = idle()
    needs = [PodNeed(f"e-{i}", gpu=GpuNeed(devices=2)) for i in range(4)]
    placed = place(usage, needs[:3])
    assert isinstance(placed, dict)
    grower = Holder("e", "name-e", needs, placed, waiting=needs[3:])
    # a waiting gang has the free room first
    blocked = schedule(usage, [gang("big", 4)], [grower])
    assert blocked.grown == {}
    grown = schedule(usage, [], [grower])
    assert sorted(grown.grown["e"]) == ["e-0", "e-1", "e-2", "e-3"]
    assert grown.grown["e"]["e-3"].gpus == (6, 7)


def shaped(workload_id: str, workers: int, need: PodNeed, required: int | None = None) -> Candidate:
    """A leader and `workers` workers asking `need`, described by shape."""
    shape = GangShape(
        (
            PodGroup(need, (f"{workload_id}-master-0",)),
            PodGroup(need, NumberedNames(f"{workload_id}-worker-", 0, workers)),
        )
    )
    return Candidate(workload_id, f"name-{workload_id}", shape, required=required)


def peak_bytes(decide: Callable[[], Decisions]) -> tuple[Decisions, int]:
    """What `decide` decided and the most memory it held meanwhile."""
    tracemalloc.start()
    try:
        decisions = decide()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return decisions, peak


def test_a_gang_of_a_million_pods_is_parked_from_its_shape_and_a_small_one_runs() -> None:
    huge = shaped("huge", 1_000_000, PodNeed("", gpu=GpuNeed(devices=2)))
    decisions, peak = peak_bytes(lambda: schedule(idle(), [huge, gang("small", 1)]))
    assert decisions.parked == {
        "huge": "the workload can never fit this cluster: needs 2000002 GPUs, 8 in all; "
        "needs room for 1000001 pods, 110 in all (a node runs at most 110 pods at once)"
    }
    assert list(decisions.admitted) == ["small"]
    # no per-pod object of the huge gang: a million PodNeeds would take hundreds of megabytes
    assert peak < 1_000_000


def test_a_gang_the_nodes_hold_in_total_but_not_node_by_node_is_parked_from_its_shape() -> None:
    portions = shaped("p", 999_999, PodNeed("", gpu=GpuNeed(devices=1, portion=Decimal("0.6"))))
    two_nodes = Usage([MACHINE, Node("n", "default", Decimal(16), Decimal(64 * 2**30))])
    decisions, peak = peak_bytes(lambda: schedule(two_nodes, [portions]))
    assert decisions.parked["p"].startswith("the workload can never fit this cluster: needs 600000")
    assert peak < 1_000_000


def test_a_million_pod_elastic_gang_starts_with_what_the_nodes_hold_and_no_more() -> None:
    elastic_gang = shaped("e", 1_000_000, PodNeed("", cpu=Decimal("0.1")), required=2)
    decisions, peak = peak_bytes(lambda: schedule(idle(), [elastic_gang]))
    placed = decisions.admitted["e"]
    assert len(placed) == 110  # MACHINE's max pods: 16 cores would take 160 such pods
    assert {"e-master-0", "e-worker-0", "e-worker-108"} <= set(placed)
    assert peak < 5_000_000


def test_a_gang_beyond_a_nodes_max_pods_waits_whole_until_pods_end() -> None:
    capped = Node("c", "default", Decimal(16), Decimal(64 * 2**30), max_pods=2)
    assert schedule(Usage([capped]), [gang("three", 0, 0, 0)]).parked == {
        "three": "the workload can never fit this cluster: "
        "needs room for 3 pods, 2 in all (a node runs at most 2 pods at once)"
    }
    usage = Usage([capped])
    first = schedule(usage, [gang("a", 0, 0), gang("b", 0, 0)])
    assert list(first.admitted) == ["a"]
    assert messages(first) == {
        "b": "waiting for resources: "
        "needs room for 2 pods, 0 free (a node runs at most 2 pods at once)"
    }
    usage.release(list(gang("a", 0, 0).shape.pods()), first.admitted["a"])  # a ended
    assert list(schedule(usage, [gang("b", 0, 0)]).admitted) == ["b"]
