"""PyTorchJob wiring (frameworks/pytorch.py) against what the Kubeflow operator injects
(shared k8s/kubeflow-kai-facts.md §1.2): MASTER_ADDR/PORT, WORLD_SIZE, RANK, the PET_*
variables torchrun reads, elastic rendezvous on worker-0 (worker pods only, no master), and
PYTHONUNBUFFERED."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.domain.plan import ReplicaPlan
from lockstep.frameworks import pytorch
from lockstep.frameworks.endpoints import Endpoint
from lockstep.frameworks.registry import wiring_for
from lockstep.schemas.distributed import DistributedFramework
from tests.unit.specs import plan_of


def endpoints_of(plan: ReplicaPlan) -> dict[str, Endpoint]:
    """A distinct host and port per pod, so a test can tell which pod a variable points at."""
    return {
        replica.pod_name: Endpoint(f"10.0.0.{i + 1}", 23456 + i)
        for i, replica in enumerate(plan.replicas)
    }


def env_of(plan: ReplicaPlan) -> dict[str, dict[str, str]]:
    endpoints = endpoints_of(plan)
    return {r.pod_name: pytorch.environment(plan, r, endpoints) for r in plan.replicas}


def test_registered_as_the_pytorch_wiring() -> None:
    assert wiring_for(DistributedFramework.PYTORCH) is pytorch.environment


def test_every_pod_points_at_the_master() -> None:
    plan = plan_of("PyTorch", 3, name="job")
    for name, env in env_of(plan).items():
        assert env["MASTER_ADDR"] == "10.0.0.1", name
        assert env["MASTER_PORT"] == "23456", name
        assert env["PET_MASTER_ADDR"] == env["MASTER_ADDR"]
        assert env["PET_MASTER_PORT"] == env["MASTER_PORT"]
        assert env["PYTHONUNBUFFERED"] == "1"


@pytest.mark.parametrize("workers", [1, 2, 5])
def test_world_size_counts_master_and_workers(workers: int) -> None:
    plan = plan_of("PyTorch", workers)
    for env in env_of(plan).values():
        assert env["WORLD_SIZE"] == str(workers + 1)
        assert env["PET_NNODES"] == str(workers + 1)


def test_rank_is_master_index_then_worker_index_plus_one() -> None:
    plan = plan_of("PyTorch", 3, name="job")
    env = env_of(plan)
    expected = {"job-master-0": "0", "job-worker-0": "1", "job-worker-1": "2", "job-worker-2": "3"}
    assert {name: e["RANK"] for name, e in env.items()} == expected
    assert {name: e["PET_NODE_RANK"] for name, e in env.items()} == expected


def test_ranks_are_unique_and_dense() -> None:
    plan = plan_of("PyTorch", 6)
    ranks = sorted(int(e["RANK"]) for e in env_of(plan).values())
    assert ranks == list(range(len(plan.replicas)))


def test_without_elastic_policy_there_is_no_rendezvous() -> None:
    for env in env_of(plan_of("PyTorch", 2)).values():
        assert "PET_RDZV_BACKEND" not in env
        assert "PET_RDZV_ENDPOINT" not in env


@pytest.mark.parametrize(
    ("workers", "elastic", "nnodes"),
    [
        (2, {"minReplicas": 2, "maxReplicas": 2}, "2:2"),
        (2, {"minReplicas": 1, "maxReplicas": 4}, "1:4"),
        (2, {"minReplicas": 2}, "2:2"),
        (3, {"maxReplicas": 3}, "3:3"),
        (1, {"minReplicas": 1}, "1:1"),
    ],
)
def test_elastic_rendezvous_on_worker_zero(
    workers: int, elastic: dict[str, Any], nnodes: str
) -> None:
    """Worker pods only, as the operator wires a PyTorchJob without a Master: the rendezvous
    on worker-0, nnodes min:max counting exactly those pods, and no fixed-world variables
    (torchrun gives each process its RANK, WORLD_SIZE and MASTER_ADDR)."""
    plan = plan_of("PyTorch", workers, name="job", spec=elastic)
    worker_zero = endpoints_of(plan)["job-worker-0"]
    env = env_of(plan)
    assert sorted(env) == [f"job-worker-{i}" for i in range(workers)]
    for name, variables in env.items():
        assert variables == {
            "PYTHONUNBUFFERED": "1",
            "PET_RDZV_BACKEND": "c10d",
            "PET_RDZV_ENDPOINT": f"{worker_zero.host}:{worker_zero.port}",
            "PET_NNODES": nnodes,
        }, name


def test_torchrun_reads_the_elastic_wiring_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A bare `torchrun script.py` in any pod joins the c10d rendezvous on worker-0 with
    nnodes min:max: torchrun takes each option it is not given from PET_<OPTION>."""
    run = pytest.importorskip("torch.distributed.run")
    plan = plan_of("PyTorch", 2, name="job", spec={"minReplicas": 2, "maxReplicas": 3})
    assert len(plan.replicas) == 2  # worker pods only
    worker_zero = endpoints_of(plan)["job-worker-0"]
    for name, env in env_of(plan).items():
        with monkeypatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            patch.delenv("PET_NPROC_PER_NODE", raising=False)
            patch.setenv("PET_LOG_DIR", str(tmp_path))  # else torchrun makes a temporary one
            config, _, _ = run.config_from_args(run.get_args_parser().parse_args(["train.py"]))
        assert config.rdzv_backend == "c10d", name
        assert config.rdzv_endpoint == f"{worker_zero.host}:{worker_zero.port}", name
        assert (config.min_nodes, config.max_nodes) == (2, 3), name
        # no nprocPerNode in the request, so no PET_NPROC_PER_NODE: one process per pod
        assert config.nproc_per_node == 1, name


def test_exactly_the_documented_variables() -> None:
    plan = plan_of("PyTorch", 1)
    static = {
        "PYTHONUNBUFFERED",
        "MASTER_ADDR",
        "MASTER_PORT",
        "PET_MASTER_ADDR",
        "PET_MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "PET_NODE_RANK",
        "PET_NNODES",
    }
    for env in env_of(plan).values():
        assert set(env) == static
    elastic = plan_of("PyTorch", 1, spec={"minReplicas": 1, "maxReplicas": 2})
    for env in env_of(elastic).values():
        assert set(env) == {
            "PYTHONUNBUFFERED",
            "PET_RDZV_BACKEND",
            "PET_RDZV_ENDPOINT",
            "PET_NNODES",
        }


def test_values_are_strings() -> None:
    for env in env_of(plan_of("PyTorch", 2, spec={"minReplicas": 1})).values():
        assert all(isinstance(value, str) for value in env.values())
