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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from lockstep.domain.cluster import Assignment, Node
from lockstep.domain.quantities import binary_quantity
from lockstep.scheduler.selectors import Selector
from lockstep.schemas.pod import PodAffinity, PodAffinityType

ZERO = Decimal(0)
ONE = Decimal(1)


@dataclass(frozen=True, slots=True)
class GpuNeed:
    """What a pod asks of GPUs: `devices` devices, each whole, or a `portion` of each, or
    `memory` bytes of each."""

    devices: int = 0
    portion: Decimal = ONE
    memory: Decimal | None = None

    @property
    def whole(self) -> bool:
        return self.memory is None and self.portion >= ONE

    def share_of(self, gpu_memory: Decimal | None) -> Decimal | None:
        """The share of one device it takes (None: its memory is not known)."""
        if self.memory is None:
            return min(self.portion, ONE)
        if not gpu_memory:
            return None
        return min(self.memory / gpu_memory, ONE)

    def in_words(self) -> str:
        if self.memory is not None:
            each = _bytes(self.memory)
            return f"{each} of GPU memory" + (
                f" on each of {self.devices} GPUs" if self.devices > 1 else ""
            )
        if self.whole:
            return _count(Decimal(self.devices), "GPU")
        share = _number(self.portion)
        return f"{share} of a GPU" + (
            f" on each of {self.devices} GPUs" if self.devices > 1 else ""
        )


@dataclass(frozen=True, slots=True)
class PodNeed:
    """What one pod needs of a node, and which nodes it accepts."""

    pod: str
    cpu: Decimal = ZERO
    memory: Decimal = ZERO
    gpu: GpuNeed = field(default_factory=GpuNeed)
    selector: Selector = field(default_factory=Selector)


GangPlacement = dict[str, Assignment]
"""Pod name → assignment, for every pod of a gang."""


@dataclass(slots=True)
class _NodeUse:
    cpu: Decimal = ZERO
    memory: Decimal = ZERO
    gpus: dict[int, Decimal] = field(default_factory=dict)
    pods: int = 0


class Usage:
    """What is taken on each node: CPU, memory, each GPU device's share, and how many pods."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = list(nodes)
        self._by_name = {node.name: node for node in self.nodes}
        self._use = {node.name: _NodeUse() for node in self.nodes}

    def copy(self) -> Usage:
        other = Usage(self.nodes)
        for name, use in self._use.items():
            other._use[name] = _NodeUse(use.cpu, use.memory, dict(use.gpus), use.pods)
        return other

    def hold(self, needs: Sequence[PodNeed], placement: Mapping[str, Assignment]) -> None:
        """Count what a placed gang holds (its pods without an assignment hold nothing)."""
        for need in needs:
            assignment = placement.get(need.pod)
            if assignment is not None:
                self.add(need, assignment)

    def release(self, needs: Sequence[PodNeed], placement: Mapping[str, Assignment]) -> None:
        """Give back what `hold` counted."""
        for need in needs:
            assignment = placement.get(need.pod)
            if assignment is not None:
                self.remove(need, assignment)

    def add(self, need: PodNeed, assignment: Assignment) -> None:
        """Count a placed pod (one on a node that no longer exists is not counted)."""
        use = self._use.get(assignment.node)
        if use is None:
            return
        use.cpu += need.cpu
        use.memory += need.memory
        use.pods += 1
        for index in assignment.gpus:
            use.gpus[index] = use.gpus.get(index, ZERO) + assignment.share

    def remove(self, need: PodNeed, assignment: Assignment) -> None:
        """Give back what `add` counted."""
        use = self._use.get(assignment.node)
        if use is None:
            return
        use.cpu -= need.cpu
        use.memory -= need.memory
        use.pods -= 1
        for index in assignment.gpus:
            use.gpus[index] = use.gpus.get(index, ZERO) - assignment.share

    def idle(self) -> bool:
        """Nothing is taken anywhere."""
        return all(
            not use.pods and not use.cpu and not use.memory and not any(use.gpus.values())
            for use in self._use.values()
        )

    def free_cpu(self, node: Node) -> Decimal:
        return node.cpu - self._use[node.name].cpu

    def free_memory(self, node: Node) -> Decimal:
        return node.memory - self._use[node.name].memory

    def free_pods(self, node: Node) -> int:
        """How many more pods it may run (its max_pods less those it runs)."""
        return node.max_pods - self._use[node.name].pods

    def free_share(self, node: Node, index: int) -> Decimal:
        return ONE - self._use[node.name].gpus.get(index, ZERO)

    def free_gpus(self, node: Node) -> Decimal:
        return sum((self.free_share(node, gpu.index) for gpu in node.gpus), ZERO)

    def take(self, need: PodNeed, node: Node) -> Assignment | None:
        """Place `need` on `node` if it has room, counting it; None when it has not."""
        if self.free_pods(node) <= 0:
            return None
        if need.cpu > self.free_cpu(node) or need.memory > self.free_memory(node):
            return None
        gpus, share = self._devices(need.gpu, node)
        if gpus is None:
            return None
        assignment = Assignment(node.name, gpus, share)
        self.add(need, assignment)
        return assignment

    def _devices(self, need: GpuNeed, node: Node) -> tuple[tuple[int, ...] | None, Decimal]:
        if need.devices == 0:
            return (), ONE
        if need.whole:
            idle = [g.index for g in node.gpus if self.free_share(node, g.index) == ONE]
            return (tuple(idle[: need.devices]) if len(idle) >= need.devices else None), ONE
        fitting: list[tuple[Decimal, int]] = []
        share = ONE
        for gpu in node.gpus:
            wanted = need.share_of(gpu.memory)
            if wanted is None:
                continue
            share = wanted
            free = self.free_share(node, gpu.index)
            if wanted <= free:
                fitting.append((free, gpu.index))
        if len(fitting) < need.devices:
            return None, share
        fitting.sort()  # the fullest devices first: fractions pack together
        return tuple(sorted(index for _, index in fitting[: need.devices])), share


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
    groups = topology_groups(usage.nodes, affinity)
    if not groups:
        key = affinity.key if affinity is not None else ""
        return GangShortfall(f"no node has the label {key} that the pod affinity requires")
    shortfall = GangShortfall("")
    for nodes in groups:
        placed = _place_on(usage.copy(), needs, nodes)
        if isinstance(placed, GangShortfall):
            shortfall = placed
            continue
        usage.hold(needs, placed)
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
    nodes = usage.nodes
    if affinity is not None and affinity.key and _is_required(affinity) and placed:
        by_name = {node.name: node for node in nodes}
        anchor = by_name.get(next(iter(placed.values())).node)
        value = anchor.label(affinity.key) if anchor is not None else None
        nodes = [node for node in nodes if node.label(affinity.key) == value]
    added: GangPlacement = {}
    for need in rest:
        result = _place_on(usage, [need], nodes)
        if isinstance(result, GangShortfall):
            break
        added.update(result)
    return added


def _place_on(
    usage: Usage, needs: Sequence[PodNeed], nodes: Sequence[Node]
) -> GangPlacement | GangShortfall:
    names = {node.name for node in nodes}
    placed: GangPlacement = {}
    # The largest pods first: they are the hardest to fit.
    for need in sorted(needs, key=size_of, reverse=True):
        candidates = [node for node in need.selector.nodes(usage.nodes) if node.name in names]
        for node in candidates:
            assignment = usage.take(need, node)
            if assignment is not None:
                placed[need.pod] = assignment
                break
        else:
            return _shortfall(usage, needs, need, candidates, placed)
    return placed


def size_of(need: PodNeed) -> tuple[Decimal, Decimal, Decimal]:
    """How large a pod is, to place the largest first: its GPUs, then CPU, then memory."""
    gpus = Decimal(need.gpu.devices) * (need.gpu.portion if need.gpu.memory is None else ONE)
    return gpus, need.cpu, need.memory


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


def _shortfall(
    usage: Usage,
    needs: Sequence[PodNeed],
    stuck: PodNeed,
    candidates: Sequence[Node],
    placed: GangPlacement,
) -> GangShortfall:
    """Why `stuck` found no node: no node accepts it, or the gang's pods that go where it goes
    need more than is free there in total, or no single node (or device) has room for it."""
    where = stuck.selector.where()
    if not candidates:
        return GangShortfall(no_node_accepts(usage.nodes, stuck, stuck.pod))
    # `usage` already counts the pods placed before `stuck`: take them out to compare the
    # gang's whole need with what was free before it.
    before = usage.copy()
    before.release(needs, placed)
    together = [(need, 1) for need in needs if need.selector == stuck.selector]
    missing = missing_in_total(before, together, candidates, where=where)
    if missing:
        return GangShortfall("; ".join(missing))
    return GangShortfall(
        f"pod {stuck.pod} needs {pod_in_words(stuck)} on one node{where}; "
        + _best_node(usage, stuck, candidates)
    )


def no_node_accepts(nodes: Sequence[Node], need: PodNeed, pod: str) -> str:
    """`no node in node pool a100 accepts pod train-worker-0`, in words for a message."""
    return f"no node{need.selector.where()} accepts pod {pod}{_pools_hint(nodes, need)}"


def missing_in_total(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[Node], *, where: str
) -> list[str]:
    """What pods that go to `nodes` (each need with how many pods ask it) want beyond what the
    nodes have free in total — GPUs, CPU cores, memory, room for pods — each in words; empty
    when there is enough of everything (they may still not fit node by node)."""
    free = "in all" if usage.idle() else "free"
    missing = []
    gpus = _gpus_missing(usage, [(n, c) for n, c in together if n.gpu.devices], nodes)
    if gpus is not None:
        wanted, have = gpus
        missing.append(f"needs {wanted}{where}, {have} {free}")
    free_cpu = sum((usage.free_cpu(n) for n in nodes), ZERO)
    wanted_cpu = sum((need.cpu * count for need, count in together), ZERO)
    if wanted_cpu > free_cpu:
        missing.append(f"needs {_count(wanted_cpu, 'CPU core')}{where}, {_number(free_cpu)} {free}")
    free_memory = sum((usage.free_memory(n) for n in nodes), ZERO)
    wanted_memory = sum((need.memory * count for need, count in together), ZERO)
    if wanted_memory > free_memory:
        missing.append(
            f"needs {_bytes(wanted_memory)} of memory{where}, {_bytes(free_memory)} {free}"
        )
    room = sum(max(usage.free_pods(n), 0) for n in nodes)
    pods = sum(count for _, count in together)
    if pods > room:
        most = max((n.max_pods for n in nodes), default=0)
        missing.append(
            f"needs room for {_count(Decimal(pods), 'pod')}{where}, {room} {free} "
            f"(a node runs at most {most} pods at once)"
        )
    return missing


def _gpus_missing(
    usage: Usage, together: Sequence[tuple[PodNeed, int]], nodes: Sequence[Node]
) -> tuple[str, str] | None:
    """What the pods of `together` (each need with its count) want of GPUs and what `nodes`
    have free, in words — in devices when they all want whole ones, in memory when they all
    want memory, else in GPU units — or None when there is enough in total."""
    if not together:
        return None
    devices = [(node, gpu) for node in nodes for gpu in node.gpus]
    if all(need.gpu.whole for need, _ in together):
        wanted = Decimal(sum(need.gpu.devices * count for need, count in together))
        idle = Decimal(sum(1 for n, g in devices if usage.free_share(n, g.index) == ONE))
        return None if wanted <= idle else (_count(wanted, "GPU"), _number(idle))
    if all(need.gpu.memory is not None for need, _ in together):
        if not any(g.memory for _, g in devices):
            return None  # the pod's own message says the memory is not known
        wanted = sum(
            (need.gpu.devices * count * (need.gpu.memory or ZERO) for need, count in together),
            ZERO,
        )
        have = sum((usage.free_share(n, g.index) * g.memory for n, g in devices if g.memory), ZERO)
        return None if wanted <= have else (f"{_bytes(wanted)} of GPU memory", _bytes(have))
    share = next((g.memory for _, g in devices if g.memory), None)
    wanted = ZERO
    for need, count in together:
        each = need.gpu.share_of(share)
        wanted += need.gpu.devices * count * (each if each is not None else ONE)
    have = sum((usage.free_gpus(node) for node in nodes), ZERO)
    return None if wanted <= have else (_count(wanted, "GPU"), _number(have))


def pod_in_words(need: PodNeed) -> str:
    """What one pod asks, in words: `2 GPUs, 4 CPU cores`."""
    parts = []
    if need.gpu.devices:
        parts.append(need.gpu.in_words())
    if need.cpu:
        parts.append(_count(need.cpu, "CPU core"))
    if need.memory:
        parts.append(f"{_bytes(need.memory)} of memory")
    return ", ".join(parts) or "room"


def _best_node(usage: Usage, need: PodNeed, nodes: Sequence[Node]) -> str:
    """What the roomiest accepting node has free, in the terms the pod asks for (among the
    nodes that may run another pod)."""
    open_nodes = [node for node in nodes if usage.free_pods(node) > 0]
    if not open_nodes:
        return "every node it accepts runs as many pods as it may (max pods)"
    return _roomiest(usage, need, open_nodes) + (
        "" if len(open_nodes) == len(nodes) else " with room for another pod"
    )


def _roomiest(usage: Usage, need: PodNeed, nodes: Sequence[Node]) -> str:
    if need.gpu.devices and not need.gpu.whole:
        if all(need.gpu.share_of(g.memory) is None for n in nodes for g in n.gpus):
            return "the memory of these GPUs is not known (set gpu_memory for their nodes)"
        if need.gpu.memory is not None:
            room = (
                usage.free_share(n, g.index) * g.memory for n in nodes for g in n.gpus if g.memory
            )
            return f"at most {_bytes(max(room, default=ZERO))} of GPU memory free on any device"
        most = max((usage.free_share(n, g.index) for n in nodes for g in n.gpus), default=ZERO)
        return f"at most {_number(most)} of a GPU free on any device"
    if need.gpu.devices:
        idle = max(
            (sum(1 for g in n.gpus if usage.free_share(n, g.index) == ONE) for n in nodes),
            default=0,
        )
        return f"at most {_count(Decimal(idle), 'idle GPU')} on any node"
    cpu = max((usage.free_cpu(n) for n in nodes), default=ZERO)
    memory = max((usage.free_memory(n) for n in nodes), default=ZERO)
    return f"at most {_count(cpu, 'CPU core')} and {_bytes(memory)} of memory free on any node"


def _pools_hint(nodes: Sequence[Node], need: PodNeed) -> str:
    pools = sorted({node.pool for node in nodes})
    return f" (the nodes are in node pools {', '.join(pools)})" if need.selector.pools else ""


def _bytes(amount: Decimal) -> str:
    return binary_quantity(int(max(amount, ZERO)))


def _count(amount: Decimal, noun: str) -> str:
    return f"{_number(amount)} {noun}{'' if amount == ONE else 's'}"


def _number(value: Decimal) -> str:
    return f"{value.normalize():f}"


def total_gpus(assignments: Iterable[Assignment]) -> Decimal:
    return sum((a.gpu_amount for a in assignments), ZERO)
