"""The nodes as the scheduler indexes them, built once per node list and shared by every `Usage`
of it: capacity in integer units, node pools as contiguous ranges, which nodes each distinct
selector accepts (in its order of preference), topology groups, how many pods the nodes run
at once, and what is known to fit.

Integer units: CPU in nano-cores, memory in bytes (a node's capacity rounded down, a pod's
request rounded up, so nothing is ever over-committed), and each GPU device in millionths of
its memory in bytes (or millionths of the device when its memory is not known), so a portion
of a device and an amount of its memory add up exactly on one device.

Nodes are kept in an internal order: grouped by node pool (pools in order of first appearance,
nodes within a pool in the order given), so that a pool is one range of positions; `rank`
keeps each node's place in the order given, for selectors of any pool.

A node list is indexed once and recognised again by identity (`index_of`): the scheduler
never changes a node list it was given, and a new list (the runtime's nodes at the next cycle)
is indexed afresh.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

from lockstep.domain.cluster import Node
from lockstep.scheduler.gang.selectors import Selector
from lockstep.schemas.pod import PodAffinity, PodAffinityType

NANO = 10**9
"""CPU is counted in nano-cores."""
DEVICE_UNIT = 10**6
"""A GPU device is counted in millionths of its memory in bytes (or of itself)."""
INDEX_CACHE_SIZE = 4
"""How many node lists stay indexed at once (the reconciler's current one, and tests')."""
FIT_CACHE_SIZE = 100_000
"""How many gang shapes known to fit idle nodes are remembered per node list."""

_ONE = Decimal(1)
_NANO = Decimal(NANO)


def cpu_units(cores: Decimal, *, up: bool) -> int:
    return int((cores * _NANO).to_integral_value(ROUND_CEILING if up else ROUND_FLOOR))


def byte_units(amount: Decimal, *, up: bool) -> int:
    return int(amount.to_integral_value(ROUND_CEILING if up else ROUND_FLOOR))


def device_capacity(memory: Decimal | None) -> int:
    """A device's size in its units."""
    if not memory:
        return DEVICE_UNIT
    return int(memory.to_integral_value(ROUND_FLOOR)) * DEVICE_UNIT


_SHARE_UNITS: dict[tuple[Decimal, int], int] = {}


def share_units(share: Decimal, capacity: int) -> int:
    """A share of a device (1: all of it) in the device's units."""
    if share == _ONE:
        return capacity
    key = (share, capacity)
    units = _SHARE_UNITS.get(key)
    if units is None:
        units = int((share * capacity).to_integral_value(ROUND_HALF_EVEN))
        if len(_SHARE_UNITS) >= FIT_CACHE_SIZE:
            _SHARE_UNITS.clear()
        _SHARE_UNITS[key] = units
    return units


def hashable_key(value: object) -> Hashable:
    """`value` itself when it can be hashed, else its repr (selectors holding tolerations or a
    node affinity, which are not hashable, compare equal exactly when their reprs do)."""
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def affinity_key(affinity: PodAffinity | None) -> tuple[str, bool] | None:
    """A pod affinity as the placement reads it: its key and whether it is required."""
    if affinity is None or not affinity.key:
        return None
    return affinity.key, affinity.type is not PodAffinityType.PREFERRED


@dataclass(frozen=True, slots=True)
class View:
    """The nodes one selector accepts, within one set of nodes: `ranges` (internal positions,
    searched one after the other, the preferred pool first), `merge` (the ranges hold the
    accepted nodes of several pools in no order of preference: the first in the order given
    wins), `mask` (1 for each accepted position; None: every position in the ranges), and
    `accepted`, every accepted position in order of preference."""

    ranges: tuple[tuple[int, int], ...]
    merge: bool
    mask: bytes | None
    accepted: tuple[int, ...]


@dataclass(slots=True)
class NodeIndex:
    """A node list indexed (see the module's docstring)."""

    source: Sequence[Node]
    nodes: tuple[Node, ...]
    """In internal order."""
    rank: tuple[int, ...]
    position: dict[str, int]
    cpu: list[int]
    memory: list[int]
    max_pods: list[int]
    device_first: list[int]
    """Node position → its first device slot; its devices are slots first..first+count."""
    device_index: list[int]
    device_capacity: list[int]
    device_memory: list[Decimal | None]
    slot_of: list[dict[int, int]]
    """Node position → device index → slot."""
    pools: dict[str, tuple[int, int]]
    pools_in_order: bool
    """The pools' ranges follow each other in the order given (no pool interleaves another)."""
    room: int
    views: dict[tuple[Hashable, Hashable], View] = field(default_factory=dict)
    groups: dict[tuple[str, bool] | None, list[frozenset[int] | None]] = field(default_factory=dict)
    fits: set[Hashable] = field(default_factory=set)
    """Gang shapes (see ever_fits.py) known to fit these nodes were they idle."""
    extras: dict[str, object] = field(default_factory=dict)
    """What other modules make once per node list (ever_fits.py: the nodes idle)."""

    @classmethod
    def of(cls, source: Sequence[Node]) -> NodeIndex:
        first_seen: dict[str, int] = {}
        for node in source:
            first_seen.setdefault(node.pool, len(first_seen))
        order = sorted(range(len(source)), key=lambda i: (first_seen[source[i].pool], i))
        nodes = tuple(source[i] for i in order)
        pools: dict[str, tuple[int, int]] = {}
        for position, node in enumerate(nodes):
            low, _ = pools.get(node.pool, (position, position))
            pools[node.pool] = (low, position + 1)
        device_first: list[int] = []
        device_index: list[int] = []
        capacities: list[int] = []
        memories: list[Decimal | None] = []
        slot_of: list[dict[int, int]] = []
        for node in nodes:
            device_first.append(len(device_index))
            slots: dict[int, int] = {}
            for gpu in node.gpus:
                slots.setdefault(gpu.index, len(device_index))
                device_index.append(gpu.index)
                capacities.append(device_capacity(gpu.memory))
                memories.append(gpu.memory)
            slot_of.append(slots)
        device_first.append(len(device_index))
        return cls(
            source=source,
            nodes=nodes,
            rank=tuple(order),
            position={node.name: p for p, node in reversed(list(enumerate(nodes)))},
            cpu=[cpu_units(node.cpu, up=False) for node in nodes],
            memory=[byte_units(node.memory, up=False) for node in nodes],
            max_pods=[node.max_pods for node in nodes],
            device_first=device_first,
            device_index=device_index,
            device_capacity=capacities,
            device_memory=memories,
            slot_of=slot_of,
            pools=pools,
            pools_in_order=list(order) == sorted(order),
            room=sum(max(node.max_pods, 0) for node in nodes),
        )

    def positions(self, nodes: Sequence[Node]) -> list[int]:
        """The positions of `nodes` (those of this list), in the order given."""
        found = (self.position.get(node.name) for node in nodes)
        return [p for p in found if p is not None]

    def view(self, selector: Selector, group: frozenset[int] | None = None) -> View:
        """The nodes `selector` accepts within `group` (None: all; else one of
        `topology_groups`), built once per distinct selector and group."""
        key = (hashable_key(selector), None if group is None else id(group))
        found = self.views.get(key)
        if found is None:
            found = self._view(selector, group)
            self.views[key] = found
        return found

    def _view(self, selector: Selector, group: frozenset[int] | None) -> View:
        pools = tuple(dict.fromkeys(selector.pools))
        if pools:
            ranges = tuple(self.pools[p] for p in pools if p in self.pools)
            merge = False
        elif self.pools_in_order:
            ranges = ((0, len(self.nodes)),)
            merge = False
        else:
            ranges = tuple(self.pools.values())
            merge = True
        mask = bytearray(len(self.nodes))
        everything = True
        for low, high in ranges:
            for position in range(low, high):
                ok = (group is None or position in group) and selector.allows(self.nodes[position])
                mask[position] = ok
                everything = everything and ok
        accepted = [p for low, high in ranges for p in range(low, high) if mask[p]]
        if merge:
            accepted.sort(key=self.rank.__getitem__)
        return View(ranges, merge, None if everything else bytes(mask), tuple(accepted))

    def idle_totals(self, view: View) -> tuple[int, int, int, int]:
        """CPU, memory, room for pods and GPU devices of the nodes of `view`, were they idle."""
        key = f"totals-{id(view)}"
        found = self.extras.get(key)
        if not isinstance(found, tuple):
            first = self.device_first
            found = (
                sum(self.cpu[p] for p in view.accepted),
                sum(self.memory[p] for p in view.accepted),
                sum(max(self.max_pods[p], 0) for p in view.accepted),
                sum(first[p + 1] - first[p] for p in view.accepted),
            )
            self.extras[key] = found
        return found

    def topology_groups(self, affinity: PodAffinity | None) -> list[frozenset[int] | None]:
        """The sets of positions a gang is tried on, in order (None: every node; an empty list:
        a required key no node has)."""
        key = affinity_key(affinity)
        found = self.groups.get(key)
        if found is None:
            found = self._topology_groups(key)
            self.groups[key] = found
        return found

    def _topology_groups(self, key: tuple[str, bool] | None) -> list[frozenset[int] | None]:
        if key is None:
            return [None]
        label, required = key
        values: dict[str, list[int]] = {}
        for position in sorted(range(len(self.nodes)), key=self.rank.__getitem__):
            value = self.nodes[position].label(label)
            if value is not None:
                values.setdefault(value, []).append(position)
        groups: list[frozenset[int] | None] = [frozenset(g) for g in values.values()]
        if not required:
            groups.append(None)
        return groups

    def remember_fit(self, key: Hashable) -> None:
        if len(self.fits) >= FIT_CACHE_SIZE:
            self.fits.clear()
        self.fits.add(key)


_INDEXED: list[NodeIndex] = []


def index_of(nodes: Sequence[Node]) -> NodeIndex:
    """The index of `nodes`, built on first use and found again by identity."""
    for index, known in enumerate(_INDEXED):
        if known.source is nodes and len(known.nodes) == len(nodes):
            if index:
                _INDEXED.insert(0, _INDEXED.pop(index))
            return known
    built = NodeIndex.of(nodes)
    _INDEXED.insert(0, built)
    del _INDEXED[INDEX_CACHE_SIZE:]
    return built


def pod_room(nodes: Sequence[Node]) -> int:
    """How many pods the nodes run at once, at most."""
    return index_of(nodes).room
