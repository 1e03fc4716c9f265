"""Placing a gang on nodes (scheduler/nodes/placement.py): whole GPUs on idle devices, fractions
sharing a device without over-committing it, node pools in order of preference, node types,
taints, pod affinity, and the messages that say what is missing where."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lockstep.domain.cluster import Assignment, Gpu, Node, Taint
from lockstep.scheduler.gang.needs import ONE, GpuNeed, PodNeed
from lockstep.scheduler.gang.selectors import Selector
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.shortfall import GangShortfall
from lockstep.scheduler.nodes.usage import Usage
from lockstep.schemas.pod import PodAffinity, PodAffinityType, Toleration, TolerationOperator

GI = 2**30


def node(
    name: str,
    pool: str = "default",
    *,
    gpus: int = 0,
    gpu_memory: int | None = None,
    first: int = 0,
    cpu: int = 16,
    labels: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
) -> Node:
    memory = None if gpu_memory is None else Decimal(gpu_memory)
    devices = tuple(Gpu(first + i, memory) for i in range(gpus))
    return Node(name, pool, Decimal(cpu), Decimal(64 * GI), devices, labels or {}, taints)


def whole(pod: str, devices: int, **selector: object) -> PodNeed:
    return PodNeed(pod, gpu=GpuNeed(devices=devices), selector=Selector(**selector))  # type: ignore[arg-type]


def portion(pod: str, share: str, devices: int = 1) -> PodNeed:
    return PodNeed(pod, gpu=GpuNeed(devices=devices, portion=Decimal(share)))


def placed(result: object) -> dict[str, Assignment]:
    assert isinstance(result, dict), result
    return result


def shortfall(result: object) -> str:
    assert isinstance(result, GangShortfall), result
    return result.message


def test_whole_gpus_take_idle_devices_and_pods_fill_nodes_in_order() -> None:
    usage = Usage([node("a", gpus=2), node("b", gpus=2, first=2)])
    result = placed(place(usage, [whole("p0", 1), whole("p1", 2), whole("p2", 1)]))
    # the largest pod first, on the first node with room
    assert result["p1"] == Assignment("a", (0, 1))
    assert result["p0"] == Assignment("b", (2,))
    assert result["p2"] == Assignment("b", (3,))
    assert usage.free_gpus(usage.nodes[0]) == 0


def test_fractions_share_a_device_and_never_over_commit_it() -> None:
    gpu_node = node("a", gpus=2)
    usage = Usage([gpu_node])
    first = placed(place(usage, [portion("x", "0.5"), portion("y", "0.3")]))
    assert first["x"] == Assignment("a", (0,), Decimal("0.5"))
    assert first["y"] == Assignment("a", (0,), Decimal("0.3"))  # packed onto the fuller device
    second = placed(place(usage, [portion("z", "0.3")]))
    assert second["z"].gpus == (1,)  # 0.2 left on device 0
    assert usage.free_share(gpu_node, 0) == Decimal("0.2")
    # a whole device is now nowhere to be had
    assert shortfall(place(usage, [whole("w", 1)])) == "needs 1 GPU, 0 free"


def test_a_portion_of_several_devices_takes_that_share_of_each() -> None:
    usage = Usage([node("a", gpus=3)])
    result = placed(place(usage, [portion("p", "0.5", devices=2)]))
    assert result["p"] == Assignment("a", (0, 1), Decimal("0.5"))
    assert result["p"].gpu_amount == Decimal(1)


def test_gpu_memory_requests_become_a_share_of_the_device() -> None:
    usage = Usage([node("a", gpus=1, gpu_memory=16 * GI)])
    need = PodNeed("m", gpu=GpuNeed(devices=1, memory=Decimal(4 * GI)))
    assert placed(place(usage, [need]))["m"] == Assignment("a", (0,), Decimal("0.25"))
    too_big = PodNeed("n", gpu=GpuNeed(devices=1, memory=Decimal(13 * GI)))
    assert shortfall(place(usage, [too_big])) == "needs 13Gi of GPU memory, 12Gi free"
    two = Usage([node("b", gpus=2, gpu_memory=16 * GI)])
    placed(place(two, [PodNeed("h", gpu=GpuNeed(devices=1, memory=Decimal(8 * GI)))]))
    # 8Gi free on device 0, 16Gi on device 1: 24Gi in all, but not 10Gi twice
    ten = [PodNeed(f"t{i}", gpu=GpuNeed(devices=1, memory=Decimal(10 * GI))) for i in range(3)]
    assert shortfall(place(two, ten)) == "needs 30Gi of GPU memory, 24Gi free"
    assert shortfall(place(two, ten[:2])) == (
        "pod t1 needs 10Gi of GPU memory on one node; at most 8Gi of GPU memory free on any device"
    )


def test_gpu_memory_requests_need_to_know_the_memory_of_the_gpus() -> None:
    usage = Usage([node("a", gpus=1)])
    need = PodNeed("m", gpu=GpuNeed(devices=1, memory=Decimal(GI)))
    assert "the memory of these GPUs is not known" in shortfall(place(usage, [need]))


def test_the_gang_is_all_or_nothing() -> None:
    usage = Usage([node("a", gpus=2)])
    assert shortfall(place(usage, [whole("p", 1), whole("q", 1), whole("r", 1)])) == (
        "needs 3 GPUs, 2 in all"
    )
    assert usage.free_gpus(usage.nodes[0]) == 2  # nothing was taken


def test_node_pools_are_tried_in_the_order_given() -> None:
    nodes = [node("v", "v100", gpus=4), node("a", "a100", gpus=2, first=4)]
    usage = Usage(nodes)
    result = placed(place(usage, [whole("p", 2, pools=("a100", "v100"))]))
    assert result["p"].node == "a"
    spill = placed(place(usage, [whole("q", 2, pools=("a100", "v100"))]))
    assert spill["q"].node == "v"


def test_the_message_names_the_node_pool_and_what_is_free_there() -> None:
    nodes = [
        node("a1", "a100", gpus=2),
        node("a2", "a100", gpus=2, first=2),
        node("v", "v100", gpus=8, first=4),
    ]
    usage = Usage(nodes)
    placed(place(usage, [whole("busy", 2, pools=("a100",))]))
    gang = [whole(f"w{i}", 1, pools=("a100",)) for i in range(4)]
    assert shortfall(place(usage, gang)) == "needs 4 GPUs in node pool a100, 2 free"


def test_no_node_in_the_pool() -> None:
    usage = Usage([node("a", "default")])
    assert shortfall(place(usage, [whole("p", 0, pools=("h100",))])) == (
        "no node in node pool h100 accepts pod p (the nodes are in node pools default)"
    )


def test_node_type_selects_on_the_node_type_label() -> None:
    usage = Usage(
        [node("cpu", labels={"run.ai/type": "cpu"}), node("dgx", labels={"run.ai/type": "dgx"})]
    )
    assert placed(place(usage, [whole("p", 0, node_type="dgx")]))["p"].node == "dgx"
    assert shortfall(place(usage, [whole("q", 0, node_type="tpu")])) == (
        "no node of node type tpu accepts pod q"
    )


def test_tainted_nodes_take_only_pods_that_tolerate_the_taint() -> None:
    tainted = node("t", taints=(Taint("dedicated", "ml"),))
    usage = Usage([tainted])
    assert isinstance(place(usage, [whole("p", 0)]), GangShortfall)
    tolerant = Toleration(name="t", key="dedicated", operator=TolerationOperator.EXISTS)
    assert placed(place(usage, [whole("q", 0, tolerations=(tolerant,))]))["q"].node == "t"


def test_cpu_and_memory_are_accounted_per_node() -> None:
    usage = Usage([node("a", cpu=4), node("b", cpu=4)])
    gang = [PodNeed(f"p{i}", cpu=Decimal(3)) for i in range(2)]
    result = placed(place(usage, gang))
    assert {a.node for a in result.values()} == {"a", "b"}
    assert shortfall(place(usage, [PodNeed("q", cpu=Decimal(3))])) == "needs 3 CPU cores, 2 free"
    fragmented = shortfall(
        place(usage, [PodNeed("r", cpu=Decimal("1.5")), PodNeed("s", cpu=Decimal("0.5"))])
    )
    assert fragmented == (
        "pod r needs 1.5 CPU cores on one node; "
        "at most 1 CPU core and 64Gi of memory free on any node"
    )


@pytest.mark.parametrize("kind", [PodAffinityType.REQUIRED, PodAffinityType.PREFERRED])
def test_pod_affinity_keeps_the_gang_within_one_topology_value(kind: PodAffinityType) -> None:
    nodes = [
        node("r1a", gpus=1, labels={"rack": "1"}),
        node("r2a", gpus=2, first=1, labels={"rack": "2"}),
        node("r2b", gpus=2, first=3, labels={"rack": "2"}),
    ]
    usage = Usage(nodes)
    result = placed(
        place(
            usage,
            [whole(f"p{i}", 1) for i in range(3)],
            affinity=PodAffinity(type=kind, key="rack"),
        )
    )
    assert {a.node for a in result.values()} <= {"r2a", "r2b"}


def test_required_pod_affinity_refuses_to_spread_and_preferred_spreads() -> None:
    nodes = [
        node("r1", gpus=2, labels={"rack": "1"}),
        node("r2", gpus=2, first=2, labels={"rack": "2"}),
    ]
    gang = [whole(f"p{i}", 1) for i in range(3)]
    required = PodAffinity(type=PodAffinityType.REQUIRED, key="rack")
    assert "no nodes sharing one value of rack" in shortfall(
        place(Usage(nodes), gang, affinity=required)
    )
    preferred = PodAffinity(type=PodAffinityType.PREFERRED, key="rack")
    assert len(placed(place(Usage(nodes), gang, affinity=preferred))) == 3
    unlabelled = PodAffinity(type=PodAffinityType.REQUIRED, key="zone")
    assert shortfall(place(Usage(nodes), gang, affinity=unlabelled)) == (
        "no node has the label zone that the pod affinity requires"
    )


def capped(name: str, max_pods: int, cpu: str = "16") -> Node:
    return Node(name, "default", Decimal(cpu), Decimal(64 * GI), max_pods=max_pods)


def test_a_node_runs_at_most_its_max_pods_whatever_they_ask() -> None:
    usage = Usage([capped("a", 2), capped("b", 1)])
    gang = [PodNeed(f"p{i}") for i in range(3)]
    result = placed(place(usage, gang))
    assert [result[f"p{i}"].node for i in range(3)] == ["a", "a", "b"]
    assert [usage.free_pods(n) for n in usage.nodes] == [0, 0]
    assert shortfall(place(usage, [PodNeed("late")])) == (
        "needs room for 1 pod, 0 free (a node runs at most 2 pods at once)"
    )
    usage.release(gang[:1], result)  # p0 ended: its room is free again
    assert placed(place(usage, [PodNeed("late")]))["late"].node == "a"


def test_a_gang_beyond_the_nodes_max_pods_says_so_on_an_idle_cluster() -> None:
    usage = Usage([capped("a", 2)])
    assert shortfall(place(usage, [PodNeed(f"p{i}") for i in range(3)])) == (
        "needs room for 3 pods, 2 in all (a node runs at most 2 pods at once)"
    )
    assert usage.idle()


def test_a_full_node_is_left_out_of_what_the_roomiest_node_has_free() -> None:
    usage = Usage([capped("a", 1, cpu="8"), capped("b", 5, cpu="0.5")])
    assert shortfall(place(usage, [PodNeed("p0", cpu=ONE), PodNeed("p1", cpu=ONE)])) == (
        "pod p1 needs 1 CPU core on one node; at most 0.5 CPU cores and 64Gi of memory free "
        "on any node with room for another pod"
    )
