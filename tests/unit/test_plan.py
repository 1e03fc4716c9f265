"""The replica plan (domain/plan.py): pods and their names for all five frameworks, the leader
of each, the spec each replica runs, the operators' defaults, elasticity and the longest pod
name suffix the name rules rely on."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.plan import (
    Role,
    build_plan,
    leader_spec,
    longest_pod_name_suffix,
    pod_name,
)
from lockstep.schemas.distributed import CleanPodPolicy, DistributedFramework, PodSpec, pod_wire
from lockstep.schemas.pod import RestartPolicy
from tests.unit.specs import BASE_SPEC, master_spec, plan_of, worker_spec

FRAMEWORKS = [framework.value for framework in DistributedFramework]

# framework → the pods of a plan with three workers, leader first (Kubeflow naming,
# `<job>-<lower-case replica type>-<index>`)
THREE_WORKERS: dict[str, list[str]] = {
    "PyTorch": ["job-master-0", "job-worker-0", "job-worker-1", "job-worker-2"],
    "XGBoost": ["job-master-0", "job-worker-0", "job-worker-1", "job-worker-2"],
    "TF": ["job-chief-0", "job-worker-0", "job-worker-1", "job-worker-2"],
    "MPI": ["job-launcher-0", "job-worker-0", "job-worker-1", "job-worker-2"],
    # JAX has no leader of its own: worker-0 coordinates workers 0..N
    "JAX": ["job-worker-0", "job-worker-1", "job-worker-2", "job-worker-3"],
}


@pytest.mark.parametrize(("framework", "names"), THREE_WORKERS.items())
def test_pod_names_in_rank_order(framework: str, names: list[str]) -> None:
    plan = plan_of(framework, 3, name="job")
    assert [replica.pod_name for replica in plan.replicas] == names
    assert plan.workload_name == "job"
    assert plan.framework is DistributedFramework(framework)


@pytest.mark.parametrize(
    ("framework", "role"),
    [
        ("PyTorch", Role.MASTER),
        ("XGBoost", Role.MASTER),
        ("TF", Role.CHIEF),
        ("MPI", Role.LAUNCHER),
        ("JAX", Role.WORKER),
    ],
)
def test_leader_role(framework: str, role: Role) -> None:
    plan = plan_of(framework, 2, name="job")
    assert plan.leader is plan.replicas[0]
    assert plan.leader.role is role
    assert plan.leader.index == 0
    assert plan.leader.is_leader
    assert [replica.is_leader for replica in plan.replicas[1:]] == [False] * (
        len(plan.replicas) - 1
    )


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_replica_fields_agree_with_the_pod_name(framework: str) -> None:
    plan = plan_of(framework, 4, name="job")
    for replica in plan.replicas:
        assert replica.pod_name == f"job-{replica.role.value}-{replica.index}"


@pytest.mark.parametrize("framework", ["PyTorch", "XGBoost", "TF", "MPI"])
@pytest.mark.parametrize("workers", [1, 2, 7])
def test_a_leader_plus_num_workers(framework: str, workers: int) -> None:
    plan = plan_of(framework, workers)
    assert len(plan.replicas) == workers + 1
    assert [r.index for r in plan.workers] == list(range(workers))
    assert all(r.role is Role.WORKER for r in plan.workers)
    assert plan.leader not in plan.workers


@pytest.mark.parametrize("workers", [1, 2, 7])
def test_jax_worker_zero_coordinates_workers_zero_to_n(workers: int) -> None:
    plan = plan_of("JAX", workers)
    assert len(plan.replicas) == workers + 1
    assert [r.index for r in plan.workers] == list(range(workers + 1))
    assert plan.workers[0] is plan.leader


def test_replica_lookup_by_pod_name() -> None:
    plan = plan_of("PyTorch", 2, name="job")
    assert plan.replica("job-worker-1") is plan.replicas[2]
    assert plan.replica("job-master-0") is plan.leader
    with pytest.raises(KeyError):
        plan.replica("job-worker-2")


def test_pod_name() -> None:
    assert pod_name("my-run", Role.LAUNCHER, 0) == "my-run-launcher-0"
    assert pod_name("x", Role.WORKER, 12) == "x-worker-12"


# --- defaults --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("framework", "policy"),
    [
        ("PyTorch", RestartPolicy.ON_FAILURE),
        ("XGBoost", RestartPolicy.NEVER),
        ("TF", RestartPolicy.NEVER),
        ("MPI", RestartPolicy.NEVER),
        ("JAX", RestartPolicy.NEVER),
    ],
)
def test_default_restart_policy_is_the_operators(framework: str, policy: RestartPolicy) -> None:
    assert plan_of(framework).restart_policy is policy


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("policy", list(RestartPolicy))
def test_explicit_restart_policy_wins(framework: str, policy: RestartPolicy) -> None:
    assert plan_of(framework, spec={"restartPolicy": policy.value}).restart_policy is policy


@pytest.mark.parametrize(("given", "expected"), [(None, 6), (0, 0), (1, 1), (20, 20)])
def test_backoff_limit(given: int | None, expected: int) -> None:
    spec: dict[str, Any] = {} if given is None else {"backoffLimit": given}
    assert plan_of(spec=spec).backoff_limit == expected


def test_clean_pod_policy_and_slots_defaults() -> None:
    plan = plan_of("MPI")
    assert plan.clean_pod_policy is CleanPodPolicy.NONE
    assert plan.slots_per_worker == 1
    plan = plan_of("MPI", spec={"cleanPodPolicy": "All", "slotsPerWorker": 4})
    assert plan.clean_pod_policy is CleanPodPolicy.ALL
    assert plan.slots_per_worker == 4


# --- elasticity -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (None, None, (None, None)),
        (1, 4, (1, 4)),
        (2, None, (2, 2)),  # the operator copies the one that is set into the other
        (None, 3, (3, 3)),
    ],
)
def test_pytorch_elastic_bounds(
    low: int | None, high: int | None, expected: tuple[int | None, int | None]
) -> None:
    spec = {
        key: value
        for key, value in (("minReplicas", low), ("maxReplicas", high))
        if value is not None
    }
    plan = plan_of("PyTorch", 2, spec=spec)
    assert (plan.min_workers, plan.max_workers) == expected
    assert plan.is_elastic is (expected != (None, None))


@pytest.mark.parametrize("framework", ["XGBoost", "TF", "MPI", "JAX"])
def test_only_pytorch_is_elastic(framework: str) -> None:
    plan = plan_of(framework, 2, spec={"minReplicas": 2, "maxReplicas": 2})
    assert plan.min_workers is None
    assert plan.max_workers is None
    assert not plan.is_elastic


# numWorkers, minReplicas, maxReplicas → the pods (leader first), required_pods, and bounds
ELASTIC_PLANS: list[tuple[int, dict[str, int], list[str], int, tuple[int, int]]] = [
    (2, {"minReplicas": 2, "maxReplicas": 2}, ["job-worker-0", "job-worker-1"], 2, (2, 2)),
    (
        3,
        {"minReplicas": 1, "maxReplicas": 8},
        ["job-worker-0", "job-worker-1", "job-worker-2"],
        1,
        (1, 8),
    ),
    (1, {"minReplicas": 1}, ["job-worker-0"], 1, (1, 1)),
    (2, {"maxReplicas": 2}, ["job-worker-0", "job-worker-1"], 2, (2, 2)),
]


@pytest.mark.parametrize(("workers", "elastic", "names", "required", "bounds"), ELASTIC_PLANS)
def test_an_elastic_plan_is_its_worker_pods_only(
    workers: int,
    elastic: dict[str, int],
    names: list[str],
    required: int,
    bounds: tuple[int, int],
) -> None:
    """minReplicas/maxReplicas count worker pods, each a node of the rendezvous: no master,
    worker-0 leads (it hosts the rendezvous), every pod runs the workers' spec."""
    plan = plan_of("PyTorch", workers, name="job", spec=elastic, same_as_worker=True)
    assert [replica.pod_name for replica in plan.replicas] == names
    assert [replica.role for replica in plan.replicas] == [Role.WORKER] * workers
    assert [replica.is_leader for replica in plan.replicas] == [True] + [False] * (workers - 1)
    assert plan.leader.pod_name == "job-worker-0"
    assert all(replica.spec is plan.leader.spec for replica in plan.replicas)
    assert plan.required_pods == required
    assert (plan.min_workers, plan.max_workers) == bounds
    assert len(plan.replicas) <= bounds[1]


def test_a_fixed_pytorch_plan_keeps_its_master() -> None:
    plan = plan_of("PyTorch", 3, name="job")
    assert plan.leader.pod_name == "job-master-0"
    assert len(plan.replicas) == 4


# --- which spec each replica runs ----------------------------------------------------------

MASTER = {"image": "master:1", "command": "python", "args": "lead.py"}


def _wire(spec: PodSpec) -> dict[str, Any]:
    """What the pod runs: the spec's pod fields, as sent."""
    return pod_wire(spec)


def test_same_as_worker_leader_runs_the_worker_spec_without_topology() -> None:
    plan = plan_of("PyTorch", 2, same_as_worker=True)
    expected = {key: BASE_SPEC[key] for key in ("image", "command", "args")}
    assert _wire(plan.leader.spec) == expected
    assert _wire(plan.workers[0].spec) == expected


@pytest.mark.parametrize("same", [False, None])
def test_own_master_spec_runs_on_the_leader_only(same: bool | None) -> None:
    plan = plan_of("TF", 2, same_as_worker=same, master=MASTER)
    assert _wire(plan.leader.spec) == MASTER
    for worker in plan.workers:
        assert worker.spec.image == BASE_SPEC["image"]
        assert worker.spec.args == BASE_SPEC["args"]


def test_same_as_worker_true_ignores_a_given_master_spec() -> None:
    plan = plan_of("PyTorch", 2, same_as_worker=True, master=MASTER)
    assert plan.leader.spec.image == BASE_SPEC["image"]


def test_no_master_spec_and_no_flag_means_the_worker_spec() -> None:
    plan = plan_of("XGBoost", 2)
    assert _wire(plan.leader.spec) == _wire(plan.workers[0].spec)


def test_jax_leader_runs_the_worker_spec_like_every_worker() -> None:
    plan = plan_of("JAX", 2)
    assert {_wire(replica.spec)["image"] for replica in plan.replicas} == {BASE_SPEC["image"]}


@pytest.mark.parametrize(
    ("same", "has_master", "uses_master"),
    [
        (True, True, False),
        (True, False, False),
        (None, True, True),
        (None, False, False),
        (False, True, True),
    ],
)
def test_leader_spec(same: bool | None, has_master: bool, uses_master: bool) -> None:
    worker = worker_spec({**BASE_SPEC, "numWorkers": 3})
    master = master_spec(MASTER) if has_master else None
    chosen = leader_spec(worker, master_spec_same_as_worker=same, master_spec=master)
    if uses_master:
        assert chosen is master
    else:
        assert _wire(chosen) == {key: BASE_SPEC[key] for key in ("image", "command", "args")}
        assert "numWorkers" not in _wire(chosen)


def test_leader_spec_refuses_a_missing_master_spec() -> None:
    worker = worker_spec(BASE_SPEC)
    with pytest.raises(ValueError, match="masterSpec is required"):
        leader_spec(worker, master_spec_same_as_worker=False, master_spec=None)


def test_worker_pod_spec_keeps_only_pod_fields_that_were_set() -> None:
    worker = worker_spec(
        {**BASE_SPEC, "minReplicas": 1, "backoffLimit": 2, "restartPolicy": "Never"}
    )
    plan = build_plan("job", worker, master_spec_same_as_worker=None, master_spec=None)
    assert _wire(plan.workers[0].spec) == {
        "image": "python:3.11",
        "command": "python",
        "args": "-c pass",
        "backoffLimit": 2,
        "restartPolicy": "Never",
    }


# --- longest pod name suffix -----------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("workers", [1, 2, 9, 10, 11, 99, 100, 1000])
def test_longest_suffix_is_the_longest_real_pod_name(framework: str, workers: int) -> None:
    plan = plan_of(framework, workers, name="job")
    longest = max(len(replica.pod_name) for replica in plan.replicas) - len("job")
    suffix = longest_pod_name_suffix(DistributedFramework(framework), workers)
    assert len(suffix) == longest
    assert "job" + suffix in {replica.pod_name for replica in plan.replicas}


@pytest.mark.parametrize(
    ("framework", "workers", "suffix"),
    [
        (DistributedFramework.MPI, 1, "-launcher-0"),
        (DistributedFramework.TF, 1, "-worker-0"),  # longer than -chief-0
        (DistributedFramework.PYTORCH, 11, "-worker-10"),
        (DistributedFramework.JAX, 10, "-worker-10"),
        (DistributedFramework.XGBOOST, 100, "-worker-99"),
    ],
)
def test_longest_suffix_examples(
    framework: DistributedFramework, workers: int, suffix: str
) -> None:
    assert longest_pod_name_suffix(framework, workers) == suffix
