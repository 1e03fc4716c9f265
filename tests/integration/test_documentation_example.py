"""The documentation's example request is accepted as it is (only clusterId and projectId
replaced by real ones) and GET returns every field as sent, ids and quantities as strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import Settings
from lockstep.schemas.distributed import DistributedWorkload
from tests.conftest import make_settings
from tests.support.access import make_privileged
from tests.support.api import Api, poll
from tests.support.contract import assert_conforms

EXAMPLES = Path(__file__).resolve().parents[1] / "reference" / "examples"
EXAMPLE_DATA_VOLUME = "123e4567-e89b-12d3-a456-426614174000"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """A server that has the data volume the example mounts (an administrator registered it)."""
    (tmp_path / "example-data").mkdir()
    volumes = {EXAMPLE_DATA_VOLUME: tmp_path / "example-data"}
    return make_settings(tmp_path / "data", database_url).model_copy(
        update={"data_volumes": volumes}
    )


@pytest.fixture(autouse=True)
def privileged_project(api: Api) -> None:
    """The example mounts host paths, which only a privileged project may ask (the Pod
    Security levels are tested in test_pod_security.py)."""
    make_privileged(api)


SECRET_NAMES = frozenset(
    f"{spec}/environmentVariables/0/secret/name" for spec in ("spec", "masterSpec")
)
"""The example names a secret `postgress_secret`, which the document's pattern forbids; it is
accepted and returned as sent. Every other field must conform."""


def _as_sent(value: Any) -> Any:
    """The request as the document's types say it is returned: quantities as strings."""
    if isinstance(value, dict):
        return {
            key: str(item) if key == "quantity" and isinstance(item, int) else _as_sent(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_as_sent(item) for item in value]
    return value


def test_example_request_is_accepted_and_read_back_unchanged(api: Api) -> None:
    request = json.loads((EXAMPLES / "create-request.json").read_text())
    request["clusterId"] = api.cluster_id()
    request["projectId"] = 1  # an integer, as the example sends it
    created = api.post("/api/v1/workloads/distributed", json=request)
    assert created.status_code == 202, created.text
    body = assert_conforms(created, "/api/v1/workloads/distributed", tolerate=SECRET_NAMES)
    assert body["requestedName"] == "my-workload-name"
    assert body["name"].startswith("my-workload-name-")
    assert len(body["name"]) == len("my-workload-name") + 6
    assert body["projectId"] == "1"
    assert body["desiredPhase"] == "Running"

    fetched = api.get(f"/api/v1/workloads/distributed/{body['workloadId']}")
    got = assert_conforms(
        fetched, "/api/v1/workloads/distributed/{workloadId}", tolerate=SECRET_NAMES
    )
    for key in ("spec", "masterSpecSameAsWorker", "masterSpec"):
        assert got[key] == _as_sent(request[key]), key
    assert got["spec"]["compute"]["extendedResources"][0]["quantity"] == "2"
    parsed = DistributedWorkload.model_validate_json(fetched.content)  # lockstep's own model
    assert parsed.master_spec is not None and parsed.master_spec.to_wire() == got["masterSpec"]
    assert got["projectId"] == "1"
    assert got["clusterId"] == request["clusterId"]


def test_example_workload_is_parked_naming_the_node_pools_it_asks_for(api: Api) -> None:
    """The example asks for a pod affinity, node pools and a node type this machine's node
    lacks: it waits, parked, with a message naming what no node offers."""
    request = json.loads((EXAMPLES / "create-request.json").read_text())
    request["clusterId"] = api.cluster_id()
    request["projectId"] = "1"
    workload_id = api.create(request)["workloadId"]

    def explained_for(workload_id: str) -> dict[str, Any] | None:
        item = api.workload(workload_id)
        return item if "never fit" in item["phaseMessage"] else None

    item = poll(lambda: explained_for(workload_id), timeout=30, what="a pending reason")
    assert item["phase"] == "Pending"
    # an MPI workload; its podAffinity (Required, topology key "text") is the first thing no
    # node offers
    assert item["phaseMessage"] == (
        "the workload can never fit this cluster: "
        "no node has the label text that the pod affinity requires"
    )
    del request["spec"]["podAffinity"], request["masterSpec"]["podAffinity"]
    request["name"] = "without-affinity"
    second = api.create(request)["workloadId"]
    item = poll(lambda: explained_for(second), timeout=30, what="a pending reason")
    assert item["phaseMessage"] == (
        "the workload can never fit this cluster: no node in node pools my-node-pool-a, "
        f"my-node-pool-b of node type my-node-type accepts pod {item['name']}-launcher-0 "
        "(the nodes are in node pools default)"
    )
