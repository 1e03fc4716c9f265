"""Which nodes a pod accepts (scheduler/gang/selectors.py): node pools, node type, Kubernetes'
toleration rules and required node affinity with every operator."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from lockstep.domain.cluster import Node, Taint
from lockstep.scheduler.gang.selectors import Selector
from lockstep.schemas.pod import NodeAffinityRequired, Toleration

NODE = Node(
    "n",
    "a100",
    Decimal(8),
    Decimal(2**30),
    labels={"zone": "eu", "gen": "4", "run.ai/type": "dgx"},
)


def affinity(*terms: list[dict[str, Any]]) -> Selector:
    wire = {"nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}
    return Selector(affinity=NodeAffinityRequired.model_validate(wire, strict=False))


@pytest.mark.parametrize(
    ("expression", "allows"),
    [
        ({"key": "zone", "operator": "In", "values": ["eu", "us"]}, True),
        ({"key": "zone", "operator": "In", "values": ["us"]}, False),
        ({"key": "zone", "operator": "NotIn", "values": ["us"]}, True),
        ({"key": "rack", "operator": "NotIn", "values": ["1"]}, True),
        ({"key": "zone", "operator": "Exists"}, True),
        ({"key": "rack", "operator": "Exists"}, False),
        ({"key": "rack", "operator": "DoesNotExist"}, True),
        ({"key": "gen", "operator": "Gt", "values": ["3"]}, True),
        ({"key": "gen", "operator": "Lt", "values": ["3"]}, False),
        ({"key": "zone", "operator": "Gt", "values": ["3"]}, False),
    ],
)
def test_match_expressions(expression: dict[str, Any], allows: bool) -> None:
    assert affinity([expression]).allows(NODE) is allows


def test_terms_are_ored_and_expressions_anded() -> None:
    eu = {"key": "zone", "operator": "In", "values": ["eu"]}
    old = {"key": "gen", "operator": "Lt", "values": ["3"]}
    assert not affinity([eu, old]).allows(NODE)
    assert affinity([old], [eu]).allows(NODE)


def test_pools_and_node_type() -> None:
    assert Selector(pools=("v100", "a100")).allows(NODE)
    assert not Selector(pools=("v100",)).allows(NODE)
    assert Selector(node_type="dgx").allows(NODE)
    assert not Selector(node_type="cpu").allows(NODE)
    assert (
        Selector(pools=("a100",), node_type="dgx").where() == " in node pool a100 of node type dgx"
    )


def toleration(**fields: Any) -> Toleration:
    return Toleration.model_validate({"name": "t", **fields}, strict=False)


@pytest.mark.parametrize(
    ("fields", "tolerates"),
    [
        ({"operator": "Exists"}, True),  # an empty key with Exists tolerates everything
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"key": "gpu", "operator": "Equal", "value": "shared"}, True),
        ({"key": "gpu", "operator": "Equal", "value": "other"}, False),
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "gpu", "operator": "Exists", "effect": "Any"}, True),
        ({"key": "cpu", "operator": "Exists"}, False),
    ],
)
def test_tolerations(fields: dict[str, Any], tolerates: bool) -> None:
    tainted = Node("t", "p", Decimal(1), Decimal(1), taints=(Taint("gpu", "shared"),))
    assert Selector(tolerations=(toleration(**fields),)).allows(tainted) is tolerates
    assert not Selector().allows(tainted)


def test_prefer_no_schedule_taints_do_not_keep_pods_away() -> None:
    soft = Node("s", "p", Decimal(1), Decimal(1), taints=(Taint("x", "", "PreferNoSchedule"),))
    assert Selector().allows(soft)
