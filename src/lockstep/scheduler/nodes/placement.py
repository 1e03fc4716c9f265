"""Placing a gang: every pod on a node that accepts it and has room, GPUs device by device.

Whole GPUs take devices nobody uses; a fraction (a portion of a device, or an amount of its
memory) shares a device with other fractions without the shares ever adding up to more than
the device. Fractions are packed onto the fullest device they fit on, so whole devices stay
free for those who need them. A node runs at most its `max_pods` pods, whatever they ask (the
kubelet's cap), so pods are counted per node too. Pods go to the first node (in their node
pools' order of preference) with room: nodes fill up in order, which keeps free capacity
together.

When a gang does not fit, `GangShortfall.message` says what is missing where, in words a user
reads in the phase message: `needs 4 GPUs in node pool a100, 2 free`.

What is taken is counted in integer units and indexed (usage.py, capacity.py): finding a node
for a pod costs about the logarithm of the number of nodes, and a gang that does not fit is
given back pod by pod rather than tried on a copy of every node.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from lockstep.domain.cluster import Assignment, Node
from lockstep.scheduler.gang.needs import (
    ONE,
    ZERO,
    GangPlacement,
    GpuNeed,
    PodNeed,
    bytes_in_words,
    count_in_words,
    number_in_words,
    pod_in_words,
    size_of,
)
from lockstep.scheduler.nodes.index import DEVICE_UNIT, affinity_key
from lockstep.scheduler.nodes.usage import Ask, Spot, Usage, ask_of
from lockstep.schemas.pod import PodAffinity, PodAffinityType

__all__ = [
    "ONE",
    "ZERO",
    "GangPlacement",
    "GangShortfall",
    "GpuNeed",
    "PodNeed",
    "Usage",
    "grow",
    "missing_in_total",
    "no_node_accepts",
    "place",
    "pod_in_words",
    "size_of",
    "topology_groups",
    "total_gpus",
]

_NANO = Decimal(10**9)


@dataclass(frozen=True, slots=True)
class GangShortfall:
    """Why a gang does not fit: the message a user reads."""

    message: str


def place(
    usage: Usage, needs: Sequence[PodNeed], *, affinity: PodAffinity | None = None
) -> GangPlacement | GangShortfall:
    """Every pod of the gang placed (and counted in `usage`), or why it cannot be; `usage` is
    left as it was then. A Required pod affinity keeps the gang on nodes that share the value
    of its topology key; a Preferred one tries that first."""
    groups = usage.capacity.topology_groups(affinity)
    if not groups:
        key = affinity.key if affinity is not None else ""
        return GangShortfall(f"no node has the label {key} that the pod affinity requires")
    # The largest pods first: they are the hardest to fit.
    ordered = sorted(needs, key=size_of, reverse=True)
    shortfall = GangShortfall("")
    for group in groups:
        placed = _place_on(usage, ordered, needs, group, explain=True)
        if isinstance(placed, GangShortfall):
            shortfall = placed
            continue
        return placed
    if affinity is not None and _is_required(affinity) and len(groups) > 1:
        return GangShortfall(
            f"no nodes sharing one value of {affinity.key} have room for every pod; "
            f"on the last tried: {shortfall.message}"
        )
    return shortfall


def grow(
    usage: Usage,
    placed: GangPlacement,
    rest: Sequence[PodNeed],
    *,
    affinity: PodAffinity | None = None,
) -> GangPlacement:
    """Place what fits of `rest`, in order, next to the gang already `placed` (on nodes that
    share its topology value when a Required pod affinity asks so); stops at the first that
    does not fit. Returns the new assignments, counted in `usage`."""
    cap = usage.capacity
    group: frozenset[int] | None = None
    key = affinity_key(affinity)
    if key is not None and key[1] and placed:
        anchor = cap.position.get(next(iter(placed.values())).node)
        value = cap.nodes[anchor].label(key[0]) if anchor is not None else None
        known = [g for g in cap.topology_groups(affinity) if g is not None and anchor in g]
        if value is not None and known:
            group = known[0]
        else:  # nodes without the label, as the anchor is (or as a node that is gone)
            group = frozenset(p for p, node in enumerate(cap.nodes) if node.label(key[0]) is None)
    added: GangPlacement = {}
    for need in rest:
        result = _place_on(usage, [need], [need], group, explain=False)
        if isinstance(result, GangShortfall):
            break
        added.update(result)
    return added


def _place_on(
    usage: Usage,
    ordered: Sequence[PodNeed],
    needs: Sequence[PodNeed],
    group: frozenset[int] | None,
    *,
    explain: bool,
) -> GangPlacement | GangShortfall:
    """The pods of `ordered` placed one by one on the first node with room (counted in
    `usage`), or, when one finds none, nothing taken and why (when `explain`)."""
    cap = usage.capacity
    placed: GangPlacement = {}
    taken: list[tuple[Ask, Spot]] = []
    for need in ordered:
        view = cap.view(need.selector, group)
        ask = ask_of(need)
        spot = usage.find(ask, view)
        if spot is not None:
            placed[need.pod] = usage.take_spot(ask, spot)
            taken.append((ask, spot))
            continue
        # What the roomiest node has free is told with the gang's earlier pods counted; what
        # the gang needs in total, against what was free before it.
        line = _best_node(usage, need, view.accepted) if explain and view.accepted else ""
        for earlier, where in reversed(taken):
            usage.untake(earlier, where)
        if not explain:
            return GangShortfall("")
        if not view.accepted:
            return GangShortfall(no_node_accepts(usage.nodes, need, need.pod))
        return GangShortfall(_missing_or_node(usage, needs, need, view.accepted, line))
    return placed


def _missing_or_node(
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


def topology_groups(nodes: Sequence[Node], affinity: PodAffinity | None) -> list[list[Node]]:
    """The sets of nodes to try the gang on, in order (none: a required key no node has)."""
    if affinity is None or not affinity.key:
        return [list(nodes)]
    groups: dict[str, list[Node]] = {}
    for node in nodes:
        value = node.label(affinity.key)
        if value is not None:
            groups.setdefault(value, []).append(node)
    ordered = list(groups.values())
    if not _is_required(affinity):
        ordered.append(list(nodes))
    return ordered


def _is_required(affinity: PodAffinity) -> bool:
    return affinity.type is not PodAffinityType.PREFERRED


def no_node_accepts(nodes: Sequence[Node], need: PodNeed, pod: str) -> str:
    """`no node in node pool a100 accepts pod train-worker-0`, in words for a message."""
    return f"no node{need.selector.where()} accepts pod {pod}{_pools_hint(nodes, need)}"


def missing_in_total(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[Node], *, where: str
) -> list[str]:
    """What pods that go to `nodes` (each need with how many pods ask it) want beyond what the
    nodes have free in total — GPUs, CPU cores, memory, room for pods — each in words; empty
    when there is enough of everything (they may still not fit node by node)."""
    return _missing(usage, together, usage.capacity.positions(nodes), where=where)


def _missing(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[int], *, where: str
) -> list[str]:
    """`missing_in_total` of the nodes at positions `nodes`, counted in integer units."""
    cap = usage.capacity
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
    first = usage.capacity.device_first
    return [s for p in nodes for s in range(first[p], first[p + 1])]


def _gpus_missing(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[int]
) -> tuple[str, str] | None:
    """What the pods of `together` (each need with its count) want of GPUs and what `nodes`
    have free, in words — in devices when they all want whole ones, in memory when they all
    want memory, else in GPU units — or None when there is enough in total."""
    if not together:
        return None
    cap = usage.capacity
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


def _best_node(usage: Usage, need: PodNeed, nodes: Sequence[int]) -> str:
    """What the roomiest accepting node has free, in the terms the pod asks for (among the
    nodes that may run another pod)."""
    open_nodes = [p for p in nodes if usage.pods_free[p] > 0]
    if not open_nodes:
        return "every node it accepts runs as many pods as it may (max pods)"
    return _roomiest(usage, need, open_nodes) + (
        "" if len(open_nodes) == len(nodes) else " with room for another pod"
    )


def _roomiest(usage: Usage, need: PodNeed, nodes: Sequence[int]) -> str:
    cap = usage.capacity
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


def total_gpus(assignments: Iterable[Assignment]) -> Decimal:
    return sum((a.gpu_amount for a in assignments), ZERO)
