"""What workloads hold and ask, counted per node pool in the scheduler's units (GPUs in
devices, CPU in millicores, memory in bytes), and what each pool offers.

A placed pod counts in the pool of its node. A pending gang is counted, before it is placed,
in its home pool: the first of its leader's preferred node pools that exists, else the first
pool of the cluster's nodes (pods go to the first node with room, in order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lockstep.domain.cluster import Assignment, Node
from lockstep.scheduler.gang.needs import PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.quota.amounts import Amounts, zero

MILLI = 1000.0


def capacity(nodes: Sequence[Node]) -> dict[str, Amounts]:
    """Pool → what its nodes have in all."""
    pools: dict[str, Amounts] = {}
    for node in nodes:
        amounts = pools.setdefault(node.pool, zero())
        amounts[0] += len(node.gpus)
        amounts[1] += float(node.cpu) * MILLI
        amounts[2] += float(node.memory)
    return pools


def placed_amounts(
    needs: Sequence[PodNeed], placement: Mapping[str, Assignment], pool_of: Mapping[str, str]
) -> dict[str, Amounts]:
    """Pool → what the placed pods of `needs` hold there (pods on unknown nodes: nothing)."""
    held: dict[str, Amounts] = {}
    for need in needs:
        assignment = placement.get(need.pod)
        if assignment is None:
            continue
        pool = pool_of.get(assignment.node)
        if pool is None:
            continue
        amounts = held.setdefault(pool, zero())
        amounts[0] += float(assignment.gpu_amount)
        amounts[1] += float(need.cpu) * MILLI
        amounts[2] += float(need.memory)
    return held


def asked(shape: GangShape) -> Amounts:
    """What the gang's pods ask in all (a GPU asked by memory counts as a whole device until
    placement says what share of one it is)."""
    amounts = zero()
    for group in shape.groups:
        need, count = group.need, group.count
        gpu = need.gpu
        share = float(gpu.portion) if gpu.memory is None else 1.0
        amounts[0] += gpu.devices * min(share, 1.0) * count
        amounts[1] += float(need.cpu) * MILLI * count
        amounts[2] += float(need.memory) * count
    return amounts


def home_pool(shape: GangShape, pools: Sequence[str]) -> str:
    """The pool a pending gang is counted in before it is placed."""
    fallback = pools[0] if pools else "default"
    if not shape.groups:
        return fallback
    return next((p for p in shape.groups[0].need.selector.pools if p in pools), fallback)
