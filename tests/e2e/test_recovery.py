"""Nothing is lost: a crash of lockstep (SIGKILL) loses no acknowledged workload, its pods keep
running and are re-adopted, pods that ended meanwhile get their real outcome, and nothing is
left running once a workload is deleted."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from lockstep.runtimes.local.processes import marked_processes
from lockstep.runtimes.local.state import PodFiles
from tests.support.api import Api, poll
from tests.support.requests import distributed, shared
from tests.support.server import LiveServer

WAIT_FOR_RELEASE = (
    "import os, sys, time\n"
    "path = os.path.join(sys.argv[1], os.environ['HOSTNAME'])\n"
    "while not os.path.exists(path): time.sleep(0.05)\n"
    "sys.exit(int(open(path).read()))\n"
)


def held(cluster: str, release_dir: Path, name: str) -> dict[str, Any]:
    """A workload whose pods each wait for `<release_dir>/<pod name>` and exit with its content."""
    script = release_dir / "wait.py"
    script.write_text(WAIT_FOR_RELEASE)
    return distributed(
        cluster,
        name=name,
        workers=1,
        command=sys.executable,
        args=f"{script} {release_dir}",
        storage=shared(release_dir),
    )


def release(release_dir: Path, pod: str, code: int) -> None:
    target = release_dir / pod
    target.with_suffix(".tmp").write_text(str(code))
    target.with_suffix(".tmp").replace(target)


def pod_states(server: LiveServer, workload_id: str) -> dict[str, Any]:
    root = server.data_dir / "runtime" / "local" / workload_id
    return {d.name: PodFiles(d).read_state() for d in root.iterdir() if d.is_dir()}


def restarted(server: LiveServer) -> Api:
    server.start()
    return server.api()


def test_running_pods_survive_a_crash_and_are_re_adopted(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    workload_id = api.create(held(api.cluster_id(), tmp_path, "steady"))["workloadId"]
    api.wait_for(workload_id, {"Running"})
    before = {name: state.pid for name, state in pod_states(live_server, workload_id).items()}

    assert live_server.stop(signal.SIGKILL) == -signal.SIGKILL
    api = restarted(live_server)
    assert api.workload(workload_id)["phase"] == "Running"
    after = {name: state.pid for name, state in pod_states(live_server, workload_id).items()}
    assert after == before

    release(tmp_path, "steady-worker-0", 0)
    release(tmp_path, "steady-master-0", 0)
    done = api.wait_for(workload_id, {"Completed", "Failed"})
    assert done["phase"] == "Completed"


def test_pods_that_end_while_lockstep_is_down_get_their_real_outcome(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    workload_id = api.create(held(api.cluster_id(), tmp_path, "orphaned"))["workloadId"]
    api.wait_for(workload_id, {"Running"})
    live_server.stop(signal.SIGKILL)

    release(tmp_path, "orphaned-worker-0", 7)
    states = pod_states(live_server, workload_id)
    files = PodFiles(live_server.data_dir / "runtime" / "local" / workload_id / "orphaned-worker-0")
    poll(
        lambda: files.exit_code(states["orphaned-worker-0"].attempt),
        timeout=30,
        what="the worker to exit",
    )

    api = restarted(live_server)
    failed = api.wait_for(workload_id, {"Failed", "Completed"})
    assert failed["phase"] == "Failed"
    assert "orphaned-worker-0 exited with code 7" in failed["phaseMessage"]


def test_acknowledged_workloads_survive_a_crash(live_server_on_each_store: LiveServer) -> None:
    live_server = live_server_on_each_store
    api = live_server.api()
    cluster = api.cluster_id()
    acknowledged = [
        api.create(distributed(cluster, name=f"burst-{i}", compute={"cpuCoreRequest": 100000}))[
            "workloadId"
        ]
        for i in range(20)
    ]
    live_server.stop(signal.SIGKILL)
    api = restarted(live_server)
    stored = {
        w["id"] for w in api.get("/api/v1/workloads", params={"limit": 100}).json()["workloads"]
    }
    assert set(acknowledged) <= stored


def test_nothing_is_left_running_after_delete(live_server: LiveServer, tmp_path: Path) -> None:
    api = live_server.api()
    workload_id = api.create(held(api.cluster_id(), tmp_path, "tidy"))["workloadId"]
    api.wait_for(workload_id, {"Running"})
    uids = [state.uid for state in pod_states(live_server, workload_id).values()]
    assert all(list(marked_processes(uid)) for uid in uids)

    assert api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 202
    api.wait_gone(workload_id)
    assert [pid for uid in uids for pid in marked_processes(uid)] == []
    assert not (live_server.data_dir / "runtime" / "local" / workload_id).exists()


def test_pods_of_a_workload_deleted_while_lockstep_was_down_are_stopped(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    workload_id = api.create(held(api.cluster_id(), tmp_path, "abandoned"))["workloadId"]
    api.wait_for(workload_id, {"Running"})
    uids = [state.uid for state in pod_states(live_server, workload_id).values()]
    live_server.stop(signal.SIGKILL)
    # The store says the workload is to be deleted; lockstep was not there to act on it.
    engine = create_engine(live_server.database_url or "")
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE workloads SET desired_phase = 'Deleted' WHERE id = :id"),
            {"id": workload_id},
        )
    engine.dispose()
    api = restarted(live_server)
    poll(
        lambda: True if not [p for uid in uids for p in marked_processes(uid)] else None,
        timeout=60,
        what="the pods to be stopped",
    )
    api.wait_gone(workload_id)


def test_a_killed_reconciler_process_is_restarted_and_adopts_the_pods(
    live_server: LiveServer, tmp_path: Path
) -> None:
    api = live_server.api()
    workload_id = api.create(held(api.cluster_id(), tmp_path, "survivor"))["workloadId"]
    api.wait_for(workload_id, {"Running"})
    assert live_server.process is not None
    server_pid = live_server.process.pid

    def reconciler_pid() -> int | None:
        """The server's child process (whichever of its threads started it)."""
        tasks = Path(f"/proc/{server_pid}/task").glob("*/children")
        children = [int(pid) for task in tasks for pid in task.read_text().split()]
        return children[0] if children else None

    first = poll(reconciler_pid, timeout=10, what="the reconciler process")
    os.kill(first, signal.SIGKILL)
    second = poll(
        lambda: pid if (pid := reconciler_pid()) not in {None, first} else None,
        timeout=30,
        what="a new reconciler process",
    )
    assert second != first
    release(tmp_path, "survivor-worker-0", 0)
    release(tmp_path, "survivor-master-0", 0)
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    later = api.create(distributed(api.cluster_id(), name="after-restart", workers=1))
    assert api.wait_for(later["workloadId"], {"Completed", "Failed"})["phase"] == "Completed"
