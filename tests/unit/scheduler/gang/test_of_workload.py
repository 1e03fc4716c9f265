"""What a pod and a whole gang ask the scheduler for (scheduler/gang/of_workload.py): whole GPUs,
portions, memory-typed GPU requests, CPU cores and memory quantities, and where pods may go."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from lockstep.scheduler.gang.needs import GpuNeed, PodNeed
from lockstep.scheduler.gang.of_workload import gang_affinity, gang_needs, pod_need
from lockstep.scheduler.gang.selectors import Selector
from lockstep.schemas.distributed import PodSpec
from tests.unit.specs import plan_of


def pod(compute: dict[str, Any] | None, **fields: Any) -> PodNeed:
    fields = {"image": "x", **fields}
    if compute is not None:
        fields["compute"] = compute
    return pod_need("p", PodSpec.model_validate_json(json.dumps(fields)))


def test_no_compute_asks_for_nothing() -> None:
    assert pod(None) == PodNeed("p")
    assert pod({}) == PodNeed("p")


@pytest.mark.parametrize(
    ("compute", "gpu"),
    [
        ({"gpuDevicesRequest": 0}, GpuNeed()),
        ({"gpuDevicesRequest": 1}, GpuNeed(devices=1)),
        ({"gpuDevicesRequest": 4}, GpuNeed(devices=4)),
        # a portion of one device, of each device when several are requested
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0.5}, GpuNeed(1, Decimal("0.5"))),
        ({"gpuPortionRequest": 0.25}, GpuNeed(1, Decimal("0.25"))),
        (
            {"gpuRequestType": "portion", "gpuPortionRequest": 0.5, "gpuDevicesRequest": 3},
            GpuNeed(3, Decimal("0.5")),
        ),
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0}, GpuNeed()),
        # an amount of a device's memory
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"},
            GpuNeed(1, memory=Decimal(4 * 2**30)),
        ),
        ({"gpuMemoryRequest": "4Gi"}, GpuNeed(1, memory=Decimal(4 * 2**30))),
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "2G", "gpuDevicesRequest": 2},
            GpuNeed(2, memory=Decimal(2 * 10**9)),
        ),
    ],
)
def test_gpus(compute: dict[str, Any], gpu: GpuNeed) -> None:
    assert pod(compute).gpu == gpu


def test_portions_are_exact_decimals() -> None:
    """0.1 GPUs is the decimal 0.1, so 0.1 + 0.2 is exactly 0.3."""
    first = pod({"gpuPortionRequest": 0.1}).gpu.portion
    second = pod({"gpuPortionRequest": 0.2}).gpu.portion
    assert first + second == Decimal("0.3")


@pytest.mark.parametrize(
    ("compute", "cpu", "memory"),
    [
        ({"cpuCoreRequest": 2}, Decimal(2), Decimal(0)),
        ({"cpuCoreRequest": 0.5}, Decimal("0.5"), Decimal(0)),
        ({"cpuMemoryRequest": "512Mi"}, Decimal(0), Decimal(512 * 2**20)),
        ({"cpuMemoryRequest": "2G"}, Decimal(0), Decimal(2 * 10**9)),
        ({"cpuMemoryRequest": 1000}, Decimal(0), Decimal(1000)),
        ({"cpuCoreRequest": 1.5, "cpuMemoryRequest": "1.5Gi"}, Decimal("1.5"), Decimal(3 * 2**29)),
        # limits are not requests: the scheduler reserves what is requested
        ({"cpuCoreLimit": 8, "cpuMemoryLimit": "64Gi"}, Decimal(0), Decimal(0)),
    ],
)
def test_cpu_and_memory(compute: dict[str, Any], cpu: Decimal, memory: Decimal) -> None:
    request = pod(compute)
    assert (request.cpu, request.memory) == (cpu, memory)


def test_placement_fields_become_the_selector() -> None:
    need = pod(
        None,
        nodePools=["a100", "v100"],
        nodeType="dgx",
        tolerations=[
            {"name": "t", "key": "gpu", "operator": "Exists"},
            {"name": "u", "key": "x", "operator": "Exists", "exclude": True},
        ],
    )
    assert need.selector.pools == ("a100", "v100")
    assert need.selector.node_type == "dgx"
    assert [t.key for t in need.selector.tolerations] == ["gpu"]
    assert pod(None).selector == Selector()


def test_gang_needs_have_every_pod_with_its_own_spec() -> None:
    worker = {"compute": {"gpuDevicesRequest": 2, "cpuCoreRequest": 4, "cpuMemoryRequest": "8Gi"}}
    master = {"image": "m", "command": "python", "compute": {"cpuCoreRequest": 1}}
    plan = plan_of("PyTorch", 3, spec=worker, same_as_worker=False, master=master)
    needs = {need.pod: need for need in gang_needs(plan)}
    assert sorted(needs) == ["train-master-0", "train-worker-0", "train-worker-1", "train-worker-2"]
    assert needs["train-master-0"] == PodNeed("train-master-0", cpu=Decimal(1))
    assert needs["train-worker-2"] == PodNeed(
        "train-worker-2", cpu=Decimal(4), memory=Decimal(8 * 2**30), gpu=GpuNeed(devices=2)
    )


def test_a_same_as_worker_master_asks_like_a_worker() -> None:
    plan = plan_of("TF", 2, spec={"compute": {"gpuDevicesRequest": 1}})
    assert [need.gpu.devices for need in gang_needs(plan)] == [1, 1, 1]


def test_jax_counts_worker_zero_once() -> None:
    plan = plan_of("JAX", 2, spec={"compute": {"gpuDevicesRequest": 1}})
    assert len(gang_needs(plan)) == 3


def test_the_gang_affinity_is_the_first_a_spec_sets() -> None:
    spec = {"podAffinity": {"type": "Required", "key": "rack"}}
    affinity = gang_affinity(plan_of("PyTorch", 2, spec=spec))
    assert affinity is not None and affinity.key == "rack"
    assert gang_affinity(plan_of("PyTorch", 2)) is None
