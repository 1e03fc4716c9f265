"""The local runtime's nodes (runtimes/local/machine.py and devices.py): this machine as one
node by default, capacities overridden, virtual nodes numbering their GPUs in order, and what a
pod is told of the GPUs it was given."""

from __future__ import annotations

import os
import socket
from decimal import Decimal

import pytest
from pydantic import ValidationError

from lockstep.config import NodeSettings, Settings
from lockstep.domain.cluster import Assignment, Gpu, Taint
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.devices import gpu_environment

GI = Decimal(2**30)


def test_by_default_one_node_is_this_machine() -> None:
    (node,) = machine.nodes(gpus=[])
    assert node.name == socket.gethostname()
    assert node.pool == "default"
    assert node.cpu == Decimal(os.cpu_count() or 1)
    assert node.memory == machine.memory_bytes() > 0
    assert node.gpus == ()


def test_detected_gpus_and_their_memory() -> None:
    (node,) = machine.nodes(gpus=[80 * GI, 80 * GI])
    assert node.gpus == (Gpu(0, 80 * GI), Gpu(1, 80 * GI))


def test_capacities_can_be_overridden() -> None:
    settings = [NodeSettings(cpu_cores=4.5, memory="8Gi", gpus=1, gpu_memory="24Gi")]
    (node,) = machine.nodes(settings, gpus=[80 * GI, 80 * GI])
    assert (node.cpu, node.memory) == (Decimal("4.5"), 8 * GI)
    assert node.gpus == (Gpu(0, 24 * GI),)


def test_virtual_nodes_number_their_gpus_across_nodes() -> None:
    settings = [
        NodeSettings(name="a", pool="a100", gpus=2, labels={"rack": "1"}),
        NodeSettings(name="b", pool="v100", gpus=3, taints=[{"key": "x", "value": "y"}]),
        NodeSettings(pool="cpu", gpus=0),
    ]
    a, b, c = machine.nodes(settings, gpus=[16 * GI])
    assert [g.index for g in a.gpus] == [0, 1]
    assert [g.index for g in b.gpus] == [2, 3, 4]
    assert a.gpus[0].memory == 16 * GI and a.gpus[1].memory is None  # only one real GPU
    assert a.labels == {"rack": "1"}
    assert b.taints == (Taint("x", "y", "NoSchedule"),)
    assert (c.name, c.pool, c.gpus) == ("node-2", "cpu", ())


def test_nodes_are_read_from_the_environment_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCKSTEP_NODES", '[{"name": "a", "pool": "a100", "gpus": 4}]')
    assert Settings().nodes == [NodeSettings(name="a", pool="a100", gpus=4)]


def test_a_node_runs_110_pods_at_once_unless_max_pods_says_otherwise() -> None:
    default, capped = machine.nodes([NodeSettings(), NodeSettings(max_pods=2)], gpus=[])
    assert (default.max_pods, capped.max_pods) == (110, 2)


@pytest.mark.parametrize(
    "fields",
    [
        {"memory": "lots"},
        {"gpu_memory": "16 GB"},
        {"gpus": -1},
        {"gpus": 1025},
        {"max_pods": -1},
        {"max_pods": 10_001},
        {"max_pods": "many"},
        {"cpu_cores": 0},
        {"taints": [{"key": "x", "effect": "Sometimes"}]},
        {"colour": "red"},
    ],
)
def test_bad_node_settings_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        NodeSettings.model_validate(fields)


def test_the_environment_of_whole_devices_a_share_and_none() -> None:
    assert gpu_environment(Assignment("a", (2, 3))) == {
        "CUDA_VISIBLE_DEVICES": "2,3",
        "NVIDIA_VISIBLE_DEVICES": "2,3",
        "RUNAI_NUM_OF_GPUS": "2",
        "NODE_NAME": "a",
    }
    shared = gpu_environment(Assignment("a", (1,), Decimal("0.25")))
    assert (shared["CUDA_VISIBLE_DEVICES"], shared["RUNAI_NUM_OF_GPUS"]) == ("1", "0.25")
    assert gpu_environment(Assignment("b")) == {
        "CUDA_VISIBLE_DEVICES": "",
        "NVIDIA_VISIBLE_DEVICES": "void",
        "RUNAI_NUM_OF_GPUS": "0",
        "NODE_NAME": "b",
    }
