"""The organisation's scheduler queues, from tables: a department and its projects as KAI
Queues (quota, limit, overQuotaWeight per resource in KAI's units, -1 unlimited, the
department the parent, the over-quota priority) and as Volcano Queues (deserved, capability,
weight, parent); every rendered queue validates against KAI's CRD (tests/reference/k8s/crds)
or Volcano's Queue spec; and what a sync applies and deletes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import RuntimeKind, Settings
from lockstep.domain.organization import Department, Project
from lockstep.domain.quotas import unbounded_resources
from lockstep.runtimes.kubernetes.queues import (
    VOLCANO_QUEUE_API,
    queue_changes,
    queue_manifests,
    queue_priority,
    workload_queues,
)
from lockstep.runtimes.kubernetes.settings import KubernetesSettings, SchedulerKind
from lockstep.runtimes.registry import renderers
from tests.unit.k8s import workload_of
from tests.unit.k8s_schemas import metadata_errors, schema_errors
from tests.unit.specs import request_body

NOW = datetime(2026, 12, 1, tzinfo=UTC)
KAI = KubernetesSettings(scheduler=SchedulerKind.KAI)
VOLCANO = KubernetesSettings(scheduler=SchedulerKind.VOLCANO)

TEAM_RESOURCES: list[dict[str, Any]] = [
    {
        "nodePool": {"id": "1", "name": "default"},
        "gpu": {"deserved": 8, "limit": 16, "overQuotaWeight": 2},
        "cpu": {"deserved": 32000, "limit": -1},
        "memory": {"deserved": 64, "limit": 128, "units": "GB"},
        "priority": "High",
    },
    {
        "nodePool": {"id": "2", "name": "a100"},
        "gpu": {"deserved": 4, "limit": 4, "overQuotaWeight": 1},
    },
]


def department(name: str = "research", resources: list[dict[str, Any]] | None = None) -> Department:
    return Department(
        id="3",
        name=name,
        cluster_id="c",
        created_by="admin",
        created_at=NOW,
        updated_at=NOW,
        resources=resources if resources is not None else [{"gpu": {"deserved": 24}}],
    )


def project(
    name: str = "team-a", resources: list[dict[str, Any]] | None = None, department_id: str = "3"
) -> Project:
    return Project(
        id="7",
        name=name,
        cluster_id="c",
        department_id=department_id,
        created_by="admin",
        created_at=NOW,
        updated_at=NOW,
        resources=resources if resources is not None else TEAM_RESOURCES,
    )


def spec_of(manifests: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [m for m in manifests if m["metadata"]["name"] == name]
    return dict(found["spec"])


def test_a_department_and_its_project_are_kai_queues_with_the_pools_quotas() -> None:
    queues = queue_manifests([department()], [project()], KAI)
    assert [q["metadata"]["name"] for q in queues] == ["department.research", "team-a"]
    assert {q["apiVersion"] for q in queues} == {"scheduling.run.ai/v2"}
    assert spec_of(queues, "team-a") == {
        "displayName": "team-a",
        "parentQueue": "department.research",
        "priority": 150,
        "resources": {
            "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 2},
            "cpu": {"quota": 32000, "limit": -1, "overQuotaWeight": 1},
            "memory": {"quota": 64000, "limit": 128000, "overQuotaWeight": 1},
        },
    }
    parent = spec_of(queues, "department.research")
    assert "parentQueue" not in parent and "priority" not in parent
    assert parent["resources"]["gpu"] == {"quota": 24, "limit": -1, "overQuotaWeight": 1}
    # CPU and memory a unit does not give are not enforced: unlimited (-1), no limit, weight 1
    # (KAI must be told -1: a quota or limit it is not given reads 0).
    assert parent["resources"]["cpu"] == {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    labels = queues[1]["metadata"]["labels"]
    assert labels["lockstep.io/org-unit"] == "project" and labels["lockstep.io/org-unit-id"] == "7"


@pytest.mark.parametrize(
    ("memory", "quota"),
    [
        ({"deserved": 1, "units": "GB"}, 1000),
        ({"deserved": 500, "units": "MB"}, 500),
        ({"deserved": 1024, "units": "Mib"}, 1073.741824),
        ({"deserved": 1}, 1),  # no units: MB
        ({"deserved": -1, "units": "GB"}, -1),
    ],
)
def test_memory_is_in_kais_megabytes(memory: dict[str, Any], quota: float) -> None:
    resources = [{"gpu": {"deserved": 0}, "memory": memory}]
    (queue,) = workload_queues(None, project(resources=resources), KAI)
    assert queue["spec"]["resources"]["memory"]["quota"] == quota


def test_the_queues_carry_the_configured_pool() -> None:
    settings = KubernetesSettings(queue_pool="a100")
    queue = workload_queues(None, project(), settings)[0]
    assert queue["spec"]["resources"]["gpu"] == {"quota": 4, "limit": 4, "overQuotaWeight": 1}
    assert "priority" not in queue["spec"]
    other = workload_queues(None, project(), KubernetesSettings(queue_pool="h100"))[0]
    assert other["spec"]["resources"]["gpu"] == {"quota": 0, "limit": -1, "overQuotaWeight": 1}


def test_the_default_project_is_unlimited() -> None:
    queue = workload_queues(None, project("default", unbounded_resources()), KAI)[0]
    for resource in ("gpu", "cpu", "memory"):
        assert queue["spec"]["resources"][resource] == {
            "quota": -1,
            "limit": -1,
            "overQuotaWeight": 1,
        }


def test_a_fractional_gpu_quota_stays_a_fraction() -> None:
    queue = workload_queues(None, project(resources=[{"gpu": {"deserved": 0.5}}]), KAI)[0]
    assert queue["spec"]["resources"]["gpu"]["quota"] == 0.5


@pytest.mark.parametrize(
    ("priority", "expected"),
    [
        ("Normal", 100),
        ("lowest", 25),
        (" Highest ", 200),
        ("120", 120),
        ("-5", -5),
        ("urgent", None),
        ("99999999999", None),
        (None, None),
    ],
)
def test_over_quota_priority(priority: str | None, expected: int | None) -> None:
    assert queue_priority(priority) == expected


def test_volcano_queues_have_deserved_capability_weight_and_parent() -> None:
    queues = queue_manifests([department()], [project()], VOLCANO)
    assert {q["apiVersion"] for q in queues} == {VOLCANO_QUEUE_API}
    assert spec_of(queues, "team-a") == {
        "weight": 2,
        "reclaimable": True,
        "deserved": {"nvidia.com/gpu": "8", "cpu": "32000m", "memory": "64000000000"},
        "capability": {"nvidia.com/gpu": "16", "memory": "128000000000"},
        "parent": "department.research",
        "priority": 150,
    }
    assert spec_of(queues, "department.research") == {
        "weight": 1,
        "reclaimable": True,
        "deserved": {"nvidia.com/gpu": "24"},
    }


@pytest.mark.parametrize(("weight", "expected"), [(0, 1), (0.4, 1), (2.6, 3), (1e12, 2**31 - 1)])
def test_volcano_weight_is_an_integer_of_at_least_one(weight: float, expected: int) -> None:
    resources = [{"gpu": {"deserved": 1, "overQuotaWeight": weight}}]
    queue = workload_queues(None, project(resources=resources), VOLCANO)[0]
    assert queue["spec"]["weight"] == expected


def test_the_unlimited_default_project_has_no_bounds_on_volcano() -> None:
    queue = workload_queues(None, project("default", unbounded_resources()), VOLCANO)[0]
    assert queue["spec"] == {"weight": 1, "reclaimable": True}


@pytest.mark.parametrize(
    "settings",
    [
        KubernetesSettings(scheduler=SchedulerKind.DEFAULT),
        KubernetesSettings(scheduler=SchedulerKind.KAI, queue="shared"),
    ],
    ids=["default-scheduler", "one-configured-queue"],
)
def test_no_queues_without_a_queueing_scheduler_or_with_one_configured_queue(
    settings: KubernetesSettings,
) -> None:
    assert queue_manifests([department()], [project()], settings) == []
    assert workload_queues(department(), project(), settings) == []


ORGANISATIONS = [
    ([department()], [project()]),
    ([department("default", unbounded_resources())], [project("default", unbounded_resources())]),
    ([department(resources=TEAM_RESOURCES)], [project(resources=[{"gpu": {"deserved": 0.25}}])]),
    ([department()], [project(resources=[])]),
]


@pytest.mark.parametrize("settings", [KAI, VOLCANO], ids=["kai", "volcano"])
@pytest.mark.parametrize("organisation", ORGANISATIONS)
def test_every_queue_validates(
    settings: KubernetesSettings, organisation: tuple[list[Department], list[Project]]
) -> None:
    for pool in ("default", "a100"):
        queues = queue_manifests(
            *organisation, KubernetesSettings(settings.scheduler, queue_pool=pool)
        )
        assert queues
        for queue in queues:
            assert schema_errors(queue) == []
            assert metadata_errors(queue["metadata"], queue["metadata"]["name"]) == []


def test_the_kai_crd_refuses_what_it_does_not_know() -> None:
    # The validation is real: a field KAI's Queue does not have is refused.
    queue = workload_queues(None, project(), KAI)[0]
    queue["spec"]["resources"]["gpu"]["deserved"] = 8
    assert schema_errors(queue)


def test_a_department_and_a_project_of_the_same_name_have_distinct_queues() -> None:
    queues = queue_manifests([department("default")], [project("default")], KAI)
    assert [q["metadata"]["name"] for q in queues] == ["department.default", "default"]


def managed(name: str, unit: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    labels = {
        "app.kubernetes.io/managed-by": "lockstep",
        "lockstep.io/org-unit": unit,
        "lockstep.io/org-unit-id": "1",
    }
    return {"metadata": {"name": name, "labels": labels}, "spec": spec or {}}


def test_a_sync_applies_what_is_missing_or_different_and_deletes_children_first() -> None:
    desired = queue_manifests([department()], [project()], KAI)
    same_department = desired[0]
    changed_project = {**desired[1], "spec": {**desired[1]["spec"], "priority": 1}}
    existing = [
        same_department,
        changed_project,
        managed("department.gone", "department"),
        managed("old-project", "project"),
        {"metadata": {"name": "someone-elses"}, "spec": {}},  # not labelled as lockstep's
    ]
    changes = queue_changes(desired, existing)
    assert [q["metadata"]["name"] for q in changes.apply] == ["team-a"]
    assert changes.delete == ["old-project", "department.gone"]


def test_a_sync_with_everything_in_step_does_nothing() -> None:
    desired = queue_manifests([department()], [project()], KAI)
    assert queue_changes(desired, desired) == queue_changes([], [])


def test_volcano_own_queues_are_never_deleted() -> None:
    changes = queue_changes([], [managed("default", "project"), managed("root", "department")])
    assert changes.delete == []


def dry_run(organization: Any, data_dir: Path) -> list[dict[str, Any]]:
    settings = Settings(data_dir=data_dir, runtime=RuntimeKind.KUBERNETES)
    workload = workload_of(request_body(spec={"numWorkers": 1}))
    rendered = renderers(settings, organization=organization)[RuntimeKind.KUBERNETES](workload)
    return list(rendered["manifests"])


def test_the_dry_run_starts_with_the_workloads_queues(tmp_path: Path) -> None:
    manifests = dry_run(lambda _: (department(), project()), tmp_path)
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests[:3]] == [
        ("Queue", "department.research"),
        ("Queue", "team-a"),
        ("PyTorchJob", "train"),
    ]
    assert manifests[2]["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"


def test_the_dry_run_of_an_unknown_project_shows_no_queue(tmp_path: Path) -> None:
    assert "Queue" not in {m["kind"] for m in dry_run(lambda _: None, tmp_path)}
