"""What a pod and a whole gang ask the scheduler for (scheduler/resources.py): whole GPUs,
portions, memory-typed GPU requests, CPU cores and memory quantities, arithmetic and the
shortfall messages."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from lockstep.scheduler.resources import Resources, gang_request, pod_request
from lockstep.schemas.distributed import PodSpec
from tests.unit.specs import plan_of


def pod(compute: dict[str, Any] | None) -> Resources:
    fields: dict[str, Any] = {"image": "x"}
    if compute is not None:
        fields["compute"] = compute
    return pod_request(PodSpec.model_validate_json(json.dumps(fields)))


def test_no_compute_asks_for_nothing() -> None:
    assert pod(None) == Resources()
    assert pod({}) == Resources()


@pytest.mark.parametrize(
    ("compute", "gpus"),
    [
        ({"gpuDevicesRequest": 0}, Decimal(0)),
        ({"gpuDevicesRequest": 1}, Decimal(1)),
        ({"gpuDevicesRequest": 4}, Decimal(4)),
        # a portion of one device, of each device when several are requested
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0.5}, Decimal("0.5")),
        ({"gpuPortionRequest": 0.25}, Decimal("0.25")),
        (
            {"gpuRequestType": "portion", "gpuPortionRequest": 0.5, "gpuDevicesRequest": 3},
            Decimal("1.5"),
        ),
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0.1}, Decimal("0.1")),
        # a share of a device's memory holds the device
        ({"gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"}, Decimal(1)),
        ({"gpuMemoryRequest": "4Gi"}, Decimal(1)),
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "4Gi", "gpuDevicesRequest": 1},
            Decimal(1),
        ),
    ],
)
def test_gpus(compute: dict[str, Any], gpus: Decimal) -> None:
    assert pod(compute).gpus == gpus


def test_portions_are_exact_decimals() -> None:
    """0.1 + 0.2 GPUs is 0.3, not 0.30000000000000004."""
    first = pod({"gpuPortionRequest": 0.1})
    second = pod({"gpuPortionRequest": 0.2})
    assert (first + second).gpus == Decimal("0.3")
    assert (first + second).fits_in(Resources(gpus=Decimal("0.3")))


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


def test_gang_request_adds_every_pod_with_its_own_spec() -> None:
    worker = {"compute": {"gpuDevicesRequest": 2, "cpuCoreRequest": 4, "cpuMemoryRequest": "8Gi"}}
    master = {"image": "m", "command": "python", "compute": {"cpuCoreRequest": 1}}
    plan = plan_of("PyTorch", 3, spec=worker, same_as_worker=False, master=master)
    assert gang_request(plan) == Resources(
        cpu=Decimal(3 * 4 + 1), memory=Decimal(3 * 8 * 2**30), gpus=Decimal(6)
    )


def test_gang_request_of_a_same_as_worker_master_counts_it_like_a_worker() -> None:
    plan = plan_of("TF", 2, spec={"compute": {"gpuDevicesRequest": 1}})
    assert gang_request(plan).gpus == Decimal(3)


def test_gang_request_of_jax_counts_worker_zero_once() -> None:
    plan = plan_of("JAX", 2, spec={"compute": {"gpuDevicesRequest": 1}})
    assert gang_request(plan).gpus == Decimal(3)


# --- Resources ------------------------------------------------------------------------------


def r(cpu: str = "0", memory: str = "0", gpus: str = "0") -> Resources:
    return Resources(Decimal(cpu), Decimal(memory), Decimal(gpus))


def test_arithmetic() -> None:
    assert r("1", "10", "2") + r("0.5", "5", "1") == r("1.5", "15", "3")
    assert r("1", "10", "2") - r("0.5", "5", "1") == r("0.5", "5", "1")


@pytest.mark.parametrize(
    ("wanted", "available", "fits"),
    [
        (r(), r(), True),
        (r("2", "10", "1"), r("2", "10", "1"), True),
        (r("2.1", "10", "1"), r("2", "10", "1"), False),
        (r("2", "11", "1"), r("2", "10", "1"), False),
        (r("2", "10", "1.5"), r("2", "10", "1"), False),
        (r("1", "1", "0.5"), r("2", "10", "1"), True),
    ],
)
def test_fits_in_needs_every_resource(wanted: Resources, available: Resources, fits: bool) -> None:
    assert wanted.fits_in(available) is fits


def test_shortfall_names_only_what_is_missing() -> None:
    request = r("4", "2000000", "4")
    assert request.shortfall(r("8", "1000000", "1")) == [
        "2000000 bytes of memory requested, 1000000 available",
        "4 GPUs requested, 1 available",
    ]
    assert request.shortfall(request) == []


def test_shortfall_never_reports_negative_availability() -> None:
    assert r(gpus="1").shortfall(r(gpus="-2")) == ["1 GPUs requested, 0 available"]


def test_shortfall_prints_plain_numbers() -> None:
    assert r(cpu="0.50").shortfall(r(cpu="0.25")) == ["0.5 CPU cores requested, 0.25 available"]
    assert r(memory="1E+9").shortfall(r()) == ["1000000000 bytes of memory requested, 0 available"]
