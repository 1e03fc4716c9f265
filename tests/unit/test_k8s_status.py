"""The cluster's view in lockstep's terms (runtimes/kubernetes/status.py): the phase from a
job's True conditions in their fixed order, refined by its pods while Pending; each pod's
status; events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from lockstep.domain.phases import Phase
from lockstep.domain.workload import EventType, PodPhase
from lockstep.runtimes.kubernetes.status import event, job_state, pod_status

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def job(*conditions: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "status": {
            "conditions": [
                {"type": kind, "status": status, "message": message}
                for kind, status, message in conditions
            ]
        }
    }


def pod(
    name: str = "train-worker-0",
    *,
    phase: str = "Pending",
    scheduled: tuple[str, str] | None = ("True", ""),
    waiting: dict[str, str] | None = None,
    terminated: dict[str, Any] | None = None,
    ready: bool = False,
    restarts: int = 0,
) -> dict[str, Any]:
    conditions = []
    if scheduled is not None:
        conditions.append({"type": "PodScheduled", "status": scheduled[0], "message": scheduled[1]})
    conditions.append({"type": "Ready", "status": "True" if ready else "False"})
    state: dict[str, Any] = {}
    if waiting is not None:
        state["waiting"] = waiting
    if terminated is not None:
        state["terminated"] = terminated
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": "2026-11-30T11:59:00Z",
            "labels": {
                "training.kubeflow.org/replica-type": "Worker",
                "training.kubeflow.org/replica-index": "0",
            },
        },
        "spec": {"nodeName": "node-a", "containers": [{"name": "pytorch", "image": "img:1"}]},
        "status": {
            "phase": phase,
            "podIP": "10.0.0.7",
            "startTime": "2026-11-30T11:59:05Z",
            "conditions": conditions,
            "containerStatuses": [{"restartCount": restarts, "state": state}],
        },
    }


@pytest.mark.parametrize(
    ("conditions", "phase", "message"),
    [
        # Running stays listed, False, once the job has ended: the order decides, not the last.
        (
            (("Created", "True", ""), ("Running", "False", ""), ("Succeeded", "True", "done")),
            Phase.COMPLETED,
            "done",
        ),
        (
            (("Running", "False", ""), ("Failed", "True", "backoff limit")),
            Phase.FAILED,
            "backoff limit",
        ),
        ((("Succeeded", "True", ""), ("Failed", "True", "evicted")), Phase.FAILED, "evicted"),
        (
            (("Created", "True", ""), ("Running", "False", ""), ("Suspended", "True", "paused")),
            Phase.STOPPED,
            "paused",
        ),
        (
            (("Created", "True", ""), ("Restarting", "True", "worker 1 failed")),
            Phase.INITIALIZING,
            "worker 1 failed",
        ),
        ((("Created", "True", ""), ("Running", "True", "")), Phase.RUNNING, ""),
        ((("Created", "True", ""),), Phase.PENDING, ""),
        ((), Phase.PENDING, ""),
    ],
)
def test_the_first_true_condition_in_order_decides(
    conditions: tuple[tuple[str, str, str], ...], phase: Phase, message: str
) -> None:
    state = job_state(job(*conditions), [])
    assert (state.phase, state.message) == (phase, message)


def test_a_job_not_created_yet_is_pending() -> None:
    assert job_state(None, []).phase is Phase.PENDING


def test_a_pending_job_says_why_a_pod_cannot_be_placed() -> None:
    unschedulable = pod_status(
        pod(scheduled=("False", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."))
    )
    state = job_state(job(("Created", "True", "")), [unschedulable])
    assert state.phase is Phase.PENDING
    assert (
        state.message == "train-worker-0: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    )


def test_a_pending_job_names_an_image_that_cannot_be_pulled() -> None:
    failing = pod_status(
        pod(waiting={"reason": "ImagePullBackOff", "message": 'Back-off pulling image "nope"'})
    )
    state = job_state(job(("Created", "True", "")), [failing])
    assert (state.phase, state.message) == (
        Phase.PENDING,
        'train-worker-0: ImagePullBackOff: Back-off pulling image "nope"',
    )


def test_placed_pods_that_are_starting_make_it_initializing() -> None:
    starting = pod_status(pod(waiting={"reason": "ContainerCreating"}))
    assert job_state(job(("Created", "True", "")), [starting]).phase is Phase.INITIALIZING


def test_a_running_pod() -> None:
    status = pod_status(pod(phase="Running", ready=True, restarts=2))
    assert status.name == "train-worker-0" and status.role == "worker" and status.index == 0
    assert status.phase is PodPhase.RUNNING and status.ready and status.scheduled
    assert (status.node_name, status.ip, status.image) == ("node-a", "10.0.0.7", "img:1")
    assert status.restarts == 2
    assert status.started_at == datetime(2026, 11, 30, 11, 59, 5, tzinfo=UTC)


def test_an_out_of_memory_pod() -> None:
    status = pod_status(
        pod(
            phase="Failed",
            terminated={
                "reason": "OOMKilled",
                "exitCode": 137,
                "finishedAt": "2026-11-30T12:00:00Z",
            },
        )
    )
    assert (status.phase, status.reason, status.exit_code) == (PodPhase.FAILED, "OOMKilled", 137)
    assert status.finished_at == NOW


def test_an_mpi_launcher_is_found_by_its_role_label() -> None:
    launcher = pod("train-launcher-x7k2p")
    launcher["metadata"]["labels"] = {"training.kubeflow.org/job-role": "launcher"}
    status = pod_status(launcher)
    assert (status.role, status.index) == ("launcher", 0)


def test_an_unknown_pod_phase_is_unknown() -> None:
    assert pod_status(pod(phase="Weird")).phase is PodPhase.UNKNOWN


def test_events() -> None:
    warning = event(
        {
            "metadata": {"uid": "e-1", "creationTimestamp": "2026-11-30T11:00:00Z"},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": "0/4 nodes are available",
            "involvedObject": {"kind": "Pod", "name": "train-worker-0"},
            "lastTimestamp": "2026-11-30T11:30:00Z",
            "source": {"component": "kai-scheduler"},
        },
        workload_id="w",
        now=NOW,
    )
    assert (warning.id, warning.type, warning.reason) == (
        "e-1",
        EventType.WARNING,
        "FailedScheduling",
    )
    assert (warning.object_kind, warning.object_name) == ("Pod", "train-worker-0")
    assert warning.created_at == datetime(2026, 11, 30, 11, 30, tzinfo=UTC)
    assert warning.source == "kai-scheduler"
    bare = event({"metadata": {"name": "e-2"}, "reason": "Created"}, workload_id="w", now=NOW)
    assert (bare.id, bare.type, bare.created_at, bare.source) == (
        "e-2",
        EventType.NORMAL,
        NOW,
        "kubernetes",
    )
