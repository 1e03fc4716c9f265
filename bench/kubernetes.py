"""The Kubernetes runtime's costs, in one run:

1. Rendering: manifests per second for a 64-worker PyTorch job (with ports, storage, GPUs),
   side by side with the local runtime's rendering of the same workload (its pod launches).
2. API calls per workload start: lockstep serving the API in process, driving the fake API
   server over HTTP (tests/support/fake_kubernetes.py); one workload submitted, counted until
   it runs (the test acting as operator and kubelet). Target: at most 5 writes.

    .venv/bin/python -m bench.kubernetes [--seconds 3]
"""

from __future__ import annotations

import argparse
import collections
import copy
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.fake_kubernetes import FakeKubernetes
from tests.unit.k8s import workload_of

from lockstep.api.app import create_app
from lockstep.config import RuntimeKind, Settings
from lockstep.runtimes.kubernetes.render import render
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.runtimes.local.workload_launches import Launches

WORKERS = 64
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def request(cluster_id: str = "6f1c1f0e-8a5e-4c1b-9d7e-2f0a7d1b3c4e") -> dict[str, Any]:
    return {
        "name": "big",
        "projectId": "1",
        "clusterId": cluster_id,
        "spec": {
            "distributedFramework": "PyTorch",
            "numWorkers": WORKERS,
            "image": "pytorch/pytorch:2.5.1",
            "command": "torchrun",
            "args": "--nproc-per-node 8 train.py --epochs 90",
            "compute": {"gpuDevicesRequest": 8, "cpuCoreRequest": 32, "cpuMemoryRequest": "256G"},
            "environmentVariables": [{"name": "NCCL_DEBUG", "value": "INFO"}],
            "ports": [{"container": 6006, "serviceType": "ClusterIP"}],
            "storage": {"hostPath": [{"path": "/datasets", "mountPath": "/data"}]},
        },
    }


def rate(work: Callable[[], object], seconds: float) -> float:
    """Calls per second of `work`, over about `seconds`."""
    work()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        work()
        count += 1
    return count / (time.perf_counter() - start)


def rendering(seconds: float) -> None:
    workload = workload_of(request())
    plan = workload.plan()
    settings = KubernetesSettings()
    manifests = render(workload, plan, settings)
    launches = Launches(Path(tempfile.mkdtemp()), dict(os.environ))
    kubernetes = rate(lambda: render(workload, plan, settings), seconds)
    local = rate(lambda: launches.render(workload, plan), seconds)
    pods = sum(1 for _ in plan.replicas)
    print(f"rendering a {WORKERS}-worker PyTorch job ({pods} pods):")
    print(f"  kubernetes manifests  {kubernetes:8.1f} jobs/s  ({len(manifests)} manifests each)")
    print(f"  local launches        {local:8.1f} jobs/s  ({pods} launches each)")


def start_pods(cluster: FakeKubernetes, job: dict[str, Any]) -> None:
    for replica_type, replica in job["spec"]["pytorchReplicaSpecs"].items():
        for index in range(replica["replicas"]):
            template = copy.deepcopy(replica["template"])
            cluster.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"big-{replica_type.lower()}-{index}",
                        "namespace": "runai-default",
                        "labels": {
                            **template["metadata"].get("labels", {}),
                            "training.kubeflow.org/replica-type": replica_type.lower(),
                            "training.kubeflow.org/replica-index": str(index),
                        },
                    },
                    "spec": {**template["spec"], "nodeName": f"node-{index % 8}"},
                    "status": {
                        "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                }
            )


def api_calls() -> None:
    with FakeKubernetes() as cluster, tempfile.TemporaryDirectory() as directory:
        settings = Settings(
            data_dir=Path(directory) / "data",
            bootstrap_client_id=ADMIN_ID,
            bootstrap_client_secret=ADMIN_SECRET,
            runtime=RuntimeKind.KUBERNETES,
            kubeconfig=cluster.write_kubeconfig(Path(directory) / "kubeconfig"),
        )
        with TestClient(create_app(settings)) as client:
            api = Api.login(client)
            before = len(cluster.requests)
            created = api.create(request(api.cluster_id()))
            job = poll(
                lambda: cluster.get("kubeflow.org/v1", "pytorchjobs", "runai-default", "big"),
                what="the job",
                timeout=30,
            )
            start_pods(cluster, job)
            cluster.set_conditions(
                "kubeflow.org/v1",
                "pytorchjobs",
                "runai-default",
                "big",
                [("Created", "True"), ("Running", "True")],
            )
            api.wait_for(created["workloadId"], ["Running"], timeout=30)
            calls = [r for r in cluster.requests[before:] if r.param("watch") != "true"]
    writes = collections.Counter(f"{r.method} {r.path}" for r in calls if r.method in WRITES)
    reads = collections.Counter(r.method for r in calls if r.method not in WRITES)
    print(f"API calls to start one {WORKERS}-worker workload (until Running), watches aside:")
    print(f"  writes: {sum(writes.values())} (target at most 5)")
    for call, count in sorted(writes.items()):
        print(f"    {count} x {call}")
    print(f"  reads:  {sum(reads.values())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    options = parser.parse_args()
    rendering(options.seconds)
    api_calls()


if __name__ == "__main__":
    main()
