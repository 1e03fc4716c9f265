"""A real PyTorch run through the API: a gloo all_reduce across a master and two workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.api import poll
from tests.support.pods import pod_log
from tests.support.requests import EXAMPLES, distributed, shared
from tests.support.server import LiveServer

pytest.importorskip("torch", reason="the PyTorch end-to-end tests need torch installed")


def test_allreduce_across_master_and_two_workers_completes(
    live_server_on_each_store: LiveServer,
) -> None:
    live_server = live_server_on_each_store
    api = live_server.api()
    body = distributed(
        api.cluster_id(),
        name="allreduce",
        workers=2,
        args=str(EXAMPLES / "pytorch" / "allreduce.py"),
    )
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=120)
    assert done["phase"] == "Completed", done

    def settled() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    pods = poll(settled, timeout=30, what="every pod to finish")
    assert sorted(str(p["name"]) for p in pods) == [
        "allreduce-master-0",
        "allreduce-worker-0",
        "allreduce-worker-1",
    ]
    assert {p["k8sPhase"] for p in pods} == {"Succeeded"}
    logs = {
        pod: pod_log(api, created["workloadId"], pod)
        for pod in ("allreduce-master-0", "allreduce-worker-0", "allreduce-worker-1")
    }
    for rank, pod in enumerate(sorted(logs)):
        assert f"rank {rank} of 3 on {pod}: sum 6, expected 6" in logs[pod], logs[pod]


def test_failing_worker_fails_the_workload_with_code_and_pod(live_server: LiveServer) -> None:
    api = live_server.api()
    script = "import os, sys, time; sys.exit(3) if os.environ['RANK'] == '2' else time.sleep(600)"
    body = distributed(
        api.cluster_id(),
        name="broken",
        workers=2,
        args=f'-c "{script}"',
        restartPolicy="Never",
        terminationGracePeriodSeconds=1,
    )
    created = api.create(body)
    failed = api.wait_for(created["workloadId"], {"Failed", "Completed"}, timeout=60)
    assert failed["phase"] == "Failed"
    assert "broken-worker-1" in failed["phaseMessage"]
    assert "exited with code 3" in failed["phaseMessage"]

    def stopped() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    pods = poll(stopped, timeout=30, what="the other pods to be stopped")
    assert {p["name"]: p["k8sPhase"] for p in pods}["broken-worker-1"] == "Failed"


def test_a_failed_pod_stops_the_rest_of_the_gang_at_once(live_server: LiveServer) -> None:
    """restartPolicy Never: the workload fails and the other pods are stopped right away,
    not after their 30 s grace period."""
    api = live_server.api()
    script = "import os, sys, time; sys.exit(5) if os.environ['RANK'] == '1' else time.sleep(600)"
    body = distributed(
        api.cluster_id(), name="failfast", args=f'-c "{script}"', restartPolicy="Never"
    )
    created = api.create(body)
    failed = api.wait_for(created["workloadId"], {"Failed"}, timeout=60)
    assert "failfast-worker-0 exited with code 5" in failed["phaseMessage"]

    def stopped() -> list[dict[str, object]] | None:
        pods: list[dict[str, object]] = api.get(
            f"/api/v1/workloads/{created['workloadId']}/pods"
        ).json()["pods"]
        return pods if all(p["k8sPhase"] != "Running" for p in pods) else None

    poll(stopped, timeout=10, what="the rest of the gang to stop (well within its grace period)")


def test_the_whole_gang_restarts_after_a_failure_and_then_completes(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """OnFailure: on their first attempt worker-1 fails and the others wait; every pod is
    stopped and started again, and on the second attempt all succeed."""
    api = live_server.api()
    script = tmp_path / "flaky.py"
    script.write_text(
        "import os, pathlib, sys, time\n"
        "mark = pathlib.Path(sys.argv[1]) / os.environ['HOSTNAME']\n"
        "first = not mark.exists()\n"
        "mark.touch()\n"
        "if first and os.environ['RANK'] == '2':\n"
        "    # only once the others have begun their first attempt (and so marked it)\n"
        "    others = [mark.with_name(n) for n in ('flaky-master-0', 'flaky-worker-0')]\n"
        "    while not all(o.exists() for o in others): time.sleep(0.02)\n"
        "    print('worker-1 fails once')\n"
        "    sys.exit(4)\n"
        "if first:\n"
        "    time.sleep(600)\n"
    )
    body = distributed(
        api.cluster_id(),
        name="flaky",
        args=f"{script} {tmp_path}",
        restartPolicy="OnFailure",
        storage=shared(tmp_path),  # the marks outlive an attempt, as they must
    )
    created = api.create(body)
    done = api.wait_for(created["workloadId"], {"Completed", "Failed"}, timeout=60)
    assert done["phase"] == "Completed"
    history = api.get(f"/api/v1/workloads/{created['workloadId']}/history").json()["records"]
    phases = [r["spec"]["phaseUpdate"] for r in history if r["meta"]["type"] == "PhaseUpdate"]
    degraded = [p["phaseMessage"] for p in phases if p["phase"] == "Degraded"]
    assert degraded[0].startswith(
        "restarting every pod after pod flaky-worker-1 exited with code 4 (restart 1 of 6)"
    )
    assert degraded[0].endswith("worker-1 fails once")
    events = api.get(f"/api/v1/workloads/{created['workloadId']}/events").json()["events"]
    assert "Restarting" in {e["reason"] for e in events}
    pods = api.get(f"/api/v1/workloads/{created['workloadId']}/pods").json()["pods"]
    assert len(pods) == 3


def test_a_gang_that_keeps_failing_stops_at_the_backoff_limit(live_server: LiveServer) -> None:
    api = live_server.api()
    rank = "os.environ['RANK']"
    script = f"import os, sys; print('boom', {rank}); sys.exit(2 if {rank} == '0' else 0)"
    body = distributed(
        api.cluster_id(),
        name="doomed",
        args=f'-c "{script}"',
        restartPolicy="OnFailure",
        backoffLimit=2,
    )
    created = api.create(body)
    failed = api.wait_for(created["workloadId"], {"Failed", "Completed"}, timeout=60)
    assert failed["phase"] == "Failed"
    message = failed["phaseMessage"]
    assert message.startswith("pod doomed-master-0 exited with code 2; the workload has reached")
    assert "backoff limit (2)" in message
    assert message.endswith("the last lines of its log:\nboom 0\nboom 0\nboom 0")
