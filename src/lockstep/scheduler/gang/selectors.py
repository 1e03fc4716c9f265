"""Which nodes a pod may go to: a pod's `Selector` reads its node pools (in order of
preference), its node type, the taints it tolerates and its required node affinity, as
Kubernetes would."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from lockstep.domain.cluster import Node, Taint
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.pod import (
    MatchExpression,
    MatchExpressionOperator,
    NodeAffinityRequired,
    Toleration,
    TolerationEffect,
    TolerationOperator,
)

NODE_TYPE_LABEL = "run.ai/type"
"""The node label a workload's `nodeType` selects on."""
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
"""Taints with these effects keep pods that do not tolerate them away; PreferNoSchedule only
makes a node less preferred, which a single machine has no use for."""


@dataclass(frozen=True, slots=True)
class Selector:
    """Which nodes one pod accepts."""

    pools: tuple[str, ...] = ()
    """Node pools in order of preference; empty: any pool."""
    node_type: str | None = None
    tolerations: tuple[Toleration, ...] = ()
    affinity: NodeAffinityRequired | None = None

    def allows(self, node: Node) -> bool:
        return (
            (not self.pools or node.pool in self.pools)
            and (self.node_type is None or node.label(NODE_TYPE_LABEL) == self.node_type)
            and all(self._tolerates(taint) for taint in node.taints)
            and (self.affinity is None or _affinity_allows(self.affinity, node))
        )

    def nodes(self, nodes: Sequence[Node]) -> list[Node]:
        """The nodes it allows, those of its preferred pools first (otherwise in order)."""
        allowed = [node for node in nodes if self.allows(node)]
        if self.pools:
            allowed.sort(key=lambda node: self.pools.index(node.pool))
        return allowed

    def where(self) -> str:
        """The nodes it allows, in words for a message: ` in node pool a100`."""
        parts = []
        if self.pools:
            noun = "node pool" if len(self.pools) == 1 else "node pools"
            parts.append(f" in {noun} {', '.join(self.pools)}")
        if self.node_type is not None:
            parts.append(f" of node type {self.node_type}")
        return "".join(parts)

    def _tolerates(self, taint: Taint) -> bool:
        if taint.effect not in BLOCKING_EFFECTS:
            return True
        return any(_tolerates(toleration, taint) for toleration in self.tolerations)


def selector_of(spec: PodSpec) -> Selector:
    return Selector(
        pools=tuple(spec.node_pools or ()),
        node_type=spec.node_type,
        tolerations=tuple(t for t in spec.tolerations or () if not t.exclude),
        affinity=spec.node_affinity_required,
    )


def _tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' rule: an empty key with Exists tolerates everything; otherwise the keys
    match, and the values too unless the operator is Exists; an unset effect (or Any) matches
    every effect."""
    effect = toleration.effect
    if effect is not None and effect is not TolerationEffect.ANY and effect != taint.effect:
        return False
    if toleration.operator is TolerationOperator.EXISTS:
        return not toleration.key or toleration.key == taint.key
    return toleration.key == taint.key and (toleration.value or "") == taint.value


def _affinity_allows(affinity: NodeAffinityRequired, node: Node) -> bool:
    """Terms are ORed, the expressions of a term ANDed; no terms select every node."""
    terms = affinity.node_selector_terms or []
    if not terms:
        return True
    return any(
        all(_matches(expression, node) for expression in term.match_expressions or [])
        for term in terms
    )


def _matches(expression: MatchExpression, node: Node) -> bool:
    value = node.label(expression.key)
    values = expression.values or []
    match expression.operator:
        case MatchExpressionOperator.IN:
            return value is not None and value in values
        case MatchExpressionOperator.NOT_IN:
            return value is None or value not in values
        case MatchExpressionOperator.EXISTS:
            return value is not None
        case MatchExpressionOperator.DOES_NOT_EXIST:
            return value is None
        case MatchExpressionOperator.GT | MatchExpressionOperator.LT:
            if value is None or len(values) != 1:
                return False
            try:
                have, bound = Decimal(value), Decimal(values[0])
            except InvalidOperation:
                return False
            return (
                have > bound if expression.operator is MatchExpressionOperator.GT else have < bound
            )
