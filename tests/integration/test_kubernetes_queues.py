"""The organisation's KAI queues on the cluster, against the fake API server over real HTTP:
the server's first start makes the default department's and project's queues; a project
created through the API has its queue before its first job, whose queue label names it; the
cluster reconciler's loop, told that the organisation changed, updates a queue whose quota
changed (and applies nothing when nothing changed) and removes the queue of a deleted
project, its department's staying."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import delete, update

from lockstep.config import KubeScheduler, RuntimeKind, Settings
from lockstep.reconciler.queue import WorkQueue
from lockstep.runtimes.kubernetes.cluster import KubeCluster
from lockstep.runtimes.kubernetes.reconciler import QUEUES_KEY, KubernetesReconciler
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.store.database import Database
from lockstep.store.tables import projects
from tests.conftest import in_process, make_settings
from tests.support.api import Api, poll
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.requests import distributed

QUEUES = ("scheduling.run.ai/v2", "queues")
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def gpu(deserved: float, limit: float = -1, weight: float = 1) -> list[dict[str, Any]]:
    return [{"gpu": {"deserved": deserved, "limit": limit, "overQuotaWeight": weight}}]


def queue_on(cluster: FakeKubernetes, name: str) -> dict[str, Any]:
    return poll(lambda: cluster.get(*QUEUES, None, name), what=f"the queue {name}", timeout=20)


@pytest.fixture
def cluster() -> Iterator[FakeKubernetes]:
    with FakeKubernetes() as fake:
        yield fake


def test_the_server_keeps_the_queues_and_a_job_names_its_projects(
    tmp_path: Path, database_url: str, cluster: FakeKubernetes
) -> None:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings: Settings = make_settings(tmp_path / "data", database_url).model_copy(
        update={"runtime": RuntimeKind.KUBERNETES, "kubeconfig": kubeconfig}
    )
    with in_process(settings) as client:
        api = Api.login(client)
        default = queue_on(cluster, "default")
        assert default["spec"]["parentQueue"] == "department.default"
        assert default["spec"]["resources"]["gpu"]["limit"] == -1  # no limit stored
        assert queue_on(cluster, "department.default")["spec"].get("parentQueue") is None

        body = {"name": "team-a", "clusterId": api.cluster_id(), "resources": gpu(8, 16, 2)}
        response = api.post("/api/v1/org-unit/projects", json=body)
        assert response.status_code == 201, response.text
        project_id = str(response.json()["id"])
        api.create(distributed(api.cluster_id(), name="train", project_id=project_id))
        job = poll(
            lambda: cluster.get("kubeflow.org/v1", "pytorchjobs", "runai-team-a", "train"),
            what="the job",
            timeout=20,
        )
        # Made before the job (the job's project was new since the last sync), not at a resync.
        queue = cluster.get(*QUEUES, None, "team-a")
        assert queue is not None
        assert job["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
        assert queue["spec"]["parentQueue"] == "department.default"
        assert queue["spec"]["resources"]["gpu"] == {"quota": 8, "limit": 16, "overQuotaWeight": 2}


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    store = Database(database_url)
    store.migrate()
    yield store
    store.dispose()


@pytest.fixture
def kube(cluster: FakeKubernetes, tmp_path: Path) -> Iterator[KubeCluster]:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    with KubeCluster.from_config(kubeconfig, "fake") as connected:
        yield connected


def set_resources(database: Database, project_id: str, resources: list[dict[str, Any]]) -> None:
    with database.engine.begin() as connection:  # what an update of the project does
        connection.execute(
            update(projects)
            .where(projects.c.id == int(project_id))
            .values(resources=orjson.dumps(resources).decode())
        )


def test_queues_follow_quota_changes_and_deletions(
    database: Database, kube: KubeCluster, cluster: FakeKubernetes
) -> None:
    with database.write() as unit:
        unit.organization.add_cluster("c", "cluster", NOW)
        research = unit.organization.add_department(
            name="research", cluster_id="c", created_by="admin", resources=gpu(24), now=NOW
        )
        team = unit.organization.add_project(
            name="team-a",
            cluster_id="c",
            department_id=research.id,
            created_by="admin",
            requested_namespace=None,
            resources=gpu(8, 16, 2),
            now=NOW,
        )
    queue = WorkQueue()
    reconciler = KubernetesReconciler(
        database, kube, settings=KubernetesSettings(), clock=lambda: NOW, queue=queue
    )
    reconciler.start()
    try:
        created = queue_on(cluster, "team-a")  # at start
        assert created["spec"]["resources"]["gpu"]["quota"] == 8
        assert queue_on(cluster, "department.research")["spec"]["resources"]["gpu"]["quota"] == 24

        set_resources(database, team.id, gpu(4, 16, 2))
        queue.add(QUEUES_KEY)
        poll(
            lambda: (
                (cluster.get(*QUEUES, None, "team-a") or {})["spec"]["resources"]["gpu"]["quota"]
                == 4
                or None
            ),
            what="the quota change on the queue",
            timeout=20,
        )

        applies = len(cluster.requests_to("PATCH", "/apis/scheduling.run.ai/v2/queues"))
        assert reconciler.sync_queues()  # nothing changed: nothing applied
        assert len(cluster.requests_to("PATCH", "/apis/scheduling.run.ai/v2/queues")) == applies

        with database.engine.begin() as connection:  # what a deletion of the project does
            connection.execute(delete(projects).where(projects.c.id == int(team.id)))
        queue.add(QUEUES_KEY)
        poll(
            lambda: cluster.get(*QUEUES, None, "team-a") is None or None,
            what="the deleted project's queue removed",
            timeout=20,
        )
        assert cluster.get(*QUEUES, None, "department.research") is not None
    finally:
        reconciler.stop()


def test_a_queue_changed_on_the_cluster_is_put_back(
    database: Database, kube: KubeCluster, cluster: FakeKubernetes
) -> None:
    with database.write() as unit:
        unit.organization.add_cluster("c", "cluster", NOW)
        unit.organization.add_department(
            name="research", cluster_id="c", created_by="admin", resources=gpu(2), now=NOW
        )
    reconciler = KubernetesReconciler(
        database, kube, settings=KubernetesSettings(), clock=lambda: NOW, queue=WorkQueue()
    )
    assert reconciler.sync_queues()
    cluster.update(
        *QUEUES,
        None,
        "department.research",
        lambda queue: queue["spec"]["resources"]["gpu"].update(quota=100),
    )
    assert reconciler.sync_queues()
    restored = cluster.get(*QUEUES, None, "department.research")
    assert restored is not None and restored["spec"]["resources"]["gpu"]["quota"] == 2


def test_under_volcano_a_project_is_a_volcano_queue_its_pod_group_names(
    tmp_path: Path, database_url: str, cluster: FakeKubernetes
) -> None:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings: Settings = make_settings(tmp_path / "data", database_url).model_copy(
        update={
            "runtime": RuntimeKind.KUBERNETES,
            "kubeconfig": kubeconfig,
            "kube_scheduler": KubeScheduler.VOLCANO,
        }
    )
    volcano = ("scheduling.volcano.sh/v1beta1", "queues")
    with in_process(settings) as client:
        api = Api.login(client)
        body = {"name": "team-v", "clusterId": api.cluster_id(), "resources": gpu(4, 8, 3)}
        response = api.post("/api/v1/org-unit/projects", json=body)
        assert response.status_code == 201, response.text
        project_id = str(response.json()["id"])
        api.create(distributed(api.cluster_id(), name="train", project_id=project_id))
        group = poll(
            lambda: next(
                iter(cluster.objects("scheduling.volcano.sh/v1beta1", "podgroups", "runai-team-v")),
                None,
            ),
            what="the job's pod group",
            timeout=20,
        )
        queue = poll(lambda: cluster.get(*volcano, None, "team-v"), what="the queue", timeout=20)
        assert group["spec"]["queue"] == "team-v"
        spec = queue["spec"]
        # Only GPUs are bounded: the CPU and memory quotas the project leaves out are not
        # enforced, and a quantity cannot say "unlimited".
        assert spec["deserved"] == {"nvidia.com/gpu": "4"}
        assert spec["capability"] == {"nvidia.com/gpu": "8"}
        assert spec["weight"] == 3 and spec["parent"] == "department.default"
        assert cluster.get(*volcano, None, "department.default") is not None
        assert cluster.get(*QUEUES, None, "team-v") is None  # no KAI queue under Volcano
