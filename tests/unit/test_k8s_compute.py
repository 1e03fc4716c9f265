"""A pod spec's `compute` on Kubernetes (runtimes/kubernetes/compute.py): CPU and memory
requests and limits, whole GPUs as nvidia.com/gpu, fractions as KAI's gpu-fraction and
gpu-memory annotations (refused under another scheduler), extended resources, and the memory
/dev/shm of largeShmRequest."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.compute import (
    cpu_quantity,
    gpu_memory_mib,
    pod_compute,
)
from lockstep.runtimes.kubernetes.settings import SchedulerKind
from lockstep.schemas.compute import Compute
from tests.unit.k8s import container, pod_spec, rendered, template


def compute_of(fields: dict[str, Any]) -> Compute:
    return Compute.model_validate_json(json.dumps(fields))


@pytest.mark.parametrize(
    ("cores", "quantity"),
    [(2, "2"), (0.5, "500m"), (1.25, "1250m"), (0.1, "100m"), (0.0005, "1m"), (0, "0")],
)
def test_cpu_quantity(cores: float, quantity: str) -> None:
    assert cpu_quantity(cores) == quantity


@pytest.mark.parametrize(
    ("memory", "mib"), [("10M", 10), ("2000Mi", 2000), ("1Gi", 1024), ("1G", 954), ("1", 1)]
)
def test_gpu_memory_in_mib_rounded_up(memory: str, mib: int) -> None:
    assert gpu_memory_mib(memory) == mib


@pytest.mark.parametrize(
    ("fields", "resources", "annotations"),
    [
        (
            {"cpuCoreRequest": 0.5, "cpuCoreLimit": 2, "cpuMemoryRequest": "1Gi"},
            {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2"}},
            {},
        ),
        ({"cpuMemoryLimit": "30M"}, {"limits": {"memory": "30M"}}, {}),
        ({"gpuDevicesRequest": 4}, {"limits": {"nvidia.com/gpu": "4"}}, {}),
        ({"gpuDevicesRequest": 0}, {}, {}),
        (
            {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5},
            {},
            {"gpu-fraction": "0.5"},
        ),
        (
            {"gpuDevicesRequest": 2, "gpuRequestType": "portion", "gpuPortionRequest": 0.25},
            {},
            {"gpu-fraction": "0.25", "gpu-fraction-num-devices": "2"},
        ),
        ({"gpuPortionRequest": 1.0}, {}, {"gpu-fraction": "1"}),
        (
            {"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "2000Mi"},
            {},
            {"gpu-memory": "2000"},
        ),
        (
            # the documentation's example: the request type decides which fields count
            {
                "gpuDevicesRequest": 1,
                "gpuRequestType": "portion",
                "gpuPortionRequest": 0.5,
                "gpuMemoryRequest": "10M",
            },
            {},
            {"gpu-fraction": "0.5"},
        ),
        (
            {
                "extendedResources": [
                    {"resource": "hardware-vendor.example/foo", "quantity": "2"},
                    {"resource": "rdma/ib", "quantity": "1", "exclude": True},
                ]
            },
            {"limits": {"hardware-vendor.example/foo": "2"}},
            {},
        ),
    ],
)
def test_compute(
    fields: dict[str, Any], resources: dict[str, Any], annotations: dict[str, str]
) -> None:
    result = pod_compute(compute_of(fields), SchedulerKind.KAI)
    assert result.resources == resources
    assert result.annotations == annotations
    assert result.volumes == ()


@pytest.mark.parametrize("scheduler", [SchedulerKind.VOLCANO, SchedulerKind.DEFAULT])
@pytest.mark.parametrize(
    "fields",
    [
        {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5},
        {"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"},
    ],
)
def test_fractions_need_kai(fields: dict[str, Any], scheduler: SchedulerKind) -> None:
    with pytest.raises(PodStartError, match="KAI Scheduler's GPU sharing"):
        pod_compute(compute_of(fields), scheduler)


@pytest.mark.parametrize("scheduler", list(SchedulerKind))
def test_whole_gpus_under_every_scheduler(scheduler: SchedulerKind) -> None:
    result = pod_compute(compute_of({"gpuDevicesRequest": 2}), scheduler)
    assert result.resources == {"limits": {"nvidia.com/gpu": "2"}}


def test_large_shm_is_a_memory_empty_dir_at_dev_shm() -> None:
    manifests = rendered({"compute": {"largeShmRequest": True}})
    assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod_spec(manifests)["volumes"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container(manifests)["volumeMounts"]


def test_gpu_annotations_land_on_the_pod_template_beside_the_users() -> None:
    manifests = rendered(
        {
            "annotations": [{"name": "billing", "value": "x"}],
            "compute": {"gpuRequestType": "portion", "gpuPortionRequest": 0.5},
        }
    )
    annotations = template(manifests)["metadata"]["annotations"]
    assert annotations == {"billing": "x", "gpu-fraction": "0.5"}
    assert "resources" not in container(manifests)
