"""A gang as its shape (scheduler/gang/shape.py, gang/of_workload.py `gang_of`): pods named
and ordered as the plan names them without a per-pod object, the most pods of a kind a node
could hold, and the reasons a gang could never fit, judged from the shape alone
(nodes/ever_fits.py)."""

from __future__ import annotations

import tracemalloc
from decimal import Decimal
from typing import Any

import pytest

from lockstep.domain.cluster import Gpu, Node
from lockstep.scheduler.gang.needs import GpuNeed, PodNeed
from lockstep.scheduler.gang.of_workload import gang_affinity, gang_needs, gang_of
from lockstep.scheduler.gang.selectors import Selector
from lockstep.scheduler.gang.shape import GangShape, NumberedNames, PodGroup
from lockstep.scheduler.nodes.ever_fits import most_pods, never_fits
from tests.unit.k8s import workload_of
from tests.unit.specs import request_body

GI = 2**30
MACHINE = Node("m", "default", Decimal(16), Decimal(64 * GI), tuple(Gpu(i) for i in range(8)))


def workers(count: int, need: PodNeed, *, prefix: str = "big-worker-") -> GangShape:
    """A leader and `count` workers, all asking `need`."""
    return GangShape(
        (
            PodGroup(need, ("big-master-0",)),
            PodGroup(need, NumberedNames(prefix, 0, count)),
        )
    )


def test_numbered_names_are_made_only_when_read() -> None:
    names = NumberedNames("job-worker-", 1, 10**9)
    assert len(names) == 10**9
    assert (names[0], names[-1]) == ("job-worker-1", "job-worker-1000000000")
    assert list(names[2:4]) == ["job-worker-3", "job-worker-4"]
    assert names[:3] == NumberedNames("job-worker-", 1, 3)


def test_a_shape_yields_its_pods_in_rank_order_and_cuts_to_its_first_ones() -> None:
    shape = workers(3, PodNeed("", cpu=Decimal(1)))
    assert shape.size == 4
    assert [need.pod for need in shape.pods()] == [
        "big-master-0",
        "big-worker-0",
        "big-worker-1",
        "big-worker-2",
    ]
    assert [need.pod for need in shape.pods(limit=2)] == ["big-master-0", "big-worker-0"]
    assert [need.pod for need in shape.first(3).pods()] == [
        "big-master-0",
        "big-worker-0",
        "big-worker-1",
    ]
    assert {need.cpu for need in shape.pods()} == {Decimal(1)}


@pytest.mark.parametrize("framework", ["PyTorch", "MPI", "TF", "XGBoost", "JAX"])
@pytest.mark.parametrize("master", [None, {"compute": {"gpuDevicesRequest": 1}}])
def test_a_workloads_gang_names_and_asks_as_its_plan_does(
    framework: str, master: dict[str, Any] | None
) -> None:
    spec = {
        "distributedFramework": framework,
        "numWorkers": 3,
        "compute": {"cpuCoreRequest": 0.5},
        "podAffinity": {"type": "Preferred", "key": "rack"},
    }
    if framework == "MPI":
        spec["slotsPerWorker"] = 1
    extra: dict[str, Any] = {}
    if master is not None:
        extra = {"masterSpecSameAsWorker": False, "masterSpec": {**master, "image": "x"}}
    workload = workload_of(request_body(name="job", spec=spec, **extra))
    plan = workload.plan()
    gang = gang_of(workload)
    assert list(gang.shape.pods()) == gang_needs(plan)
    assert gang.required is None
    assert gang.affinity == gang_affinity(plan)


@pytest.mark.parametrize(
    ("workers", "elastic", "required"),
    [
        (4, {"minReplicas": 2, "maxReplicas": 5}, 2),
        (2, {"minReplicas": 2, "maxReplicas": 2}, 2),
        (1, {"maxReplicas": 1}, 1),
    ],
)
def test_an_elastic_gang_is_its_plans_worker_pods_and_requires_its_min_replicas(
    workers: int, elastic: dict[str, int], required: int
) -> None:
    spec = {
        "distributedFramework": "PyTorch",
        "numWorkers": workers,
        "compute": {"cpuCoreRequest": 0.5},
        "podAffinity": {"type": "Preferred", "key": "rack"},
        **elastic,
    }
    workload = workload_of(request_body(name="job", spec=spec))
    plan = workload.plan()
    gang = gang_of(workload)
    assert list(gang.shape.pods()) == gang_needs(plan)
    assert gang.shape.size == workers
    assert gang.required == plan.required_pods == required
    assert gang.affinity == gang_affinity(plan)


def test_reading_a_gang_of_a_million_workers_makes_no_per_pod_object() -> None:
    spec = {"distributedFramework": "PyTorch", "numWorkers": 1_000_000}
    workload = workload_of(request_body(name="job", spec=spec))
    tracemalloc.start()
    try:
        gang = gang_of(workload)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert gang.shape.size == 1_000_001
    assert peak < 1_000_000  # a million PodNeeds would take hundreds of megabytes


@pytest.mark.parametrize(
    ("need", "most"),
    [
        (PodNeed(""), 110),  # only the node's max pods bounds pods that ask nothing
        (PodNeed("", cpu=Decimal(3)), 5),
        (PodNeed("", memory=Decimal(10 * GI)), 6),
        (PodNeed("", gpu=GpuNeed(devices=3)), 2),
        (PodNeed("", gpu=GpuNeed(devices=1, portion=Decimal("0.3"))), 24),
        (PodNeed("", gpu=GpuNeed(devices=2, portion=Decimal("0.5"))), 8),
        (PodNeed("", cpu=Decimal("0.001")), 110),
    ],
)
def test_the_most_pods_of_a_kind_an_idle_node_holds(need: PodNeed, most: int) -> None:
    assert most_pods(MACHINE, need) == most


def test_gpu_memory_requests_count_on_devices_whose_memory_is_known() -> None:
    node = Node("g", "default", Decimal(8), Decimal(GI), (Gpu(0, Decimal(40 * GI)), Gpu(1)))
    need = PodNeed("", gpu=GpuNeed(devices=1, memory=Decimal(10 * GI)))
    assert most_pods(node, need) == 4


def test_a_gang_larger_than_the_cluster_is_judged_in_total_from_its_shape() -> None:
    shape = workers(1_000_000, PodNeed("", gpu=GpuNeed(devices=2)))
    assert never_fits([MACHINE], shape) == (
        "needs 2000002 GPUs, 8 in all; "
        "needs room for 1000001 pods, 110 in all (a node runs at most 110 pods at once)"
    )


def test_pods_that_ask_nothing_are_bounded_by_max_pods() -> None:
    shape = workers(1_000_000, PodNeed(""))
    assert never_fits([MACHINE], shape) == (
        "needs room for 1000001 pods, 110 in all (a node runs at most 110 pods at once)"
    )
    assert never_fits([MACHINE], workers(109, PodNeed(""))) is None


def test_a_gang_that_fits_in_total_but_not_node_by_node_says_how_many_could_be_held() -> None:
    # 0.6 of a GPU each: 6 GPUs in total would do, but a device holds only one such share
    shape = workers(9, PodNeed("", gpu=GpuNeed(devices=1, portion=Decimal("0.6"))))
    assert never_fits([MACHINE], shape) == (
        "it asks 10 pods of 0.6 of a GPU and the nodes could hold at most 8"
    )
    small = Node("s", "default", Decimal(3), Decimal(GI))
    two_cores = workers(1, PodNeed("", cpu=Decimal(2)))
    assert never_fits([small, small], two_cores) is None
    assert never_fits([small], two_cores) == "needs 4 CPU cores, 3 in all"
    three = workers(2, PodNeed("", cpu=Decimal(2)))  # 6 cores in all, but 1 pod per node
    assert never_fits([small, small], three) == (
        "it asks 3 pods of 2 CPU cores and the nodes could hold at most 2"
    )


def test_a_pod_no_node_accepts_is_named_and_distinct_specs_are_judged_apart() -> None:
    pool = Selector(pools=("a100",))
    shape = GangShape(
        (
            PodGroup(PodNeed(""), ("job-master-0",)),
            PodGroup(PodNeed("", selector=pool), NumberedNames("job-worker-", 0, 10**6)),
        )
    )
    assert never_fits([MACHINE], shape) == (
        "no node in node pool a100 accepts pod job-worker-0 (the nodes are in node pools default)"
    )
