"""Scheduler wiring on Kubernetes (runtimes/kubernetes/scheduling.py): KAI's scheduler name,
queue label, priority class and preemptibility; Volcano's scheduler name, PodGroup and pod
annotation; nothing for the default scheduler; the gang size; and lockstep's priority and
preemption labels under every scheduler."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.runtimes.kubernetes.scheduling import gang_size, kai_priority_class
from lockstep.runtimes.kubernetes.settings import SchedulerKind
from tests.unit.k8s import job_of, of_kind, pod_spec, rendered, template
from tests.unit.specs import plan_of


def test_kai() -> None:
    manifests = rendered({"numWorkers": 3})
    job = job_of(manifests)
    assert job["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 4}
    for replica_type in ("Master", "Worker"):
        spec = pod_spec(manifests, replica_type)
        assert spec["schedulerName"] == "kai-scheduler"
        assert spec["priorityClassName"] == "train"
        labels = template(manifests, replica_type)["metadata"]["labels"]
        assert labels["kai.scheduler/queue"] == "team-a"
        assert labels["kai.scheduler/preemptibility"] == "preemptible"
    assert of_kind(manifests, "PodGroup") == []


def test_the_queue_is_configurable() -> None:
    job = job_of(rendered(settings={"queue": "research"}))
    assert job["metadata"]["labels"]["kai.scheduler/queue"] == "research"


def test_volcano() -> None:
    manifests = rendered({"numWorkers": 3}, scheduler=SchedulerKind.VOLCANO)
    (group,) = of_kind(manifests, "PodGroup")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["metadata"]["name"] == "train"
    assert group["spec"] == {"minMember": 4, "queue": "team-a"}
    job = job_of(manifests)
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 4, "queue": "team-a"}
    assert "kai.scheduler/queue" not in job["metadata"]["labels"]
    for replica_type in ("Master", "Worker"):
        spec = pod_spec(manifests, replica_type)
        assert spec["schedulerName"] == "volcano"
        assert "priorityClassName" not in spec
        annotations = template(manifests, replica_type)["metadata"]["annotations"]
        assert annotations["scheduling.k8s.io/group-name"] == "train"


def test_the_default_scheduler_gets_nothing_of_its_own() -> None:
    manifests = rendered(scheduler=SchedulerKind.DEFAULT)
    spec = pod_spec(manifests)
    assert "schedulerName" not in spec
    assert "priorityClassName" not in spec
    assert "schedulingPolicy" not in job_of(manifests)["spec"]["runPolicy"]
    assert of_kind(manifests, "PodGroup") == []


@pytest.mark.parametrize(
    ("framework", "spec", "size"),
    [
        ("PyTorch", {}, 4),
        ("JAX", {}, 4),
        ("MPI", {}, 4),
        ("MPI", {"mpiLauncherCreationPolicy": "AtStartup"}, 4),
        ("MPI", {"mpiLauncherCreationPolicy": "WaitForWorkersReady"}, 3),
        ("PyTorch", {"minReplicas": 2, "maxReplicas": 5}, 2),
        ("PyTorch", {"minReplicas": 3, "maxReplicas": 3}, 3),  # all three worker pods
    ],
)
def test_gang_size(framework: str, spec: dict[str, Any], size: int) -> None:
    assert gang_size(plan_of(framework, 3, spec=spec)) == size


@pytest.mark.parametrize(
    ("priority_class", "kai"),
    [
        ("train", "train"),
        ("interactive-preemptible", "build-preemptible"),
        ("build", "build"),
        ("inference", "inference"),
        ("very-high", "train"),
    ],
)
def test_kai_priority_classes(priority_class: str, kai: str) -> None:
    assert kai_priority_class(priority_class) == kai


@pytest.mark.parametrize(
    ("spec", "labels"),
    [
        (
            {},
            {"lockstep.io/priority-class": "train", "lockstep.io/preemptibility": "preemptible"},
        ),
        (
            {"priorityClass": "build"},
            {
                "lockstep.io/priority-class": "build",
                "lockstep.io/preemptibility": "non-preemptible",
            },
        ),
        (
            {"priorityClass": "build", "preemptibility": "preemptible"},
            {"lockstep.io/priority-class": "build", "lockstep.io/preemptibility": "preemptible"},
        ),
        (
            {"preemptibility": "non-preemptible", "terminateAfterPreemption": True},
            {
                "lockstep.io/priority-class": "train",
                "lockstep.io/preemptibility": "non-preemptible",
                "lockstep.io/terminate-after-preemption": "true",
            },
        ),
    ],
)
@pytest.mark.parametrize("scheduler", list(SchedulerKind))
def test_priority_and_preemption_labels_under_every_scheduler(
    spec: dict[str, Any], labels: dict[str, str], scheduler: SchedulerKind
) -> None:
    manifests = rendered(spec, scheduler=scheduler)
    job_labels = job_of(manifests)["metadata"]["labels"]
    pod_labels = template(manifests)["metadata"]["labels"]
    for key, value in labels.items():
        assert job_labels[key] == value
        assert pod_labels[key] == value
    assert ("lockstep.io/terminate-after-preemption" in job_labels) is (
        "terminateAfterPreemption" in spec
    )
    if scheduler is SchedulerKind.KAI:
        assert job_labels["kai.scheduler/preemptibility"] == labels["lockstep.io/preemptibility"]
        assert pod_spec(manifests)["priorityClassName"] == kai_priority_class(
            labels["lockstep.io/priority-class"]
        )
