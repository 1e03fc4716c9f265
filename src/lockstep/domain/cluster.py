"""The nodes a runtime offers and where a pod was placed on them.

A node has a name, a node pool, labels, taints, CPU cores, memory, GPU devices and the most
pods it runs at once (the kubelet's `maxPods`). On the local runtime the nodes are this
machine, or virtual nodes an operator configures so that node pools, node types, tolerations
and affinity can be exercised on one machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

ONE = Decimal(1)
DEFAULT_MAX_PODS = 110
"""The kubelet's default `maxPods`: the most pods a node runs at once."""


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU device: its index as CUDA counts it, and its memory in bytes when known."""

    index: int
    memory: Decimal | None = None


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    pool: str
    cpu: Decimal
    memory: Decimal
    gpus: tuple[Gpu, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    max_pods: int = DEFAULT_MAX_PODS
    """The most pods it runs at once, whatever they ask."""

    def label(self, key: str) -> str | None:
        return self.labels.get(key)


@dataclass(frozen=True, slots=True)
class NodeUse:
    """A node and what the workloads hold of it."""

    node: Node
    cpu: Decimal
    memory: Decimal
    gpus: Mapping[int, Decimal]
    """Device index → the share of it that is held."""
    ready: bool = True


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where a pod runs: its node, its GPU devices, and the share of each device it holds
    (1 for whole devices)."""

    node: str
    gpus: tuple[int, ...] = ()
    share: Decimal = ONE

    @property
    def gpu_amount(self) -> Decimal:
        """In GPU units: 2 whole devices are 2, half of one is 0.5."""
        return self.share * len(self.gpus)

    def to_json(self) -> dict[str, object]:
        return {"node": self.node, "gpus": list(self.gpus), "share": str(self.share)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Assignment:
        gpus = data.get("gpus") or []
        assert isinstance(gpus, list)
        return cls(str(data["node"]), tuple(int(i) for i in gpus), Decimal(str(data["share"])))


def placement_to_json(placement: Mapping[str, Assignment]) -> dict[str, dict[str, object]]:
    return {pod: assignment.to_json() for pod, assignment in placement.items()}


def placement_from_json(data: Mapping[str, Mapping[str, object]]) -> dict[str, Assignment]:
    return {pod: Assignment.from_json(assignment) for pod, assignment in data.items()}
