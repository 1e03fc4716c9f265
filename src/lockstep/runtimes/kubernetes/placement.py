"""Where a pod may run, in Kubernetes terms: tolerations, the node type as a node selector,
node pools and `nodeAffinityRequired` as node affinity, and `podAffinity` as affinity to the
workload's own pods on a topology key.

Called by `pods` for every pod template. Node pools are required (the pod runs in one of
them) and, when there are several, preferred in their order through decreasing weights.
"""

from __future__ import annotations

from typing import Any

from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.pod import (
    NodeAffinityRequired,
    PodAffinity,
    PodAffinityType,
    Toleration,
    TolerationEffect,
    TolerationOperator,
)

MAX_WEIGHT = 100
"""The largest weight of a preferred scheduling term."""
NO_EXECUTE = "NoExecute"


def toleration(item: Toleration) -> dict[str, Any]:
    """One toleration. `Any` is no effect (every effect); `seconds` becomes
    tolerationSeconds only with NoExecute, the one effect Kubernetes allows it with."""
    operator = item.operator or TolerationOperator.EQUAL
    result: dict[str, Any] = {"operator": operator.value}
    if item.key:
        result["key"] = item.key
    if item.value:
        result["value"] = item.value
    if item.effect is not None and item.effect is not TolerationEffect.ANY:
        result["effect"] = item.effect.value
    if item.seconds is not None and item.effect is TolerationEffect.NO_EXECUTE:
        result["tolerationSeconds"] = item.seconds
    return result


def tolerations(items: list[Toleration] | None) -> list[dict[str, Any]]:
    return [toleration(item) for item in items or () if not item.exclude]


def pool_weights(count: int) -> list[int]:
    """Weights that prefer the first pool most and each next one less: 100, 50 for two."""
    return [max(1, round(MAX_WEIGHT * (count - i) / count)) for i in range(count)]


def required_terms(required: NodeAffinityRequired | None) -> list[list[dict[str, Any]]]:
    """The match expressions of each required term; none when the terms allow every node (no
    terms, or a term without expressions, as lockstep's scheduler reads them)."""
    if required is None:
        return []
    terms = [
        [expression.to_wire() for expression in term.match_expressions or ()]
        for term in required.node_selector_terms or ()
    ]
    return [] if any(not term for term in terms) else terms


def node_affinity(
    pools: list[str], required: NodeAffinityRequired | None, *, pool_label: str
) -> dict[str, Any]:
    """`nodeAffinity` that keeps a pod in its pools (ANDed with every term of the required
    affinity, whose terms are ORed) and prefers them in order."""
    terms = required_terms(required)
    if pools:
        in_pools = {"key": pool_label, "operator": "In", "values": list(pools)}
        terms = [[*term, in_pools] for term in terms] or [[in_pools]]
    affinity: dict[str, Any] = {}
    if terms:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": term} for term in terms]
        }
    if len(pools) > 1:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": weight,
                "preference": {
                    "matchExpressions": [{"key": pool_label, "operator": "In", "values": [pool]}]
                },
            }
            for pool, weight in zip(pools, pool_weights(len(pools)), strict=True)
        ]
    return affinity


def pod_affinity(affinity: PodAffinity, selector: dict[str, str]) -> dict[str, Any]:
    """Keep the workload's pods together within one domain of the topology key: required, or
    preferred with the largest weight."""
    term = {"labelSelector": {"matchLabels": dict(selector)}, "topologyKey": affinity.key}
    if affinity.type is PodAffinityType.PREFERRED:
        return {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": MAX_WEIGHT, "podAffinityTerm": term}
            ]
        }
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}


def placement(
    spec: PodSpec, settings: KubernetesSettings, *, selector: dict[str, str]
) -> dict[str, Any]:
    """The pod spec fields of placement: `tolerations`, `nodeSelector`, `affinity` (only
    those with something to say). `selector` picks the workload's own pods."""
    fields: dict[str, Any] = {}
    listed = tolerations(spec.tolerations)
    if listed:
        fields["tolerations"] = listed
    if spec.node_type:
        fields["nodeSelector"] = {settings.node_type_label: spec.node_type}
    affinity: dict[str, Any] = {}
    nodes = node_affinity(
        list(spec.node_pools or ()),
        spec.node_affinity_required,
        pool_label=settings.node_pool_label,
    )
    if nodes:
        affinity["nodeAffinity"] = nodes
    if spec.pod_affinity is not None and spec.pod_affinity.key:
        affinity["podAffinity"] = pod_affinity(spec.pod_affinity, selector)
    if affinity:
        fields["affinity"] = affinity
    return fields
