"""The cluster's nodes as lockstep shows them (`GET /api/v1/clusters/{clusterUuid}/nodes`):
each Node object's pool (the node-pool label), labels, taints and allocatable CPU, memory
and GPUs, and what lockstep's pods on it request.

Which device a pod was given is the device plugin's business, not visible in the API: the
GPUs a node's pods hold (whole devices, then KAI's fractions) are shown filling its devices
in order. `node_uses` is pure; `ClusterNodes` reads the nodes and pods for the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from lockstep.domain.cluster import ONE, Gpu, Node, NodeUse, Taint
from lockstep.domain.quantities import parse_quantity
from lockstep.runtimes.kubernetes.cluster import Cluster, Manifest
from lockstep.runtimes.kubernetes.compute import GPU_FRACTION, GPU_FRACTION_DEVICES, GPU_RESOURCE
from lockstep.runtimes.kubernetes.identity import MANAGED_BY, MANAGER

HOLDING_PHASES = frozenset({"Pending", "Running"})
"""A pod in these phases holds what it requested on its node."""
ZERO = Decimal(0)


def node_of(item: Manifest, *, pool_label: str) -> Node:
    """A Node object as lockstep's node: its allocatable resources, pool, labels, taints."""
    metadata = item.get("metadata") or {}
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    allocatable = (item.get("status") or {}).get("allocatable") or {}
    gpus = int(_quantity(allocatable.get(GPU_RESOURCE)))
    return Node(
        name=str(metadata.get("name", "")),
        pool=labels.get(pool_label, "default"),
        cpu=_quantity(allocatable.get("cpu")),
        memory=_quantity(allocatable.get("memory")),
        gpus=tuple(Gpu(index) for index in range(gpus)),
        labels=labels,
        taints=tuple(
            Taint(key=str(t.get("key", "")), value=str(t.get("value") or ""), effect=t["effect"])
            for t in (item.get("spec") or {}).get("taints") or []
            if t.get("effect")
        ),
    )


def node_uses(
    nodes: Iterable[Manifest], pods: Iterable[Manifest], *, pool_label: str
) -> list[NodeUse]:
    """Every node with what the pods placed on it and not ended request of it."""
    held: dict[str, list[Manifest]] = {}
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name and (pod.get("status") or {}).get("phase") in HOLDING_PHASES:
            held.setdefault(str(node_name), []).append(pod)
    uses = []
    for item in nodes:
        node = node_of(item, pool_label=pool_label)
        on_it = held.get(node.name, [])
        uses.append(
            NodeUse(
                node,
                cpu=sum((_requested(pod, "cpu") for pod in on_it), ZERO),
                memory=sum((_requested(pod, "memory") for pod in on_it), ZERO),
                gpus=_fill(node, on_it),
                ready=_ready(item),
            )
        )
    return uses


class ClusterNodes:
    """The nodes of the cluster and what lockstep's pods hold of them, read when asked."""

    def __init__(self, cluster: Cluster, *, pool_label: str) -> None:
        self._cluster = cluster
        self._pool_label = pool_label

    def __call__(self) -> list[NodeUse]:
        pods, _ = self._cluster.list("v1", "Pod", None, labels={MANAGED_BY: MANAGER})
        return node_uses(self._cluster.nodes(), pods, pool_label=self._pool_label)


def _fill(node: Node, pods: list[Manifest]) -> dict[int, Decimal]:
    """The devices' shares held: whole devices first, then fractions, each in device order."""
    shares = {gpu.index: ZERO for gpu in node.gpus}
    whole: list[Decimal] = []
    fractions: list[Decimal] = []
    for pod in pods:
        whole += [ONE] * int(_requested(pod, GPU_RESOURCE))
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        if GPU_FRACTION in annotations:
            devices = int(annotations.get(GPU_FRACTION_DEVICES, 1))
            fractions += [Decimal(str(annotations[GPU_FRACTION]))] * devices
    for share in whole + fractions:
        for index, taken in shares.items():
            if taken + share <= ONE:
                shares[index] = taken + share
                break
    return shares


def _requested(pod: Manifest, resource: str) -> Decimal:
    total = ZERO
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources: dict[str, Any] = container.get("resources") or {}
        amount = (resources.get("requests") or {}).get(resource) or (
            resources.get("limits") or {}
        ).get(resource)
        total += _quantity(amount)
    return total


def _ready(item: Manifest) -> bool:
    conditions = (item.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _quantity(value: object) -> Decimal:
    return ZERO if value in (None, "") else parse_quantity(str(value))
