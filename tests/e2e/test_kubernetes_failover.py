"""Two `lockstep serve` replicas on one PostgreSQL store, driving one (fake) cluster: only the
leader acts on the cluster, a workload submitted through the other replica is applied by the
leader at once (the store's change feed), and when the leader is killed the other replica
takes over — applying new workloads and reporting the cluster's changes to old ones."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fresh_database
from tests.support.api import poll
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.requests import distributed
from tests.support.server import LiveServer

NAMESPACE = "runai-default"
PYTORCH = ("kubeflow.org/v1", "pytorchjobs")


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request, "postgresql", tmp_path) as url:
        yield url


def replica(data_dir: Path, database_url: str, kubeconfig: Path) -> LiveServer:
    settings = {"RUNTIME": "kubernetes", "KUBECONFIG": str(kubeconfig), "LOG_LEVEL": "info"}
    return LiveServer(data_dir, database_url, settings=settings)


def leads(server: LiveServer) -> bool | None:
    return True if "leading: this process reconciles" in server.log() else None


def test_the_follower_takes_over_when_the_leader_dies(postgres_url: str, tmp_path: Path) -> None:
    with FakeKubernetes() as cluster:
        kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        data_dir = tmp_path / "data"  # shared, as the keys are in production (a Secret)
        first = replica(data_dir, postgres_url, kubeconfig).start()
        second = None
        try:
            poll(lambda: leads(first), what="the first replica to lead", timeout=30)
            second = replica(data_dir, postgres_url, kubeconfig).start()
            api = second.api()
            old = api.create(distributed(api.cluster_id(), name="before", workers=1))
            poll(
                lambda: cluster.get(*PYTORCH, NAMESPACE, "before"),
                what="the job submitted on the follower, applied by the leader",
                timeout=20,
            )
            assert leads(second) is None

            first.stop(signal.SIGKILL)
            poll(lambda: leads(second), what="the second replica to take over", timeout=30)
            api.create(distributed(api.cluster_id(), name="after", workers=1))
            poll(
                lambda: cluster.get(*PYTORCH, NAMESPACE, "after"),
                what="a job applied by the new leader",
                timeout=20,
            )
            cluster.set_conditions(
                *PYTORCH, NAMESPACE, "before", [("Created", "True"), ("Failed", "True")]
            )
            api.wait_for(old["workloadId"], ["Failed"], timeout=20)
            jobs = f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/pytorchjobs"
            for name in ("before", "after"):  # neither leader applied a job twice
                assert len(cluster.requests_to("PATCH", f"{jobs}/{name}")) == 1, name
        finally:
            first.stop(signal.SIGKILL)
            if second is not None:
                second.stop()
