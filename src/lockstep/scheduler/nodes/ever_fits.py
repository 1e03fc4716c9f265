"""Whether a gang could ever fit the nodes, were they idle, judged from its shape (gang/shape.py)
before a single per-pod object is made.

`never_fits` compares each group's count and requests with what the idle nodes offer — in
total, and node by node (the most pods of that kind each node could hold, its `max_pods`
included) — in time that depends on the number of nodes and groups only. A gang that passes
has at most as many pods as the nodes could ever run at once (for each distinct pod spec), so
placing it pod by pod (placement.py) costs no more than the cluster is large.

What fits is remembered per node list (index.py) by the gang's shape — what its pods ask
and how many ask it, never their names — so of 10,000 queued gangs only those of a shape not
seen before are judged: a cycle's "could it ever fit" costs a dictionary look-up per gang.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from lockstep.domain.cluster import Node
from lockstep.scheduler.gang.candidates import Candidate
from lockstep.scheduler.gang.needs import ONE, ZERO, PodNeed, pod_in_words, size_of
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.nodes.index import NodeIndex, affinity_key, hashable_key, index_of
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.shortfall import GangShortfall, missing_in_total, no_node_accepts
from lockstep.scheduler.nodes.usage import Ask, Usage, ask_of
from lockstep.schemas.pod import PodAffinity


def can_never_fit(nodes: Sequence[Node], candidate: Candidate) -> str | None:
    """Why the candidate's required pods could not fit even on idle nodes (the message it is
    parked with), or None. Judged from its shape first, so a gang larger than the cluster
    costs no per-pod object; one the nodes could hold is then placed on them, idle."""
    never = never_fits_idle(nodes, candidate.required_shape, affinity=candidate.affinity)
    return None if never is None else f"the workload can never fit this cluster: {never}"


def most_pods(node: Node, need: PodNeed) -> int:
    """How many pods asking `need` the node could hold were it idle."""
    most = max(node.max_pods, 0)
    if need.cpu > ZERO and need.cpu * most > node.cpu:
        most = int(node.cpu / need.cpu)
    if need.memory > ZERO and need.memory * most > node.memory:
        most = int(node.memory / need.memory)
    gpu = need.gpu
    if gpu.devices and most:
        if gpu.whole:
            slots = len(node.gpus)
        else:
            slots = 0
            for device in node.gpus:
                share = gpu.share_of(device.memory)
                if share is None:
                    continue  # its memory is not known: no share of it can be measured
                slots += most if share == ZERO else min(int(ONE / share), most)
        most = min(most, slots // gpu.devices)
    return max(most, 0)


def _most_at(cap: NodeIndex, position: int, ask: Ask, need: PodNeed) -> int:
    """`most_pods` of the node at `position`, in integer units (a fraction of a GPU: as
    `most_pods` counts it)."""
    if need.gpu.devices and not ask.idle_devices:
        return most_pods(cap.nodes[position], need)
    most = max(cap.max_pods[position], 0)
    if ask.cpu:
        most = min(most, cap.cpu[position] // ask.cpu)
    if ask.memory:
        most = min(most, cap.memory[position] // ask.memory)
    if ask.idle_devices and most > 0:
        devices = cap.device_first[position + 1] - cap.device_first[position]
        most = min(most, devices // ask.idle_devices)
    return max(most, 0)


def never_fits(
    nodes: Sequence[Node], shape: GangShape, *, affinity: PodAffinity | None = None
) -> str | None:
    """Why the gang could not fit even if every node were idle, judged from its shape; None
    when it might (then placing it pod by pod decides, at a cost bounded by the cluster)."""
    cap = index_of(nodes)
    groups = _alike(shape)
    key = ("shape", _signature(groups), affinity_key(affinity))
    if key in cap.fits:
        return None
    never = _never_fits(cap, nodes, groups, affinity)
    if never is None:
        cap.remember_fit(key)
    return never


def never_fits_idle(
    nodes: Sequence[Node], shape: GangShape, *, affinity: PodAffinity | None = None
) -> str | None:
    """Why the gang could not fit even if every node were idle — judged from its shape, then,
    unless its shape decides it, by placing it on the idle nodes — or None. Remembered per
    shape: the same shape is judged once per node list."""
    cap = index_of(nodes)
    groups = _alike(shape)
    signature = _signature(groups)
    key = ("idle", signature, affinity_key(affinity))
    if key in cap.fits:
        return None
    never = _never_fits(cap, nodes, groups, affinity)
    if never is None:
        cap.remember_fit(("shape", signature, affinity_key(affinity)))
        # One kind of pod taking whole GPUs (or none) fills idle nodes one after the other to
        # the most each holds, so the shape has decided; other gangs are placed to know.
        decided = len(groups) == 1 and groups[0].need.gpu.whole and affinity_key(affinity) is None
        if not decided:
            on_idle = place(_idle(cap, nodes).copy(), list(shape.pods()), affinity=affinity)
            if isinstance(on_idle, GangShortfall):
                return on_idle.message
        cap.remember_fit(key)
    return never


def _within(totals: tuple[int, int, int, int], together: Sequence[tuple[PodNeed, int]]) -> bool:
    """The pods of `together` (whole GPUs or none) are within what idle nodes have in total
    (then `missing_in_total` has nothing to say; otherwise it is asked)."""
    cpu, memory, pods, devices = totals
    asks = [(ask_of(need), count) for need, count in together]
    return (
        all(need.gpu.whole for need, _ in together)
        and sum(ask.cpu * count for ask, count in asks) <= cpu
        and sum(ask.memory * count for ask, count in asks) <= memory
        and sum(count for _, count in asks) <= pods
        and sum(need.gpu.devices * count for need, count in together) <= devices
    )


def _most(cap: NodeIndex, need: PodNeed) -> int:
    """How many pods asking `need` the idle nodes it accepts hold, at most (once per need)."""
    known = cap.extras.setdefault("most", {})
    assert isinstance(known, dict)
    key = hashable_key(replace(need, pod=""))
    most = known.get(key)
    if not isinstance(most, int):
        ask = ask_of(need)
        most = sum(_most_at(cap, p, ask, need) for p in cap.view(need.selector).accepted)
        known[key] = most
    return most


def _idle(cap: NodeIndex, nodes: Sequence[Node]) -> Usage:
    """The nodes idle, made once per node list."""
    found = cap.extras.get("idle")
    if not isinstance(found, Usage):
        found = Usage(nodes)
        cap.extras["idle"] = found
    return found


def _signature(groups: Sequence[_Alike]) -> tuple[tuple[object, int], ...]:
    return tuple((hashable_key(group.need), group.count) for group in groups)


def _never_fits(
    cap: NodeIndex, nodes: Sequence[Node], groups: Sequence[_Alike], affinity: PodAffinity | None
) -> str | None:
    if not cap.topology_groups(affinity):
        key = affinity.key if affinity is not None else ""
        return f"no node has the label {key} that the pod affinity requires"
    for group in groups:
        if not cap.view(group.need.selector).accepted:
            return no_node_accepts(nodes, group.need, group.first)
    seen: list[_Alike] = []
    for group in groups:
        selector = group.need.selector
        if any(other.need.selector == selector for other in seen):
            continue
        seen.append(group)
        together = [(g.need, g.count) for g in groups if g.need.selector == selector]
        view = cap.view(selector)
        if _within(cap.idle_totals(view), together):
            continue
        accepted = [cap.nodes[p] for p in view.accepted]
        missing = missing_in_total(_idle(cap, nodes), together, accepted, where=selector.where())
        if missing:
            return "; ".join(missing)
    for group in groups:
        most = _most(cap, group.need)
        if group.count > most:
            return (
                f"it asks {group.count} pods of {pod_in_words(group.need)} and the nodes"
                f"{group.need.selector.where()} could hold at most {most}"
            )
    return None


@dataclass(frozen=True, slots=True)
class _Alike:
    """Pods of a gang that ask the same: how many, and the first one's name (for messages)."""

    need: PodNeed
    count: int
    first: str


def _alike(shape: GangShape) -> list[_Alike]:
    """The shape's groups with those asking the same merged (a leader running the workers'
    spec joins them), the largest pods first, as placement tries them."""
    merged: list[_Alike] = []
    for group in shape.groups:
        if group.count == 0:
            continue
        need = replace(group.need, pod="")
        for i, other in enumerate(merged):
            if other.need == need:
                merged[i] = _Alike(need, other.count + group.count, other.first)
                break
        else:
            merged.append(_Alike(need, group.count, group.names[0]))
    return sorted(merged, key=lambda alike: size_of(alike.need), reverse=True)
