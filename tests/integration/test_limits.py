"""Pod limits on this machine (a cgroup v1 host, so without cgroups: see confinement.py): a pod
over its memory limit is killed and fails with OOMKilled, a CPU limit pins a pod to whole cores,
and a pod within its limits is left alone."""

from __future__ import annotations

import os
from typing import Any

from tests.support.api import Api
from tests.support.pods import pod_log, settled_pods
from tests.support.requests import distributed, python

GROWS = python(
    "import time\n"
    "chunks = []\n"
    "for _ in range(400):\n"
    "    chunks.append(bytearray(8 * 1024 * 1024))\n"
    "    time.sleep(0.01)\n"
    "print('never reached')"
)


def limited(api: Api, name: str, args: str, **compute: Any) -> dict[str, Any]:
    body = distributed(api.cluster_id(), name=name, workers=1, args=args)
    body["spec"]["compute"] = compute
    body["spec"]["backoffLimit"] = 0
    return body


def test_a_pod_over_its_memory_limit_is_oom_killed(api: Api) -> None:
    workload_id = api.create(limited(api, "hungry", GROWS, cpuMemoryLimit="200Mi"))["workloadId"]
    failed = api.wait_for(workload_id, {"Failed", "Completed"}, timeout=120)
    assert failed["phase"] == "Failed"
    assert "OOMKilled" in failed["phaseMessage"]
    assert "memory limit of 200Mi" in failed["phaseMessage"]
    events = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
    assert "OOMKilled" in {e["reason"] for e in events}
    assert "never reached" not in pod_log(api, workload_id, "hungry-master-0")


def test_a_pod_within_its_memory_limit_runs_to_completion(api: Api) -> None:
    modest = python("block = bytearray(20 * 1024 * 1024); print('fits', len(block))")
    body = limited(api, "modest", modest, cpuMemoryLimit="300Mi")
    workload_id = api.create(body)["workloadId"]
    assert api.wait_for(workload_id, {"Failed", "Completed"}, timeout=120)["phase"] == "Completed"
    assert pod_log(api, workload_id, "modest-master-0") == f"fits {20 * 1024 * 1024}\n"


def test_a_cpu_limit_pins_the_pod_to_whole_cores(api: Api) -> None:
    prints = python("import os; print(sorted(os.sched_getaffinity(0)))")
    workload_id = api.create(limited(api, "pinned", prints, cpuCoreLimit=0.5))["workloadId"]
    assert api.wait_for(workload_id, {"Failed", "Completed"})["phase"] == "Completed"
    settled_pods(api, workload_id)
    cores = sorted(os.sched_getaffinity(0))
    pinned = [pod_log(api, workload_id, f"pinned-{pod}") for pod in ("master-0", "worker-0")]
    for log in pinned:
        chosen = eval(log)  # noqa: S307 (a list of core numbers the pod printed)
        assert len(chosen) == 1
        assert chosen[0] in cores
    if len(cores) > 1:
        assert pinned[0] != pinned[1]  # the least used core goes first


def test_without_a_limit_a_pod_may_use_every_core(api: Api) -> None:
    prints = python("import os; print(sorted(os.sched_getaffinity(0)))")
    workload_id = api.create(limited(api, "free", prints))["workloadId"]
    assert api.wait_for(workload_id, {"Failed", "Completed"})["phase"] == "Completed"
    assert pod_log(api, workload_id, "free-master-0") == f"{sorted(os.sched_getaffinity(0))}\n"
