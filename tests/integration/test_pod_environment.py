"""What a pod's environment holds on the local runtime, through the API: secrets and config
maps of its project read when it starts (and never written to disk in clear), a missing one
named in the failure, a home directory of its own when asked, and the local environment mapped
to its image (the server here maps `python` to a venv), or a condition saying there is none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockstep.config import Settings
from tests.conftest import make_settings
from tests.support.api import Api
from tests.support.pods import pod_log, settled_pods
from tests.support.requests import distributed, python

PRINTS_ENV = python(
    "import os\n"
    "for name in ('DB_PASSWORD', 'MODE', 'HOME', 'VIRTUAL_ENV', 'PATH'):\n"
    "    print(name, os.environ.get(name))"
)


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A directory that looks like a venv (the pods' command is absolute, so it runs none of
    it; only their environment says where it is)."""
    prefix = tmp_path / "envs" / "python"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return prefix


@pytest.fixture
def settings(tmp_path: Path, database_url: str, venv: Path) -> Settings:
    configured = make_settings(tmp_path / "data", database_url)
    return configured.model_copy(update={"image_environments": {"python": venv}})


def with_env(api: Api, name: str, *variables: dict[str, Any], **spec: Any) -> dict[str, Any]:
    body = distributed(api.cluster_id(), name=name, workers=1, args=PRINTS_ENV, **spec)
    body["spec"]["environmentVariables"] = list(variables)
    body["spec"]["backoffLimit"] = 0
    return body


def test_secret_and_config_map_references_are_read_when_pods_start(
    api: Api, tmp_path: Path
) -> None:
    secrets = "/api/v1/org-unit/projects/1/secrets"
    assert api.post(secrets, json={"name": "db", "data": {"password": "hunter2"}}).is_success
    configmaps = "/api/v1/org-unit/projects/1/configmaps"
    assert api.post(configmaps, json={"name": "cfg", "data": {"mode": "fast"}}).is_success
    body = with_env(
        api,
        "wired",
        {"name": "DB_PASSWORD", "secret": {"name": "db", "key": "password"}},
        {"name": "MODE", "configMap": {"name": "cfg", "key": "mode"}},
    )
    workload_id = api.create(body)["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    settled_pods(api, workload_id)  # the master's end ends the workload, not the worker's
    log = pod_log(api, workload_id, "wired-worker-0")
    assert "DB_PASSWORD hunter2\nMODE fast\n" in log

    data_dir = Path(api.client.app.state.settings.data_dir)  # type: ignore[attr-defined]
    runtime_files = (data_dir / "runtime" / "local" / workload_id).rglob("*.json")
    assert all(b"hunter2" not in path.read_bytes() for path in runtime_files)


def test_a_missing_secret_fails_the_workload_naming_it(api: Api) -> None:
    body = with_env(
        api, "unwired", {"name": "DB_PASSWORD", "secret": {"name": "absent", "key": "password"}}
    )
    workload_id = api.create(body)["workloadId"]
    failed = api.wait_for(workload_id, {"Completed", "Failed"})
    assert failed["phase"] == "Failed"
    assert "environment variable DB_PASSWORD" in failed["phaseMessage"]
    assert "no secret 'absent' with a key 'password'" in failed["phaseMessage"]


def test_create_home_dir_gives_each_pod_a_home_of_its_own(api: Api) -> None:
    workload_id = api.create(with_env(api, "homed", createHomeDir=True))["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    settled_pods(api, workload_id)  # the master's end ends the workload, not the worker's
    homes = {
        pod: pod_log(api, workload_id, f"homed-{pod}").splitlines()[2].removeprefix("HOME ")
        for pod in ("master-0", "worker-0")
    }
    assert homes["master-0"] != homes["worker-0"]
    for pod, home in homes.items():
        assert home.endswith(f"/{workload_id}/homed-{pod}/home")
        assert Path(home).is_dir()


def test_a_mapped_image_runs_in_its_environment(api: Api, venv: Path) -> None:
    workload_id = api.create(with_env(api, "mapped"))["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    settled_pods(api, workload_id)  # the master's end ends the workload, not the worker's
    printed = dict(
        line.split(" ", 1) for line in pod_log(api, workload_id, "mapped-worker-0").splitlines()
    )
    assert printed["VIRTUAL_ENV"] == str(venv)
    assert printed["PATH"].startswith(f"{venv}/bin:")
    conditions = api.workload(workload_id)["conditions"]
    assert [c["type"] for c in conditions] == ["Completed"]


def test_an_unmapped_image_runs_with_a_condition_saying_so(api: Api) -> None:
    workload_id = api.create(with_env(api, "unmapped", image="pytorch/pytorch:2.4"))["workloadId"]
    assert api.wait_for(workload_id, {"Completed", "Failed"})["phase"] == "Completed"
    settled_pods(api, workload_id)  # the master's end ends the workload, not the worker's
    printed = pod_log(api, workload_id, "unmapped-worker-0")
    assert "VIRTUAL_ENV None" in printed
    condition = api.workload(workload_id)["conditions"][1]
    assert condition["type"] == "ImageEnvironment"
    assert condition["status"] == "False"
    assert condition["reason"] == "ImageNotMapped"
    assert "pytorch/pytorch:2.4" in condition["message"]
