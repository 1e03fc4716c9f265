"""Gang placement on the local runtime's nodes, through the API: the server here has two
virtual nodes (pool a100 with 2 GPUs, pool v100 with 4 GPUs, none of them real), so node pools,
whole GPUs and fractions are exercised on this machine. A pod learns its devices from
CUDA_VISIBLE_DEVICES, its share from RUNAI_NUM_OF_GPUS and its node from NODE_NAME; /pods
shows the node; a gang that does not fit waits with a message naming what is missing where,
and starts once capacity frees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.config import NodeSettings, Settings
from tests.conftest import make_settings
from tests.integration.test_lifecycle import phases_of
from tests.support.api import Api, poll
from tests.support.pods import pod_log, settled_pods
from tests.support.requests import distributed, python

PRINTS_GPUS = python(
    "import os\n"
    "for name in ('CUDA_VISIBLE_DEVICES', 'RUNAI_NUM_OF_GPUS', 'NODE_NAME'):\n"
    "    print(name, repr(os.environ.get(name)))"
)
WAITS = python(
    "import os, time\n"
    "print('devices', os.environ['CUDA_VISIBLE_DEVICES'], flush=True)\n"
    "time.sleep(600)"
)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    configured = make_settings(tmp_path / "data", database_url)
    nodes = [
        NodeSettings(name="alpha", pool="a100", cpu_cores=8, memory="16Gi", gpus=2),
        NodeSettings(name="beta", pool="v100", cpu_cores=8, memory="16Gi", gpus=4),
    ]
    return configured.model_copy(update={"nodes": nodes})


def gpu_workload(api: Api, name: str, args: str, compute: dict[str, Any], **spec: Any) -> str:
    body = distributed(
        api.cluster_id(), name=name, workers=1, args=args, compute=compute, backoffLimit=0, **spec
    )
    return str(api.create(body)["workloadId"])


def env_lines(api: Api, workload_id: str, pod: str) -> dict[str, str]:
    lines = pod_log(api, workload_id, pod).splitlines()
    return dict(line.split(" ", 1) for line in lines if " " in line)


def printed(api: Api, workload_id: str, pod: str, key: str) -> str:
    """What a running pod printed for `key`, once its log has it (Running comes first)."""

    def found() -> str | None:
        return env_lines(api, workload_id, pod).get(key)

    return poll(found, timeout=30, what=f"{pod} printing {key}")


def test_whole_gpus_in_the_preferred_pool(api: Api) -> None:
    workload_id = gpu_workload(
        api, "whole", PRINTS_GPUS, {"gpuDevicesRequest": 1}, nodePools=["a100", "v100"]
    )
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    pods = {p["name"]: p for p in settled_pods(api, workload_id)}
    assert {p["nodeName"] for p in pods.values()} == {"alpha"}
    seen = {pod: env_lines(api, workload_id, pod) for pod in pods}
    assert sorted(env["CUDA_VISIBLE_DEVICES"] for env in seen.values()) == ["'0'", "'1'"]
    assert {env["RUNAI_NUM_OF_GPUS"] for env in seen.values()} == {"'1'"}
    assert {env["NODE_NAME"] for env in seen.values()} == {"'alpha'"}


def test_a_pod_without_gpus_sees_none(api: Api) -> None:
    workload_id = gpu_workload(api, "cpu", PRINTS_GPUS, {"cpuCoreRequest": 1})
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    env = env_lines(api, workload_id, "cpu-worker-0")
    assert env["CUDA_VISIBLE_DEVICES"] == "''"
    assert env["RUNAI_NUM_OF_GPUS"] == "'0'"


def test_a_gang_waits_for_gpus_in_its_pool_and_starts_when_they_free(api: Api) -> None:
    holder = gpu_workload(api, "holder", WAITS, {"gpuDevicesRequest": 1}, nodePools=["a100"])
    api.wait_for(holder, {"Running"})
    waiter = gpu_workload(api, "waiter", PRINTS_GPUS, {"gpuDevicesRequest": 1}, nodePools=["a100"])

    def explained() -> dict[str, Any] | None:
        item = api.workload(waiter)
        return item if item["phase"] == "Pending" and "needs" in item["phaseMessage"] else None

    pending = poll(explained, timeout=30, what="the waiter pending with a reason")
    assert pending["phaseMessage"] == (
        "waiting for resources: needs 2 GPUs in node pool a100, 0 free"
    )
    # the v100 pool is not the waiter's: it stays free and unused
    assert api.delete(f"/api/v1/workloads/distributed/{holder}").status_code == 202
    assert api.wait_for(waiter, {"Completed", "Failed"})["phase"] == "Completed"


def test_fractions_share_a_device_without_over_committing_it(api: Api) -> None:
    half = {"gpuRequestType": "portion", "gpuPortionRequest": 0.5}
    first = gpu_workload(api, "first", WAITS, half, nodePools=["a100"])
    api.wait_for(first, {"Running"})
    # two pods at 0.5 filled device 0; the next two fill device 1
    second = gpu_workload(api, "second", WAITS, half, nodePools=["a100"])
    api.wait_for(second, {"Running"})
    devices = {
        pod: printed(api, workload_id, pod, "devices")
        for workload_id, name in ((first, "first"), (second, "second"))
        for pod in (f"{name}-master-0", f"{name}-worker-0")
    }
    assert sorted(devices.values()) == ["0", "0", "1", "1"]
    third = gpu_workload(api, "third", PRINTS_GPUS, {"gpuPortionRequest": 0.3}, nodePools=["a100"])

    def waiting() -> dict[str, Any] | None:
        item = api.workload(third)
        return item if "needs" in item["phaseMessage"] else None

    assert poll(waiting, timeout=30, what="the third pending")["phaseMessage"] == (
        "waiting for resources: needs 0.6 GPUs in node pool a100, 0 free"
    )
    assert api.delete(f"/api/v1/workloads/distributed/{first}").status_code == 202
    assert api.wait_for(third, {"Completed", "Failed"})["phase"] == "Completed"
    env = env_lines(api, third, "third-worker-0")
    assert env["RUNAI_NUM_OF_GPUS"] == "'0.3'"
    assert env["CUDA_VISIBLE_DEVICES"] in {"'0'", "'1'"}


def test_a_gang_larger_than_its_pool_is_parked_with_the_reason(api: Api) -> None:
    workload_id = gpu_workload(
        api, "huge", PRINTS_GPUS, {"gpuDevicesRequest": 2}, nodePools=["a100"]
    )

    def parked() -> dict[str, Any] | None:
        item = api.workload(workload_id)
        return item if "never fit" in item["phaseMessage"] else None

    item = poll(parked, timeout=30, what="the gang parked")
    assert item["phase"] == "Pending"
    assert item["phaseMessage"] == (
        "the workload can never fit this cluster: needs 4 GPUs in node pool a100, 2 in all"
    )


def events_of(api: Api, workload_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/api/v1/workloads/{workload_id}/events")
    assert response.status_code == 200, response.text
    return list(response.json()["events"])


def test_a_higher_priority_workload_preempts_a_training_one_which_queues_again(
    api: Api,
) -> None:
    training = gpu_workload(api, "training", WAITS, {"gpuDevicesRequest": 1}, nodePools=["a100"])
    api.wait_for(training, {"Running"})
    build = gpu_workload(
        api, "build", WAITS, {"gpuDevicesRequest": 1}, nodePools=["a100"], priorityClass="build"
    )
    assert api.wait_for(build, {"Running"})["phase"] == "Running"
    preempted = api.workload(training)
    assert preempted["phase"] == "Pending"
    preemptions = [e for e in events_of(api, training) if e["reason"] == "Preempted"]
    assert [e["message"] for e in preemptions] == ["preempted by workload build"]
    phases = phases_of(api, training)
    after = phases[phases.index("Running") :]
    assert after[:3] == ["Running", "Terminating", "Pending"], phases
    assert set(after[3:]) <= {"Pending"}, phases
    # once the build workload is gone, the training one runs again
    assert api.delete(f"/api/v1/workloads/distributed/{build}").status_code == 202
    assert api.wait_for(training, {"Running"})["phase"] == "Running"


def test_terminate_after_preemption_fails_the_preempted_workload(api: Api) -> None:
    training = gpu_workload(
        api,
        "fragile",
        WAITS,
        {"gpuDevicesRequest": 1},
        nodePools=["a100"],
        terminateAfterPreemption=True,
    )
    api.wait_for(training, {"Running"})
    urgent = gpu_workload(
        api, "urgent", WAITS, {"gpuDevicesRequest": 1}, nodePools=["a100"], priorityClass="build"
    )
    failed = api.wait_for(training, {"Failed"})
    assert failed["phaseMessage"] == (
        "preempted by workload urgent; terminated (terminateAfterPreemption)"
    )
    assert api.wait_for(urgent, {"Running"})["phase"] == "Running"


def test_a_non_preemptible_training_workload_is_not_preempted(api: Api) -> None:
    steady = gpu_workload(
        api,
        "steady",
        WAITS,
        {"gpuDevicesRequest": 1},
        nodePools=["a100"],
        preemptibility="non-preemptible",
    )
    api.wait_for(steady, {"Running"})
    build = gpu_workload(
        api,
        "build",
        PRINTS_GPUS,
        {"gpuDevicesRequest": 1},
        nodePools=["a100"],
        priorityClass="build",
    )

    def explained() -> dict[str, Any] | None:
        item = api.workload(build)
        return item if "needs" in item["phaseMessage"] else None

    assert poll(explained, timeout=30, what="the build workload waiting")["phase"] == "Pending"
    assert api.workload(steady)["phase"] == "Running"


def test_an_elastic_gang_starts_with_its_minimum_and_grows_as_room_frees(api: Api) -> None:
    """minReplicas 2 of 3 worker pods: with room for two on the a100 node, worker-0 and
    worker-1 start and the workload runs; worker-2 is listed Pending until the holder leaves."""
    holder = gpu_workload(api, "holder", WAITS, {"cpuCoreRequest": 1.5}, nodePools=["a100"])
    api.wait_for(holder, {"Running"})
    body = distributed(
        api.cluster_id(),
        name="stretchy",
        workers=3,
        args=WAITS,
        compute={"cpuCoreRequest": 2.5},
        nodePools=["a100"],
        minReplicas=2,
        maxReplicas=3,
    )
    elastic = str(api.create(body)["workloadId"])
    assert api.wait_for(elastic, {"Running"})["phase"] == "Running"

    def phases() -> dict[str, str]:
        pods = api.get(f"/api/v1/workloads/{elastic}/pods").json()["pods"]
        return {p["name"]: p["k8sPhase"] for p in pods}

    waiting = {
        "stretchy-worker-0": "Running",
        "stretchy-worker-1": "Running",
        "stretchy-worker-2": "Pending",
    }
    poll(lambda: phases() == waiting or None, timeout=30, what=f"pods {waiting}")
    reasons = [e["reason"] for e in events_of(api, elastic)]
    assert "Waiting" in reasons
    scheduled = [e["message"] for e in events_of(api, elastic) if e["reason"] == "Scheduled"]
    assert scheduled[0] == "2 of 3 pods admitted together on node alpha"

    assert api.delete(f"/api/v1/workloads/distributed/{holder}").status_code == 202
    grown = dict.fromkeys(waiting, "Running")
    poll(lambda: phases() == grown or None, timeout=30, what=f"pods {grown}")
    messages = [e["message"] for e in events_of(api, elastic) if e["reason"] == "Scheduled"]
    assert "room for stretchy-worker-2: starting" in messages
    assert api.workload(elastic)["phase"] == "Running"


def test_the_nodes_endpoint_shows_capacity_and_what_is_held(api: Api) -> None:
    half = {"gpuRequestType": "portion", "gpuPortionRequest": 0.5, "cpuCoreRequest": 1}
    workload_id = gpu_workload(api, "holding", WAITS, half, nodePools=["a100"])
    api.wait_for(workload_id, {"Running"})
    response = api.get(f"/api/v1/clusters/{api.cluster_id()}/nodes")
    assert response.status_code == 200, response.text
    alpha, beta = response.json()["nodes"]
    assert (alpha["name"], alpha["nodePool"], beta["name"], beta["nodePool"]) == (
        "alpha",
        "a100",
        "beta",
        "v100",
    )
    assert alpha["capacity"] == {"cpuCores": "8", "memory": "16Gi", "gpus": 2}
    # master and worker at half a GPU each, packed onto device 0
    assert alpha["allocated"] == {"cpuCores": "2", "memory": "0", "gpus": "1"}
    assert [d["allocated"] for d in alpha["gpuDevices"]] == ["1", "0"]
    assert beta["allocated"]["gpus"] == "0"
    assert [d["index"] for d in beta["gpuDevices"]] == [2, 3, 4, 5]
    missing = api.get("/api/v1/clusters/00000000-0000-0000-0000-000000000000/nodes")
    assert missing.status_code == 404
