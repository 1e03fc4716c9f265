"""A training as an Indexed `batch/v1` Job and a workspace as a one-pod `apps/v1` StatefulSet
with its headless Service: the fields each maps, the scheduler's wiring, the refusals every
kind shares, validation of every rendered manifest against Kubernetes 1.30's schemas
(`kubernetes-validate`, strict) and the API server's rules; then the status tables: a Job's
conditions and a workspace's pod → the workload's phase."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.phases import DesiredPhase, Phase
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.settings import SchedulerKind
from lockstep.runtimes.kubernetes.status import pod_status, workload_state
from tests.unit.k8s import Manifest, manifests_of, of_kind, single_pod_workload_of
from tests.unit.k8s_schemas import object_errors, pod_errors, schema_errors
from tests.unit.test_k8s_validation import GPU_MODES, RICH_SPEC, STORAGE

TRAINING, WORKSPACE = WorkloadKind.TRAINING, WorkloadKind.WORKSPACE
OWNER_KINDS = {TRAINING: "Job", WORKSPACE: "StatefulSet"}
SINGLE_POD_RICH_SPEC = {key: value for key, value in RICH_SPEC.items() if key != "cleanPodPolicy"}
"""The validation matrix's rich spec, without what only a distributed spec has."""


def rendered(
    kind: WorkloadKind,
    spec: dict[str, Any] | None = None,
    *,
    scheduler: SchedulerKind = SchedulerKind.KAI,
    desired: DesiredPhase = DesiredPhase.RUNNING,
) -> list[Manifest]:
    return manifests_of(single_pod_workload_of(kind, spec, desired=desired), scheduler)


def owner_of(manifests: list[Manifest], kind: WorkloadKind) -> Manifest:
    (owner,) = of_kind(manifests, OWNER_KINDS[kind])
    return owner


# --- the translation ------------------------------------------------------------------------


def test_a_training_is_an_indexed_job_with_its_counts_and_limits() -> None:
    spec = {
        "completions": 3,
        "parallelism": 2,
        "backoffLimit": 4,
        "autoDeletionTimeAfterCompletionSeconds": 600,
        "restartPolicy": "OnFailure",
    }
    job = owner_of(rendered(TRAINING, spec), TRAINING)
    assert job["apiVersion"] == "batch/v1"
    assert job["metadata"]["name"] == "solo"
    assert {
        key: job["spec"][key]
        for key in (
            "completionMode",
            "completions",
            "parallelism",
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "suspend",
        )
    } == {
        "completionMode": "Indexed",
        "completions": 3,
        "parallelism": 2,
        "backoffLimit": 4,
        "ttlSecondsAfterFinished": 600,
        "suspend": False,
    }
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "OnFailure"
    assert pod["containers"][0]["name"] == "training"
    assert pod["containers"][0]["command"] == ["python"]
    assert job["spec"]["template"]["metadata"]["labels"]["lockstep.io/role"] == "training"


def test_a_training_runs_one_pod_by_default_and_is_suspended_when_stopped() -> None:
    job = owner_of(rendered(TRAINING, desired=DesiredPhase.STOPPED), TRAINING)
    assert (job["spec"]["completions"], job["spec"]["parallelism"]) == (1, 1)
    assert job["spec"]["suspend"] is True
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "ttlSecondsAfterFinished" not in job["spec"]


def test_a_workspace_is_a_stateful_set_of_one_pod_with_its_headless_service() -> None:
    manifests = rendered(
        WORKSPACE,
        {
            "ports": [{"container": 8888, "serviceType": "NodePort", "external": 30888}],
            "exposedUrls": [{"container": 8888, "url": "https://lab.example.com"}],
        },
    )
    stateful_set = owner_of(manifests, WORKSPACE)
    spec = stateful_set["spec"]
    assert stateful_set["apiVersion"] == "apps/v1"
    assert (spec["replicas"], spec["serviceName"]) == (1, "solo")
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["containers"][0]["name"] == "workspace"
    services = {m["metadata"]["name"]: m["spec"] for m in of_kind(manifests, "Service")}
    assert services["solo"]["clusterIP"] == "None"
    assert services["solo"]["selector"] == spec["selector"]["matchLabels"]
    assert services["solo-nodeport"]["ports"][0]["nodePort"] == 30888
    assert "solo-clusterip" in services
    (ingress,) = of_kind(manifests, "Ingress")
    assert ingress["spec"]["rules"][0]["host"] == "lab.example.com"


def test_a_stopped_workspace_has_no_replica() -> None:
    stateful_set = owner_of(rendered(WORKSPACE, desired=DesiredPhase.STOPPED), WORKSPACE)
    assert stateful_set["spec"]["replicas"] == 0


@pytest.mark.parametrize(("kind", "priority_class"), [(TRAINING, "train"), (WORKSPACE, "build")])
def test_kai_schedules_them_in_the_projects_queue_at_their_kinds_priority(
    kind: WorkloadKind, priority_class: str
) -> None:
    owner = owner_of(rendered(kind), kind)
    template = owner["spec"]["template"]
    assert owner["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    assert template["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    assert template["spec"]["schedulerName"] == "kai-scheduler"
    assert template["spec"]["priorityClassName"] == priority_class


def test_volcano_gangs_a_trainings_parallel_pods_in_a_pod_group() -> None:
    manifests = rendered(
        TRAINING, {"completions": 4, "parallelism": 2}, scheduler=SchedulerKind.VOLCANO
    )
    (group,) = of_kind(manifests, "PodGroup")
    assert group["spec"] == {"minMember": 2, "queue": "team-a"}
    assert [m["kind"] for m in manifests].index("PodGroup") < [m["kind"] for m in manifests].index(
        "Job"
    )
    template = owner_of(manifests, TRAINING)["spec"]["template"]
    assert template["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "solo"
    assert template["spec"]["schedulerName"] == "volcano"


@pytest.mark.parametrize("kind", [TRAINING, WORKSPACE])
def test_what_kubernetes_cannot_run_is_refused_as_for_every_kind(kind: WorkloadKind) -> None:
    portion = {"compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion"}}
    portion["compute"]["gpuPortionRequest"] = 0.5
    with pytest.raises(PodStartError, match="needs KAI Scheduler's GPU sharing"):
        rendered(kind, portion, scheduler=SchedulerKind.VOLCANO)
    secret = {"imagePullSecrets": [{"name": "mine", "userCredential": True}]}
    with pytest.raises(PodStartError, match="user credentials are not available"):
        rendered(kind, secret)


# --- validation ----------------------------------------------------------------------------


def validation_errors(manifests: list[Manifest]) -> list[str]:
    errors: list[str] = []
    for manifest in manifests:
        where = f"{manifest['kind']}/{manifest['metadata']['name']}"
        errors += [f"{where}: {e}" for e in schema_errors(manifest)]
        if manifest["kind"] != "PodGroup":
            errors += object_errors(manifest, manifests)
        if manifest["kind"] in OWNER_KINDS.values():
            errors += pod_errors(manifest["spec"]["template"], where)
    return errors


def cases() -> list[tuple[str, WorkloadKind, SchedulerKind, dict[str, Any]]]:
    """Each kind under each scheduler with each GPU mode, each with a kind of storage in turn;
    then each kind with every kind of storage."""
    result = []
    storages = itertools.cycle(STORAGE)
    for kind, scheduler, gpu in itertools.product((TRAINING, WORKSPACE), SchedulerKind, GPU_MODES):
        if gpu in {"portion", "memory"} and scheduler is not SchedulerKind.KAI:
            continue  # refused: see above
        storage = next(storages)
        spec = {
            **SINGLE_POD_RICH_SPEC,
            "compute": {"cpuCoreRequest": 1, "cpuMemoryRequest": "4Gi", **GPU_MODES[gpu]},
            "storage": STORAGE[storage],
        }
        if kind is TRAINING:
            spec |= {"completions": 3, "parallelism": 2}
        result.append((f"{kind}-{scheduler}-{gpu}-{storage}", kind, scheduler, spec))
    for kind, storage in itertools.product((TRAINING, WORKSPACE), STORAGE):
        spec = {**SINGLE_POD_RICH_SPEC, "storage": STORAGE[storage]}
        result.append((f"{kind}-storage-{storage}", kind, SchedulerKind.VOLCANO, spec))
    return result


CASES = cases()


@pytest.mark.parametrize(
    ("kind", "scheduler", "spec"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rendered_manifests_validate_against_kubernetes_schemas(
    kind: WorkloadKind, scheduler: SchedulerKind, spec: dict[str, Any]
) -> None:
    manifests = rendered(kind, spec, scheduler=scheduler)
    assert owner_of(manifests, kind)
    assert validation_errors(manifests) == []


def test_the_validators_refuse_a_broken_job_and_stateful_set() -> None:
    job = owner_of(rendered(TRAINING), TRAINING)
    job["spec"]["completionMode"] = 1
    assert schema_errors(job)
    job["spec"]["completionMode"] = "Indexed"
    job["spec"]["completion"] = 3
    assert schema_errors(job)
    stateful_set = owner_of(rendered(WORKSPACE), WORKSPACE)
    del stateful_set["spec"]["selector"]
    assert schema_errors(stateful_set)


# --- status ---------------------------------------------------------------------------------


def job(*conditions: tuple[str, str, str]) -> Manifest:
    """A Job with (type, reason, message) conditions, all True."""
    return {
        "kind": "Job",
        "status": {
            "conditions": [
                {"type": kind, "status": "True", "reason": reason, "message": message}
                for kind, reason, message in conditions
            ]
        },
    }


def pod(
    name: str = "solo-0",
    *,
    phase: str = "Running",
    ready: bool = True,
    state: dict[str, Any] | None = None,
    last_state: dict[str, Any] | None = None,
    restarts: int = 0,
    labels: dict[str, str] | None = None,
) -> Manifest:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"image": "python:3.11"}], "nodeName": "node-a"},
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True" if ready else "False"},
            ],
            "containerStatuses": [
                {
                    "restartCount": restarts,
                    "state": state or {"running": {}},
                    "lastState": last_state or {},
                }
            ],
        },
    }


def plan_of(kind: WorkloadKind, spec: dict[str, Any] | None = None) -> Any:
    return single_pod_workload_of(kind, spec).plan()


@pytest.mark.parametrize(
    ("owner", "pods", "phase", "message"),
    [
        (None, [], Phase.PENDING, ""),
        (job(), [], Phase.PENDING, ""),
        (job(), [pod(ready=False)], Phase.INITIALIZING, ""),
        (job(), [pod()], Phase.RUNNING, ""),
        (job(), [pod(phase="Succeeded", state={"terminated": {"exitCode": 0}})], Phase.RUNNING, ""),
        (job(("Complete", "CompletionsReached", "Reached expected number of succeeded pods")), [],
         Phase.COMPLETED, "CompletionsReached: Reached expected number of succeeded pods"),
        (job(("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
         [pod()], Phase.FAILED,
         "BackoffLimitExceeded: Job has reached the specified backoff limit"),
        (job(("Suspended", "JobSuspended", "Job suspended")), [], Phase.STOPPED,
         "JobSuspended: Job suspended"),
    ],
)  # fmt: skip
def test_a_trainings_phase_comes_from_its_jobs_conditions_then_its_pods(
    owner: Manifest | None, pods: list[Manifest], phase: Phase, message: str
) -> None:
    state = workload_state(plan_of(TRAINING), owner, pods)
    assert (state.phase, state.message) == (phase, message)


STATEFUL_SET = {"kind": "StatefulSet", "spec": {"replicas": 1}}
SCALED_DOWN = {"kind": "StatefulSet", "spec": {"replicas": 0}}
EXITED_0 = {"terminated": {"exitCode": 0, "reason": "Completed"}}
EXITED_3 = {"terminated": {"exitCode": 3, "reason": "Error", "message": "no data"}}
CRASH_LOOP = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}}


@pytest.mark.parametrize(
    ("policy", "owner", "pods", "phase", "message"),
    [
        ("Never", None, [], Phase.PENDING, ""),
        ("Never", STATEFUL_SET, [], Phase.PENDING, ""),
        ("Never", SCALED_DOWN, [], Phase.STOPPED, ""),
        ("Never", STATEFUL_SET, [pod()], Phase.RUNNING, ""),
        ("Never", STATEFUL_SET, [pod(ready=False)], Phase.INITIALIZING, ""),
        ("Never", STATEFUL_SET, [pod(state=EXITED_0, ready=False)], Phase.COMPLETED,
         "solo-0 completed"),
        # The kubelet ran it again (a StatefulSet's pod always restarts): its lastState decides.
        ("Never", STATEFUL_SET, [pod(last_state=EXITED_0, restarts=1)], Phase.COMPLETED,
         "solo-0 completed"),
        ("Never", STATEFUL_SET, [pod(state=CRASH_LOOP, last_state=EXITED_3, restarts=1)],
         Phase.FAILED, "pod solo-0 exited with code 3: no data"),
        ("OnFailure", STATEFUL_SET, [pod(state=CRASH_LOOP, last_state=EXITED_3, restarts=1)],
         Phase.DEGRADED, "running pod solo-0 again after pod solo-0 exited with code 3: no data "
         "(restart 2 of 6)"),
        ("OnFailure", STATEFUL_SET, [pod(last_state=EXITED_3, restarts=1)], Phase.RUNNING, ""),
        ("OnFailure", STATEFUL_SET, [pod(state=CRASH_LOOP, last_state=EXITED_3, restarts=6)],
         Phase.FAILED, "pod solo-0 exited with code 3: no data; the workload has reached the "
         "specified backoff limit (6)"),
        ("OnFailure", STATEFUL_SET, [pod(last_state=EXITED_0, restarts=2)], Phase.COMPLETED,
         "solo-0 completed"),
        ("Always", STATEFUL_SET, [pod(last_state=EXITED_0, restarts=1)], Phase.RUNNING, ""),
        ("Always", STATEFUL_SET, [pod(state=CRASH_LOOP, last_state=EXITED_3, restarts=9)],
         Phase.DEGRADED, "running pod solo-0 again after pod solo-0 exited with code 3: no data "
         "(restart 10)"),
    ],
)  # fmt: skip
def test_a_workspaces_phase_comes_from_how_its_pod_ended_under_its_restart_policy(
    policy: str, owner: Manifest | None, pods: list[Manifest], phase: Phase, message: str
) -> None:
    state = workload_state(plan_of(WORKSPACE, {"restartPolicy": policy}), owner, pods)
    assert (state.phase, state.message) == (phase, message)


def test_a_workspace_that_ended_stays_ended_whatever_its_pods_say() -> None:
    annotations = {
        "lockstep.io/ended-phase": "Failed",
        "lockstep.io/ended-message": "pod solo-0 exited with code 3",
    }
    ended = {**SCALED_DOWN, "metadata": {"name": "solo", "annotations": annotations}}
    state = workload_state(plan_of(WORKSPACE), ended, [])
    assert (state.phase, state.message) == (Phase.FAILED, "pod solo-0 exited with code 3")


def test_a_workspace_whose_pod_is_going_away_is_not_stopped_yet() -> None:
    going = pod()
    going["metadata"]["deletionTimestamp"] = "2026-11-30T12:00:00Z"
    state = workload_state(plan_of(WORKSPACE), SCALED_DOWN, [going])
    assert state.phase is Phase.PENDING


@pytest.mark.parametrize(
    ("labels", "role", "index"),
    [
        ({"lockstep.io/role": "training", "batch.kubernetes.io/job-completion-index": "2"},
         "training", 2),
        ({"lockstep.io/role": "workspace", "apps.kubernetes.io/pod-index": "0"}, "workspace", 0),
        ({"training.kubeflow.org/replica-type": "Worker", "lockstep.io/role": "worker",
          "training.kubeflow.org/replica-index": "1"}, "worker", 1),
    ],
)  # fmt: skip
def test_a_pods_role_and_index_come_from_its_controllers_labels(
    labels: dict[str, str], role: str, index: int
) -> None:
    status = pod_status(pod("solo-2-x7k2q", labels=labels))
    assert (status.role, status.index) == (role, index)
