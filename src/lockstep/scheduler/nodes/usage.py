"""What is taken on each node, in integer units (index.py), with a tree that finds the first
node with room for a pod in time logarithmic in the number of nodes.

The tree is a segment tree over the nodes' internal positions holding, for every range of
nodes, the most free pods, idle GPU devices, free CPU and free memory any one of them has: a
search descends only into ranges where some node could hold the pod, and checks each node it
reaches exactly. Nodes fill up in order, so the full ones are skipped a whole range at a time.
A copy is a handful of flat lists copied (no per-node objects).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from lockstep.domain.cluster import Assignment, Node
from lockstep.scheduler.gang.needs import ONE, ZERO, GpuNeed, PodNeed
from lockstep.scheduler.nodes.index import (
    FIT_CACHE_SIZE,
    View,
    byte_units,
    cpu_units,
    index_of,
    share_units,
)


@dataclass(frozen=True, slots=True)
class Ask:
    """A pod's need in integer units."""

    cpu: int
    memory: int
    gpu: GpuNeed
    idle_devices: int
    """Whole devices it needs idle (0 for a fraction or none)."""


_ASKS: dict[tuple[Decimal, Decimal, GpuNeed], Ask] = {}


def ask_of(need: PodNeed) -> Ask:
    key = (need.cpu, need.memory, need.gpu)
    found = _ASKS.get(key)
    if found is None:
        gpu = need.gpu
        found = Ask(
            cpu_units(need.cpu, up=True),
            byte_units(need.memory, up=True),
            gpu,
            gpu.devices if gpu.devices and gpu.whole else 0,
        )
        if len(_ASKS) >= FIT_CACHE_SIZE:
            _ASKS.clear()
        _ASKS[key] = found
    return found


Spot = tuple[int, tuple[int, ...], Decimal]
"""Where a pod fits: a node's position, its GPU device indexes, the share of each."""


class Usage:
    """What is taken on each node: CPU, memory, each GPU device's share, and how many pods."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes: list[Node] = nodes if isinstance(nodes, list) else list(nodes)
        cap = index_of(self.nodes)
        self.index = cap
        self.cpu_free = list(cap.cpu)
        self.memory_free = list(cap.memory)
        self.pods_free = list(cap.max_pods)
        self.device_used = [0] * len(cap.device_index)
        self.idle_devices = [
            cap.device_first[p + 1] - cap.device_first[p] for p in range(len(cap.nodes))
        ]
        size = 1
        while size < max(len(cap.nodes), 1):
            size *= 2
        self._size = size
        padding = [-1] * (size - len(cap.nodes))
        self._trees = [
            [-1] * size + values + padding
            for values in (self.pods_free, self.idle_devices, self.cpu_free, self.memory_free)
        ]
        for tree in self._trees:
            for i in range(size - 1, 0, -1):
                left, right = tree[2 * i], tree[2 * i + 1]
                tree[i] = left if left > right else right

    def copy(self) -> Usage:
        other = Usage.__new__(Usage)
        other.nodes = self.nodes
        other.index = self.index
        other.cpu_free = list(self.cpu_free)
        other.memory_free = list(self.memory_free)
        other.pods_free = list(self.pods_free)
        other.device_used = list(self.device_used)
        other.idle_devices = list(self.idle_devices)
        other._size = self._size
        other._trees = [list(tree) for tree in self._trees]
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
        self._count(need, assignment, 1)

    def remove(self, need: PodNeed, assignment: Assignment) -> None:
        """Give back what `add` counted."""
        self._count(need, assignment, -1)

    def idle(self) -> bool:
        """Nothing is taken anywhere."""
        cap = self.index
        return (
            self.pods_free == cap.max_pods
            and self.cpu_free == cap.cpu
            and self.memory_free == cap.memory
            and not any(self.device_used)
        )

    def free_cpu(self, node: Node) -> Decimal:
        position = self.index.position[node.name]
        used = self.index.cpu[position] - self.cpu_free[position]
        return node.cpu - Decimal(used) / Decimal(10**9)

    def free_memory(self, node: Node) -> Decimal:
        position = self.index.position[node.name]
        return node.memory - (self.index.memory[position] - self.memory_free[position])

    def free_pods(self, node: Node) -> int:
        """How many more pods it may run (its max_pods less those it runs)."""
        return self.pods_free[self.index.position[node.name]]

    def free_share(self, node: Node, index: int) -> Decimal:
        position = self.index.position[node.name]
        slot = self.index.slot_of[position].get(index)
        if slot is None:
            return ONE
        return self.slot_share(slot)

    def slot_share(self, slot: int) -> Decimal:
        """The free share of a device, by its slot."""
        used = self.device_used[slot]
        return ONE if not used else ONE - Decimal(used) / self.index.device_capacity[slot]

    def free_gpus(self, node: Node) -> Decimal:
        return sum((self.free_share(node, gpu.index) for gpu in node.gpus), ZERO)

    def take(self, need: PodNeed, node: Node) -> Assignment | None:
        """Place `need` on `node` if it has room, counting it; None when it has not."""
        position = self.index.position[node.name]
        ask = ask_of(need)
        spot = self.fits_on(ask, position)
        if spot is None:
            return None
        return self.take_spot(ask, spot)

    def take_spot(self, ask: Ask, spot: Spot) -> Assignment:
        """Count a pod where `find` or `fits_on` found room for it."""
        position, gpus, share = spot
        assignment = Assignment(self.index.nodes[position].name, gpus, share)
        self._change(position, ask, gpus, share, 1)
        return assignment

    def untake(self, ask: Ask, spot: Spot) -> None:
        """Give back what `take_spot` counted."""
        position, gpus, share = spot
        self._change(position, ask, gpus, share, -1)

    def find(self, ask: Ask, view: View) -> Spot | None:
        """The first node of `view` (in its order of preference) with room for the pod."""
        if not view.merge:
            for low, high in view.ranges:
                spot = self._search(ask, low, high, view.mask)
                if spot is not None:
                    return spot
            return None
        found = (self._search(ask, low, high, view.mask) for low, high in view.ranges)
        spots = [spot for spot in found if spot is not None]
        rank = self.index.rank
        return min(spots, key=lambda spot: rank[spot[0]], default=None)

    def fits_on(self, ask: Ask, position: int) -> Spot | None:
        """Where on the node at `position` the pod has room, or None."""
        if (
            self.pods_free[position] <= 0
            or ask.cpu > self.cpu_free[position]
            or ask.memory > self.memory_free[position]
            or ask.idle_devices > self.idle_devices[position]
        ):
            return None
        return self._devices(ask, position)

    def _search(self, ask: Ask, low: int, high: int, mask: bytes | None) -> Spot | None:
        pods, idle, cpu, memory = self._trees
        want_idle, want_cpu, want_memory = ask.idle_devices, ask.cpu, ask.memory
        stack = [(1, 0, self._size)]
        while stack:
            index, left, right = stack.pop()
            if (
                right <= low
                or left >= high
                or pods[index] < 1
                or idle[index] < want_idle
                or cpu[index] < want_cpu
                or memory[index] < want_memory
            ):
                continue
            if right - left == 1:
                if mask is None or mask[left]:
                    spot = self._devices(ask, left)
                    if spot is not None:
                        return spot
                continue
            middle = (left + right) // 2
            stack.append((2 * index + 1, middle, right))
            stack.append((2 * index, left, middle))
        return None

    def _devices(self, ask: Ask, position: int) -> Spot | None:
        need = ask.gpu
        if need.devices == 0:
            return position, (), ONE
        cap = self.index
        first, last = cap.device_first[position], cap.device_first[position + 1]
        used = self.device_used
        if ask.idle_devices:
            idle = [cap.device_index[s] for s in range(first, last) if not used[s]]
            if len(idle) < need.devices:
                return None
            return position, tuple(idle[: need.devices]), ONE
        fitting: list[tuple[Fraction | int, int]] = []
        share = ONE
        uniform = len(set(cap.device_capacity[first:last])) <= 1
        for slot in range(first, last):
            wanted = need.share_of(cap.device_memory[slot])
            if wanted is None:
                continue
            share = wanted
            size = cap.device_capacity[slot]
            free = size - used[slot]
            if share_units(wanted, size) <= free:
                fitting.append((free if uniform else Fraction(free, size), cap.device_index[slot]))
        if len(fitting) < need.devices:
            return None
        fitting.sort()  # the fullest devices first: fractions pack together
        return position, tuple(sorted(index for _, index in fitting[: need.devices])), share

    def _count(self, need: PodNeed, assignment: Assignment, sign: int) -> None:
        position = self.index.position.get(assignment.node)
        if position is not None:
            self._change(position, ask_of(need), assignment.gpus, assignment.share, sign)

    def _change(
        self, position: int, ask: Ask, gpus: tuple[int, ...], share: Decimal, sign: int
    ) -> None:
        cap = self.index
        self.cpu_free[position] -= sign * ask.cpu
        self.memory_free[position] -= sign * ask.memory
        self.pods_free[position] -= sign
        slots = cap.slot_of[position]
        for index in gpus:
            slot = slots.get(index)
            if slot is None:
                continue
            before = self.device_used[slot]
            after = before + sign * share_units(share, cap.device_capacity[slot])
            self.device_used[slot] = after
            if not before and after:
                self.idle_devices[position] -= 1
            elif before and not after:
                self.idle_devices[position] += 1
        self._update(position)

    def _update(self, position: int) -> None:
        index = position + self._size
        values = (
            self.pods_free[position],
            self.idle_devices[position],
            self.cpu_free[position],
            self.memory_free[position],
        )
        for tree, value in zip(self._trees, values, strict=True):
            tree[index] = value
            i = index // 2
            while i:
                left, right = tree[2 * i], tree[2 * i + 1]
                best = left if left > right else right
                if tree[i] == best:
                    break
                tree[i] = best
                i //= 2
