"""The cluster's nodes in lockstep's terms (runtimes/kubernetes/nodes.py): allocatable
resources, pool, readiness, and what pods placed on each hold — whole GPUs first, then KAI's
fractions, filling devices in order; ended pods hold nothing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from lockstep.runtimes.kubernetes.nodes import node_uses


def node(name: str, *, gpus: int, ready: str = "True") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"pool": "a100"}},
        "status": {
            "allocatable": {"cpu": "7800m", "memory": "30Gi", "nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def pod(
    on: str, *, phase: str = "Running", gpus: int = 0, fraction: str | None = None
) -> dict[str, Any]:
    annotations = {} if fraction is None else {"gpu-fraction": fraction}
    requests = {"cpu": "500m", "memory": "1Gi"}
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {
        "metadata": {"name": f"p-{on}", "annotations": annotations},
        "spec": {
            "nodeName": on,
            "containers": [{"resources": {"requests": requests, "limits": limits}}],
        },
        "status": {"phase": phase},
    }


def test_what_pods_hold_fills_the_devices_in_order() -> None:
    pods = [
        pod("n", fraction="0.5"),
        pod("n", gpus=1),
        pod("n", fraction="0.75"),
        pod("n", fraction="0.25"),
        pod("n", gpus=1, phase="Succeeded"),  # ended: holds nothing
    ]
    (use,) = node_uses([node("n", gpus=3)], pods, pool_label="pool")
    assert use.node.pool == "a100" and len(use.node.gpus) == 3 and use.ready
    assert use.node.cpu == Decimal("7.8") and use.memory == 4 * 2**30
    assert use.cpu == Decimal("2.0")
    assert use.gpus == {0: Decimal(1), 1: Decimal("0.75"), 2: Decimal("0.75")}


def test_a_node_without_gpus_or_not_ready() -> None:
    (use,) = node_uses([node("c", gpus=0, ready="False")], [], pool_label="missing")
    assert use.node.pool == "default" and use.node.gpus == () and not use.ready
    assert use.cpu == 0 and use.gpus == {}
