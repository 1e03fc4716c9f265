"""TFJob wiring (frameworks/tensorflow.py) against what the Kubeflow operator injects (shared
k8s/kubeflow-kai-facts.md §1.2): TF_CONFIG with every task's address by lower-case replica
type, this task's type and index, and `"environment": "cloud"`; nothing else."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from lockstep.domain.plan import ReplicaPlan, Role
from lockstep.frameworks import tensorflow
from lockstep.frameworks.endpoints import Endpoint
from lockstep.frameworks.registry import wiring_for
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.specs import plan_of


def endpoints_of(plan: ReplicaPlan) -> dict[str, Endpoint]:
    """A distinct host and port per pod, so a test can tell which pod a variable points at."""
    return {
        replica.pod_name: Endpoint(f"10.0.0.{i + 1}", 2222 + i)
        for i, replica in enumerate(plan.replicas)
    }


def env_of(plan: ReplicaPlan) -> dict[str, dict[str, str]]:
    endpoints = endpoints_of(plan)
    return {r.pod_name: tensorflow.environment(plan, r, endpoints) for r in plan.replicas}


def configs_of(plan: ReplicaPlan) -> dict[str, Any]:
    return {name: json.loads(env["TF_CONFIG"]) for name, env in env_of(plan).items()}


def test_registered_as_the_tf_wiring() -> None:
    assert wiring_for(DistributedFramework.TF) is tensorflow.environment


def test_every_task_of_every_pod() -> None:
    plan = plan_of("TF", 2, name="job")
    cluster = {
        "chief": ["10.0.0.1:2222"],
        "worker": ["10.0.0.2:2223", "10.0.0.3:2224"],
    }
    assert configs_of(plan) == {
        "job-chief-0": {
            "cluster": cluster,
            "task": {"type": "chief", "index": 0},
            "environment": "cloud",
        },
        "job-worker-0": {
            "cluster": cluster,
            "task": {"type": "worker", "index": 0},
            "environment": "cloud",
        },
        "job-worker-1": {
            "cluster": cluster,
            "task": {"type": "worker", "index": 1},
            "environment": "cloud",
        },
    }


def test_tf_config_is_the_only_variable_and_is_compact_json_in_struct_order() -> None:
    plan = plan_of("TF", 1, name="job")
    env = env_of(plan)["job-worker-0"]
    assert set(env) == {"TF_CONFIG"}
    assert env["TF_CONFIG"] == (
        '{"cluster":{"chief":["10.0.0.1:2222"],"worker":["10.0.0.2:2223"]},'
        '"task":{"type":"worker","index":0},"environment":"cloud"}'
    )


@pytest.mark.parametrize("workers", [1, 4, 11])
def test_workers_are_listed_in_index_order(workers: int) -> None:
    plan = plan_of("TF", workers, name="job")
    endpoints = endpoints_of(plan)
    expected = [str(endpoints[f"job-worker-{i}"]) for i in range(workers)]
    for config in configs_of(plan).values():
        assert config["cluster"]["worker"] == expected
        assert len(config["cluster"]["chief"]) == 1


def test_each_task_finds_its_own_address_in_the_cluster() -> None:
    plan = plan_of("TF", 3)
    endpoints = endpoints_of(plan)
    for replica in plan.replicas:
        config = json.loads(tensorflow.environment(plan, replica, endpoints)["TF_CONFIG"])
        task = config["task"]
        assert config["cluster"][task["type"]][task["index"]] == str(endpoints[replica.pod_name])


def test_a_single_replica_job_is_not_distributed_and_gets_no_tf_config() -> None:
    plan = plan_of("TF", 1, name="job")
    chief_only = dataclasses.replace(plan, replicas=(plan.leader,))
    assert chief_only.leader.role is Role.CHIEF
    assert tensorflow.environment(chief_only, chief_only.leader, endpoints_of(chief_only)) == {}
