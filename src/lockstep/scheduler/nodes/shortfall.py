"""Why a gang does not fit the nodes, in words a user reads in the phase message: what its
pods need beyond what is free in total — `needs 4 GPUs in node pool a100, 2 free` — or, when
that is there, what the roomiest node has free for the pod that found no node; and which
node accepts a pod at all. Counted in integer units (index.py, usage.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from lockstep.domain.cluster import Node
from lockstep.scheduler.gang.needs import (
    ONE,
    ZERO,
    PodNeed,
    bytes_in_words,
    count_in_words,
    number_in_words,
    pod_in_words,
)
from lockstep.scheduler.nodes.index import DEVICE_UNIT
from lockstep.scheduler.nodes.usage import Usage, ask_of

_NANO = Decimal(10**9)


@dataclass(frozen=True, slots=True)
class GangShortfall:
    """Why a gang does not fit: the message a user reads."""

    message: str


def no_node_accepts(nodes: Sequence[Node], need: PodNeed, pod: str) -> str:
    """`no node in node pool a100 accepts pod train-worker-0`, in words for a message."""
    return f"no node{need.selector.where()} accepts pod {pod}{_pools_hint(nodes, need)}"


def missing_in_total(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[Node], *, where: str
) -> list[str]:
    """What pods that go to `nodes` (each need with how many pods ask it) want beyond what the
    nodes have free in total — GPUs, CPU cores, memory, room for pods — each in words; empty
    when there is enough of everything (they may still not fit node by node)."""
    return _missing(usage, together, usage.index.positions(nodes), where=where)


def missing_or_node(
    usage: Usage, needs: Sequence[PodNeed], stuck: PodNeed, candidates: Sequence[int], line: str
) -> str:
    """Why `stuck` found no node: the gang's pods that go where it goes need more than is free
    there in total, or no single node (or device) has room for it (`line`)."""
    where = stuck.selector.where()
    together = [(need, 1) for need in needs if need.selector == stuck.selector]
    missing = _missing(usage, together, candidates, where=where)
    if missing:
        return "; ".join(missing)
    return f"pod {stuck.pod} needs {pod_in_words(stuck)} on one node{where}; " + line


def _missing(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[int], *, where: str
) -> list[str]:
    """`missing_in_total` of the nodes at positions `nodes`, counted in integer units."""
    cap = usage.index
    free = "in all" if usage.idle() else "free"
    missing = []
    gpus = _gpus_missing(usage, [(n, c) for n, c in together if n.gpu.devices], nodes)
    if gpus is not None:
        wanted, have = gpus
        missing.append(f"needs {wanted}{where}, {have} {free}")
    free_cpu = sum(usage.cpu_free[p] for p in nodes)
    if sum(ask_of(need).cpu * count for need, count in together) > free_cpu:
        wanted_cpu = sum((need.cpu * count for need, count in together), ZERO)
        have_cpu = number_in_words(Decimal(free_cpu) / _NANO)
        missing.append(f"needs {count_in_words(wanted_cpu, 'CPU core')}{where}, {have_cpu} {free}")
    free_memory = sum(usage.memory_free[p] for p in nodes)
    if sum(ask_of(need).memory * count for need, count in together) > free_memory:
        wanted_memory = sum((need.memory * count for need, count in together), ZERO)
        missing.append(
            f"needs {bytes_in_words(wanted_memory)} of memory{where}, "
            f"{bytes_in_words(Decimal(free_memory))} {free}"
        )
    room = sum(max(usage.pods_free[p], 0) for p in nodes)
    pods = sum(count for _, count in together)
    if pods > room:
        most = max((cap.max_pods[p] for p in nodes), default=0)
        missing.append(
            f"needs room for {count_in_words(Decimal(pods), 'pod')}{where}, {room} {free} "
            f"(a node runs at most {most} pods at once)"
        )
    return missing


def _slots(usage: Usage, nodes: Sequence[int]) -> list[int]:
    first = usage.index.device_first
    return [s for p in nodes for s in range(first[p], first[p + 1])]


def _gpus_missing(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[int]
) -> tuple[str, str] | None:
    """What the pods of `together` (each need with its count) want of GPUs and what `nodes`
    have free, in words — in devices when they all want whole ones, in memory when they all
    want memory, else in GPU units — or None when there is enough in total."""
    if not together:
        return None
    cap = usage.index
    if all(need.gpu.whole for need, _ in together):
        wanted = sum(need.gpu.devices * count for need, count in together)
        idle = sum(usage.idle_devices[p] for p in nodes)
        if wanted <= idle:
            return None
        return count_in_words(Decimal(wanted), "GPU"), number_in_words(Decimal(idle))
    slots = _slots(usage, nodes)
    memories = cap.device_memory
    if all(need.gpu.memory is not None for need, _ in together):
        if not any(memories[s] for s in slots):
            return None  # the pod's own message says the memory is not known
        wanted_bytes = sum(
            (need.gpu.devices * count * (need.gpu.memory or ZERO) for need, count in together),
            ZERO,
        )
        free_units = sum(
            cap.device_capacity[s] - usage.device_used[s] for s in slots if memories[s]
        )
        have = Decimal(free_units) / DEVICE_UNIT
        if wanted_bytes <= have:
            return None
        return f"{bytes_in_words(wanted_bytes)} of GPU memory", bytes_in_words(have)
    share = next((memories[s] for s in slots if memories[s]), None)
    wanted_gpus = ZERO
    for need, count in together:
        each = need.gpu.share_of(share)
        wanted_gpus += need.gpu.devices * count * (each if each is not None else ONE)
    have_gpus = sum((usage.slot_share(s) for s in slots), ZERO)
    if wanted_gpus <= have_gpus:
        return None
    return count_in_words(wanted_gpus, "GPU"), number_in_words(have_gpus)


def best_node(usage: Usage, need: PodNeed, nodes: Sequence[int]) -> str:
    """What the roomiest accepting node has free, in the terms the pod asks for (among the
    nodes that may run another pod)."""
    open_nodes = [p for p in nodes if usage.pods_free[p] > 0]
    if not open_nodes:
        return "every node it accepts runs as many pods as it may (max pods)"
    return _roomiest(usage, need, open_nodes) + (
        "" if len(open_nodes) == len(nodes) else " with room for another pod"
    )


def _roomiest(usage: Usage, need: PodNeed, nodes: Sequence[int]) -> str:
    cap = usage.index
    if need.gpu.devices and not need.gpu.whole:
        slots = _slots(usage, nodes)
        if all(need.gpu.share_of(cap.device_memory[s]) is None for s in slots):
            return "the memory of these GPUs is not known (set gpu_memory for their nodes)"
        if need.gpu.memory is not None:
            room = max(
                (
                    cap.device_capacity[s] - usage.device_used[s]
                    for s in slots
                    if cap.device_memory[s]
                ),
                default=0,
            )
            most_bytes = bytes_in_words(Decimal(room) / DEVICE_UNIT)
            return f"at most {most_bytes} of GPU memory free on any device"
        most = max((usage.slot_share(s) for s in slots), default=ZERO)
        return f"at most {number_in_words(most)} of a GPU free on any device"
    if need.gpu.devices:
        idle = max((usage.idle_devices[p] for p in nodes), default=0)
        return f"at most {count_in_words(Decimal(idle), 'idle GPU')} on any node"
    cpu = max((usage.cpu_free[p] for p in nodes), default=0)
    memory = max((usage.memory_free[p] for p in nodes), default=0)
    return (
        f"at most {count_in_words(Decimal(cpu) / _NANO, 'CPU core')} and "
        f"{bytes_in_words(Decimal(memory))} of memory free on any node"
    )


def _pools_hint(nodes: Sequence[Node], need: PodNeed) -> str:
    pools = sorted({node.pool for node in nodes})
    return f" (the nodes are in node pools {', '.join(pools)})" if need.selector.pools else ""
