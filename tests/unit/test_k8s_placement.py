"""Where a pod may run, on Kubernetes (runtimes/kubernetes/placement.py): tolerations, node
type, node pools (required, and preferred in order), nodeAffinityRequired ANDed with them,
and pod affinity to the workload's own pods."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lockstep.runtimes.kubernetes.placement import node_affinity, pool_weights, toleration
from lockstep.runtimes.kubernetes.settings import NODE_TYPE_LABEL
from lockstep.scheduler.gang.selectors import NODE_TYPE_LABEL as SCHEDULER_NODE_TYPE_LABEL
from lockstep.schemas.pod import NodeAffinityRequired, Toleration
from tests.unit.k8s import WORKLOAD_ID, pod_spec, rendered

POOL = "kai.scheduler/node-pool"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"operator": "Equal", "key": "gpu", "value": "a100", "effect": "NoSchedule"},
            {"operator": "Equal", "key": "gpu", "value": "a100", "effect": "NoSchedule"},
        ),
        ({"operator": "Exists", "effect": "Any"}, {"operator": "Exists"}),
        ({"key": "spot"}, {"operator": "Equal", "key": "spot"}),
        (
            {
                "operator": "Exists",
                "key": "node.kubernetes.io/unreachable",
                "effect": "NoExecute",
                "seconds": 30,
            },
            {
                "operator": "Exists",
                "key": "node.kubernetes.io/unreachable",
                "effect": "NoExecute",
                "tolerationSeconds": 30,
            },
        ),
        (
            # the documentation's example: seconds with NoSchedule, which Kubernetes refuses
            {
                "name": "text",
                "operator": "Equal",
                "key": "k",
                "value": "v",
                "effect": "NoSchedule",
                "seconds": 1,
            },
            {"operator": "Equal", "key": "k", "value": "v", "effect": "NoSchedule"},
        ),
        (
            {"operator": "Exists", "key": "x", "effect": "Any", "seconds": 5},
            {"operator": "Exists", "key": "x"},
        ),
    ],
)
def test_toleration(fields: dict[str, Any], expected: dict[str, Any]) -> None:
    assert toleration(Toleration.model_validate_json(json.dumps(fields))) == expected


def test_excluded_tolerations_are_left_out() -> None:
    spec = pod_spec(
        rendered(
            {
                "tolerations": [
                    {"operator": "Exists", "key": "a"},
                    {"operator": "Exists", "key": "b", "exclude": True},
                ]
            }
        )
    )
    assert spec["tolerations"] == [{"operator": "Exists", "key": "a"}]


@pytest.mark.parametrize(
    ("count", "weights"),
    [(1, [100]), (2, [100, 50]), (3, [100, 67, 33]), (4, [100, 75, 50, 25])],
)
def test_pool_weights_decrease_in_order_of_preference(count: int, weights: list[int]) -> None:
    assert pool_weights(count) == weights


def test_a_hundred_and_more_pools_keep_weights_valid() -> None:
    weights = pool_weights(150)
    assert min(weights) >= 1
    assert max(weights) == 100
    assert weights == sorted(weights, reverse=True)


def test_node_pools_are_required_and_preferred_in_order() -> None:
    affinity = node_affinity(["a100", "h100"], None, pool_label=POOL)
    assert affinity == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": POOL, "operator": "In", "values": ["a100", "h100"]}]}
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "preference": {
                    "matchExpressions": [{"key": POOL, "operator": "In", "values": ["a100"]}]
                },
            },
            {
                "weight": 50,
                "preference": {
                    "matchExpressions": [{"key": POOL, "operator": "In", "values": ["h100"]}]
                },
            },
        ],
    }


def test_one_pool_needs_no_preference() -> None:
    affinity = node_affinity(["a100"], None, pool_label="example.com/pool")
    assert "preferredDuringSchedulingIgnoredDuringExecution" not in affinity
    term = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {
        "matchExpressions": [{"key": "example.com/pool", "operator": "In", "values": ["a100"]}]
    }


def required(fields: dict[str, Any]) -> NodeAffinityRequired:
    return NodeAffinityRequired.model_validate_json(json.dumps(fields))


def test_required_affinity_terms_are_ored_and_each_anded_with_the_pools() -> None:
    affinity = node_affinity(
        ["a100"],
        required(
            {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                    {"matchExpressions": [{"key": "fast", "operator": "Exists"}]},
                ]
            }
        ),
        pool_label=POOL,
    )
    in_pool = {"key": POOL, "operator": "In", "values": ["a100"]}
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}, in_pool]},
        {"matchExpressions": [{"key": "fast", "operator": "Exists"}, in_pool]},
    ]


def test_required_affinity_without_pools() -> None:
    affinity = node_affinity(
        [],
        required(
            {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["16"]}]}
                ]
            }
        ),
        pool_label=POOL,
    )
    assert affinity == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["16"]}]}
            ]
        }
    }


def test_a_term_without_expressions_allows_every_node_as_locksteps_scheduler_reads_it() -> None:
    affinity = node_affinity(
        [],
        required(
            {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                    {"matchExpressions": []},
                ]
            }
        ),
        pool_label=POOL,
    )
    assert affinity == {}


def test_node_type_is_a_node_selector_on_the_schedulers_label() -> None:
    assert NODE_TYPE_LABEL == SCHEDULER_NODE_TYPE_LABEL
    spec = pod_spec(rendered({"nodeType": "dgx"}))
    assert spec["nodeSelector"] == {"run.ai/type": "dgx"}


def test_node_labels_are_configurable() -> None:
    spec = pod_spec(
        rendered(
            {"nodeType": "dgx", "nodePools": ["a"]},
            settings={"node_type_label": "example.com/type", "node_pool_label": "example.com/pool"},
        )
    )
    assert spec["nodeSelector"] == {"example.com/type": "dgx"}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] == "example.com/pool"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (
            "Required",
            {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"lockstep.io/workload-id": WORKLOAD_ID}},
                        "topologyKey": "topology.kubernetes.io/zone",
                    }
                ]
            },
        ),
        (
            "Preferred",
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {
                                "matchLabels": {"lockstep.io/workload-id": WORKLOAD_ID}
                            },
                            "topologyKey": "topology.kubernetes.io/zone",
                        },
                    }
                ]
            },
        ),
    ],
)
def test_pod_affinity_keeps_the_workloads_pods_in_one_domain(
    kind: str, expected: dict[str, Any]
) -> None:
    spec = pod_spec(rendered({"podAffinity": {"type": kind, "key": "topology.kubernetes.io/zone"}}))
    assert spec["affinity"]["podAffinity"] == expected


def test_no_placement_fields_without_placement() -> None:
    spec = pod_spec(rendered())
    for key in ("tolerations", "nodeSelector", "affinity"):
        assert key not in spec
