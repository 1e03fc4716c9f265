"""Placing a gang: every pod on a node that accepts it and has room, GPUs device by device.

Whole GPUs take devices nobody uses; a fraction (a portion of a device, or an amount of its
memory) shares a device with other fractions without the shares ever adding up to more than
the device. Fractions are packed onto the fullest device they fit on, so whole devices stay
free for those who need them. A node runs at most its `max_pods` pods, whatever they ask (the
kubelet's cap), so pods are counted per node too. Pods go to the first node (in their node
pools' order of preference) with room: nodes fill up in order, which keeps free capacity
together.

When a gang does not fit, `GangShortfall.message` says what is missing where (shortfall.py).

What is taken is counted in integer units and indexed (usage.py, index.py): finding a node
for a pod costs about the logarithm of the number of nodes, and a gang that does not fit is
given back pod by pod rather than tried on a copy of every node.
"""

from __future__ import annotations

from collections.abc import Sequence

from lockstep.scheduler.gang.needs import GangPlacement, PodNeed, size_of
from lockstep.scheduler.nodes.index import affinity_key
from lockstep.scheduler.nodes.shortfall import (
    GangShortfall,
    best_node,
    missing_or_node,
    no_node_accepts,
)
from lockstep.scheduler.nodes.usage import Ask, Spot, Usage, ask_of
from lockstep.schemas.pod import PodAffinity, PodAffinityType


def place(
    usage: Usage, needs: Sequence[PodNeed], *, affinity: PodAffinity | None = None
) -> GangPlacement | GangShortfall:
    """Every pod of the gang placed (and counted in `usage`), or why it cannot be; `usage` is
    left as it was then. A Required pod affinity keeps the gang on nodes that share the value
    of its topology key; a Preferred one tries that first."""
    groups = usage.index.topology_groups(affinity)
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


def fits(usage: Usage, needs: Sequence[PodNeed], affinity: PodAffinity | None) -> bool:
    """Whether the gang would fit `usage` now (which is left as it was)."""
    placed = place(usage, needs, affinity=affinity)
    if isinstance(placed, GangShortfall):
        return False
    usage.release(needs, placed)
    return True


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
    cap = usage.index
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
    cap = usage.index
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
        line = best_node(usage, need, view.accepted) if explain and view.accepted else ""
        for earlier, where in reversed(taken):
            usage.untake(earlier, where)
        if not explain:
            return GangShortfall("")
        if not view.accepted:
            return GangShortfall(no_node_accepts(usage.nodes, need, need.pod))
        return GangShortfall(missing_or_node(usage, needs, need, view.accepted, line))
    return placed


def _is_required(affinity: PodAffinity) -> bool:
    return affinity.type is not PodAffinityType.PREFERRED
