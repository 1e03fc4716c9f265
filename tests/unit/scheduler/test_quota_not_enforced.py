"""A CPU or memory quota that `resources[]` leaves out (or whose `deserved` is null) is not
enforced, as Run:ai reads it: deserved unlimited — while a GPU quota left out is 0, the
document's default. From the stored wire form through the scheduling cycle (non-preemptible
gangs of a project that sets only GPUs run within its GPUs, the one beyond them waits naming
the GPU quota; the shares stay finite and are stored with -1), to the KAI and Volcano queues
(validated against the CRD and Volcano's spec)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from lockstep.domain.cluster import Gpu, Node
from lockstep.domain.organization import Department, Project
from lockstep.domain.quotas import UNLIMITED, Quota, Resource, quotas_of
from lockstep.reconciler.shares import shares_to_store, snapshot_of
from lockstep.runtimes.kubernetes.queues import queue_manifests
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.scheduler.cycle import schedule
from lockstep.scheduler.decisions import PhaseReason, Waiting
from lockstep.scheduler.gang.candidates import Candidate, Holder
from lockstep.scheduler.gang.needs import GpuNeed, PodNeed
from lockstep.scheduler.gang.shape import GangShape
from lockstep.scheduler.nodes.placement import place
from lockstep.scheduler.nodes.usage import Usage
from lockstep.scheduler.quota.organization import Organization, OrgType, OrgUnit
from tests.unit.k8s_schemas import schema_errors

NOW = datetime(2026, 12, 1, tzinfo=UTC)
GPU_ONLY: list[dict[str, Any]] = [{"gpu": {"deserved": 2, "limit": -1, "overQuotaWeight": 1}}]
"""What the defect's project `team-f` sets: a GPU quota, no `cpu`, no `memory`."""


def node(name: str = "n0") -> Node:
    return Node(name, "default", Decimal(64), Decimal(2**40), tuple(Gpu(g) for g in range(8)))


@pytest.mark.parametrize(
    ("entry", "resource", "expected"),
    [
        # left out: CPU and memory not enforced, GPUs 0 (the document's default)
        ({"gpu": {"deserved": 2}}, Resource.CPU, Quota(UNLIMITED)),
        ({"gpu": {"deserved": 2}}, Resource.MEMORY, Quota(UNLIMITED)),
        ({"cpu": {"deserved": 1000}}, Resource.GPU, Quota(0.0)),
        # deserved null or absent: not enforced, whatever else is given
        ({"cpu": {"deserved": None, "limit": 4000}}, Resource.CPU, Quota(UNLIMITED, 4000.0)),
        (
            {"memory": {"units": "GB", "overQuotaWeight": 2}},
            Resource.MEMORY,
            Quota(UNLIMITED, weight=2),
        ),
        ({"gpu": {"limit": 4}}, Resource.GPU, Quota(0.0, 4.0)),
        # given: enforced as before
        ({"cpu": {"deserved": 0}}, Resource.CPU, Quota(0.0)),
        ({"memory": {"deserved": 2, "units": "GB"}}, Resource.MEMORY, Quota(2e9)),
    ],
)
def test_a_quota_left_out_is_read_as_the_contract_says(
    entry: dict[str, Any], resource: Resource, expected: Quota
) -> None:
    assert quotas_of([entry]).in_pool("default").of(resource) == expected


def test_a_pool_the_resources_do_not_name_still_deserves_nothing() -> None:
    named = [{"nodePool": {"id": "1", "name": "a100"}, "gpu": {"deserved": 2}}]
    other = quotas_of(named).in_pool("h100")
    assert (other.gpu, other.cpu, other.memory) == (Quota(0.0), Quota(0.0), Quota(0.0))
    assert quotas_of(named).in_pool("a100").cpu == Quota(UNLIMITED)


def build_gang(workload_id: str) -> Candidate:
    """The defect's workload: a 0-GPU master and one 1-GPU worker, each asking 0.01 cores,
    of priority class `build` (not preemptible)."""
    needs = [
        PodNeed(f"{workload_id}-master-0", cpu=Decimal("0.01")),
        PodNeed(f"{workload_id}-worker-0", cpu=Decimal("0.01"), gpu=GpuNeed(devices=1)),
    ]
    return Candidate(
        workload_id,
        workload_id,
        GangShape.of(needs),
        project_id="f",
        preemptible=False,
    )


def gpu_only_organization() -> Organization:
    return Organization(
        departments={"d": OrgUnit("d", "research", quotas_of([{"gpu": {"deserved": 8}}]))},
        projects={"f": OrgUnit("f", "team-f", quotas_of(GPU_ONLY), parent="d")},
    )


def test_a_gpu_only_project_runs_its_non_preemptible_gangs_within_its_gpus() -> None:
    usage = Usage([node()])
    heads = [build_gang(f"b{i}") for i in range(3)]
    decisions = schedule(usage, heads, organization=gpu_only_organization())
    assert list(decisions.admitted) == ["b0", "b1"]
    assert decisions.waiting == {
        "b2": Waiting(
            "project team-f has 2 deserved GPU in pool default (2 held by non-preemptible "
            "workloads) and a non-preemptible workload runs only within its deserved quota; "
            "this one asks 1 GPU",
            PhaseReason.NON_PREEMPTIBLE_OVER_QUOTA,
            "default",
            OrgType.PROJECT,
        )
    }
    # Every share the cycle found is a finite number but the deserved CPU and memory, which
    # are unlimited; stored, those read -1 and the rest are as found.
    for shares in (decisions.shares["f"], decisions.department_shares["d"]):
        for resource, share in shares["default"].items():
            figures = (share.fair_share, share.allocated, share.requested)
            assert all(math.isfinite(value) for value in figures), (resource, share)
            assert math.isinf(share.deserved) is (resource is not Resource.GPU)
    cpu = decisions.shares["f"]["default"][Resource.CPU]
    assert (cpu.allocated, cpu.requested, cpu.fair_share) == (40.0, 60.0, 60.0)  # millicores
    stored = shares_to_store(decisions, {})
    assert stored[("project", "f", "default")]["cpu"] == {
        "deserved": -1,
        "fairShare": 60.0,
        "allocated": 40.0,
        "requested": 60.0,
    }
    assert stored[("department", "d", "default")]["gpu"]["deserved"] == 8
    assert all(
        math.isfinite(value)
        for by_resource in stored.values()
        for figures in by_resource.values()
        for value in figures.values()
    )


def test_beyond_what_the_nodes_have_a_cpu_quota_not_enforced_is_not_the_reason() -> None:
    # team-f (GPUs only) holds 40 of the node's 64 cores, team-g 10; team-f's next gang asks
    # 30 cores: the nodes, not a CPU quota team-f does not have, hold it back.
    usage = Usage([node()])
    organization = Organization(
        projects={
            "f": OrgUnit("f", "team-f", quotas_of(GPU_ONLY)),
            "g": OrgUnit("g", "team-g", quotas_of(GPU_ONLY)),
        }
    )
    holders = []
    for workload_id, project, cores in (("f0", "f", 40), ("g0", "g", 10)):
        need = PodNeed(f"{workload_id}-0", cpu=Decimal(cores))
        placed = place(usage, [need])
        assert isinstance(placed, dict)
        holders.append(
            Holder(workload_id, workload_id, [need], placed, 50, True, project_id=project)
        )
    wide = Candidate("f1", "f1", GangShape.of([PodNeed("f1-0", cpu=Decimal(30))]), project_id="f")
    decisions = schedule(usage, [wide], holders, organization=organization)
    (waiting,) = decisions.waiting.values()
    assert waiting.message.startswith("waiting for resources: "), waiting
    assert "quota" not in waiting.message and waiting.reason is None


def test_a_department_without_resources_deserves_what_its_gpu_only_projects_do() -> None:
    department = Department(
        id="d", name="research", cluster_id="c", created_by="a", created_at=NOW, updated_at=NOW
    )
    project = Project(
        id="f",
        name="team-f",
        cluster_id="c",
        department_id="d",
        created_by="a",
        created_at=NOW,
        updated_at=NOW,
        resources=GPU_ONLY,
    )
    organization = snapshot_of([project], [department], ["default"])
    together = organization.departments["d"].quotas.in_pool("default")
    assert together.gpu.deserved == 2
    assert together.cpu.deserved == UNLIMITED and together.memory.deserved == UNLIMITED


def gpu_only_queues(scheduler: SchedulerKind) -> list[dict[str, Any]]:
    department = Department(
        id="3",
        name="research",
        cluster_id="c",
        created_by="a",
        created_at=NOW,
        updated_at=NOW,
        resources=[{"gpu": {"deserved": 8}}],
    )
    project = Project(
        id="7",
        name="team-f",
        cluster_id="c",
        department_id="3",
        created_by="a",
        created_at=NOW,
        updated_at=NOW,
        resources=GPU_ONLY,
    )
    return queue_manifests([department], [project], KubernetesSettings(scheduler=scheduler))


def test_a_gpu_only_project_is_a_kai_queue_unlimited_in_cpu_and_memory() -> None:
    queues = gpu_only_queues(SchedulerKind.KAI)
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    for queue in queues:
        assert schema_errors(queue) == []
        resources = queue["spec"]["resources"]
        assert resources["cpu"] == unlimited and resources["memory"] == unlimited
    (team,) = [q for q in queues if q["metadata"]["name"] == "team-f"]
    assert team["spec"]["resources"]["gpu"] == {"quota": 2, "limit": -1, "overQuotaWeight": 1}


def test_a_gpu_only_project_is_a_volcano_queue_bounding_gpus_only() -> None:
    for queue in gpu_only_queues(SchedulerKind.VOLCANO):
        assert schema_errors(queue) == []
        assert set(queue["spec"]["deserved"]) == {"nvidia.com/gpu"}
        assert "capability" not in queue["spec"]
