"""XGBoostJob wiring (frameworks/xgboost.py) against what the Kubeflow operator injects (shared
k8s/kubeflow-kai-facts.md §1.2): MASTER_ADDR/PORT, WORLD_SIZE, RANK (master 0, worker i → i+1),
PYTHONUNBUFFERED, and with more than one replica WORKER_ADDRS (the workers' hosts, total - 1
entries) and WORKER_PORT (each pod's own port, since local pods share a host); no DMLC_*."""

from __future__ import annotations

import pytest

from lockstep.domain.plan import ReplicaPlan
from lockstep.frameworks import xgboost
from lockstep.frameworks.endpoints import Endpoint
from lockstep.frameworks.registry import wiring_for
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.specs import plan_of


def endpoints_of(plan: ReplicaPlan) -> dict[str, Endpoint]:
    """A distinct host and port per pod, so a test can tell which pod a variable points at."""
    return {
        replica.pod_name: Endpoint(f"10.0.0.{i + 1}", 9999 + i)
        for i, replica in enumerate(plan.replicas)
    }


def env_of(plan: ReplicaPlan) -> dict[str, dict[str, str]]:
    endpoints = endpoints_of(plan)
    return {r.pod_name: xgboost.environment(plan, r, endpoints) for r in plan.replicas}


def test_registered_as_the_xgboost_wiring() -> None:
    assert wiring_for(DistributedFramework.XGBOOST) is xgboost.environment


def test_every_variable_of_every_pod() -> None:
    plan = plan_of("XGBoost", 2, name="job")
    common = {
        "MASTER_ADDR": "10.0.0.1",
        "MASTER_PORT": "9999",
        "WORLD_SIZE": "3",
        "PYTHONUNBUFFERED": "1",
        "WORKER_ADDRS": "10.0.0.2,10.0.0.3",
    }
    assert env_of(plan) == {
        "job-master-0": {**common, "RANK": "0", "WORKER_PORT": "9999"},
        "job-worker-0": {**common, "RANK": "1", "WORKER_PORT": "10000"},
        "job-worker-1": {**common, "RANK": "2", "WORKER_PORT": "10001"},
    }


@pytest.mark.parametrize("workers", [1, 3, 6])
def test_worker_addrs_lists_one_entry_per_worker(workers: int) -> None:
    plan = plan_of("XGBoost", workers)
    for env in env_of(plan).values():
        assert len(env["WORKER_ADDRS"].split(",")) == len(plan.replicas) - 1 == workers
        assert env["WORLD_SIZE"] == str(workers + 1)


def test_on_loopback_every_worker_addr_is_loopback_and_ports_differ() -> None:
    plan = plan_of("XGBoost", 3, name="job")
    endpoints = {r.pod_name: Endpoint("127.0.0.1", 30000 + i) for i, r in enumerate(plan.replicas)}
    envs = [xgboost.environment(plan, r, endpoints) for r in plan.replicas]
    assert {e["WORKER_ADDRS"] for e in envs} == {"127.0.0.1,127.0.0.1,127.0.0.1"}
    assert [e["WORKER_PORT"] for e in envs] == ["30000", "30001", "30002", "30003"]


def test_ranks_are_master_zero_then_worker_index_plus_one() -> None:
    plan = plan_of("XGBoost", 4, name="job")
    ranks = {name: env["RANK"] for name, env in env_of(plan).items()}
    assert ranks == {"job-master-0": "0", **{f"job-worker-{i}": str(i + 1) for i in range(4)}}


def test_no_dmlc_variables_in_v1() -> None:
    for env in env_of(plan_of("XGBoost", 2)).values():
        assert not [key for key in env if key.startswith("DMLC_")]
