"""JAXJob wiring (frameworks/jax.py) against what the Kubeflow operator injects (shared
k8s/kubeflow-kai-facts.md §1.2): worker-0 coordinates, COORDINATOR_ADDRESS is a host without a
port, NUM_PROCESSES counts every worker, PROCESS_ID is the worker's index."""

from __future__ import annotations

import pytest

from lockstep.domain.plan import ReplicaPlan
from lockstep.frameworks import jax
from lockstep.frameworks.endpoints import Endpoint
from lockstep.frameworks.registry import wiring_for
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.specs import plan_of


def endpoints_of(plan: ReplicaPlan) -> dict[str, Endpoint]:
    """A distinct host and port per pod, so a test can tell which pod a variable points at."""
    return {
        replica.pod_name: Endpoint(f"10.0.0.{i + 1}", 6666 + i)
        for i, replica in enumerate(plan.replicas)
    }


def env_of(plan: ReplicaPlan) -> dict[str, dict[str, str]]:
    endpoints = endpoints_of(plan)
    return {r.pod_name: jax.environment(plan, r, endpoints) for r in plan.replicas}


def test_registered_as_the_jax_wiring() -> None:
    assert wiring_for(DistributedFramework.JAX) is jax.environment


def test_every_variable_of_every_worker() -> None:
    plan = plan_of("JAX", 2, name="job")
    assert env_of(plan) == {
        f"job-worker-{i}": {
            "PYTHONUNBUFFERED": "1",
            "COORDINATOR_ADDRESS": "10.0.0.1",
            "COORDINATOR_PORT": "6666",
            "NUM_PROCESSES": "3",
            "PROCESS_ID": str(i),
        }
        for i in range(3)
    }


def test_the_coordinator_address_has_no_port() -> None:
    plan = plan_of("JAX", 1, name="job")
    endpoints = {r.pod_name: Endpoint("127.0.0.1", 40000 + r.index) for r in plan.replicas}
    for replica in plan.replicas:
        env = jax.environment(plan, replica, endpoints)
        assert env["COORDINATOR_ADDRESS"] == "127.0.0.1"
        assert env["COORDINATOR_PORT"] == "40000"


@pytest.mark.parametrize("workers", [1, 2, 7])
def test_process_ids_are_dense_and_counted_by_num_processes(workers: int) -> None:
    plan = plan_of("JAX", workers)
    env = env_of(plan)
    assert sorted(int(e["PROCESS_ID"]) for e in env.values()) == list(range(workers + 1))
    assert {e["NUM_PROCESSES"] for e in env.values()} == {str(workers + 1)}


def test_worker_zero_coordinates_even_when_listed_by_name() -> None:
    plan = plan_of("JAX", 10, name="job")
    env = env_of(plan)
    assert env["job-worker-10"]["PROCESS_ID"] == "10"
    assert env["job-worker-10"]["COORDINATOR_PORT"] == str(endpoints_of(plan)["job-worker-0"].port)
