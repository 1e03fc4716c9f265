"""What `lockstep training <framework> submit` sends (cli/requests.py) and where the CLI finds
its server (cli/contexts.py): each flag's field, `-f` underneath the flags, and contexts with
their environment overrides."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lockstep.cli import contexts
from lockstep.cli.requests import BadFlag, MasterOptions, SubmitOptions, build


def options(**fields: object) -> SubmitOptions:
    required = {"name": "job", "framework": "pytorch", "project_id": "1", "cluster_id": "c"}
    return SubmitOptions(**(required | fields))  # type: ignore[arg-type]


def test_the_least_a_request_has() -> None:
    assert build(options()) == {
        "name": "job",
        "projectId": "1",
        "clusterId": "c",
        "masterSpecSameAsWorker": True,
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 1},
    }


@pytest.mark.parametrize(
    ("framework", "wire"),
    [("pytorch", "PyTorch"), ("mpi", "MPI"), ("tf", "TF"), ("xgboost", "XGBoost"), ("jax", "JAX")],
)
def test_frameworks(framework: str, wire: str) -> None:
    body = build(SubmitOptions(name="j", framework=framework, project_id="1", cluster_id="c"))
    assert body["spec"]["distributedFramework"] == wire


def test_the_command_is_split_into_command_and_shell_quoted_args() -> None:
    spec = build(options(command=["python", "train.py", "--name", "a b"]))["spec"]
    assert (spec["command"], spec["args"]) == ("python", "train.py --name 'a b'")


def test_gpu_portion_and_memory_set_their_request_type() -> None:
    assert build(options(gpu_portion=0.5))["spec"]["compute"] == {
        "gpuRequestType": "portion",
        "gpuPortionRequest": 0.5,
        "gpuDevicesRequest": 1,
    }
    assert build(options(gpu_memory="4G", gpu_devices=2))["spec"]["compute"] == {
        "gpuDevicesRequest": 2,
        "gpuRequestType": "memory",
        "gpuMemoryRequest": "4G",
    }


def test_flags_go_on_top_of_the_request_file() -> None:
    base = {
        "name": "from-file",
        "spec": {
            "image": "base",
            "numWorkers": 4,
            "environmentVariables": [{"name": "A", "value": "1"}],
        },
    }
    body = build(options(base=base, image="override", environment=["B=2"], labels=["team=ml"]))
    spec = body["spec"]
    assert body["name"] == "job"
    assert spec["image"] == "override" and spec["numWorkers"] == 4
    assert spec["environmentVariables"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
    ]
    assert spec["labels"] == [{"name": "team", "value": "ml"}]


@pytest.mark.parametrize(
    ("text", "toleration"),
    [
        ("gpu", {"name": "gpu", "key": "gpu", "operator": "Exists"}),
        (
            "gpu:NoSchedule",
            {"name": "gpu", "key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
        ),
        ("gpu=a", {"name": "gpu", "key": "gpu", "operator": "Equal", "value": "a"}),
    ],
)
def test_tolerations(text: str, toleration: dict[str, str]) -> None:
    assert build(options(tolerations=[text]))["spec"]["tolerations"] == [toleration]


def test_bad_pairs_name_the_flag() -> None:
    with pytest.raises(BadFlag, match="-e takes KEY=VALUE"):
        build(options(environment=["NOVALUE"]))
    with pytest.raises(BadFlag, match="--toleration"):
        build(options(tolerations=["=x"]))


def test_contexts_round_trip_privately_and_the_environment_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lockstep" / "config.json"
    monkeypatch.setenv("LOCKSTEP_CONFIG", str(path))
    monkeypatch.delenv("LOCKSTEP_URL", raising=False)
    monkeypatch.delenv("LOCKSTEP_TOKEN", raising=False)
    with pytest.raises(contexts.NoContext, match="not logged in"):
        contexts.active()
    saved = contexts.Contexts(
        current="lab",
        contexts={
            "lab": contexts.Context(url="http://lab:8080", client_id="me", client_secret="s")
        },
    )
    contexts.save(saved)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert contexts.load() == saved
    assert contexts.active() == saved.contexts["lab"]
    monkeypatch.setenv("LOCKSTEP_TOKEN", "t")
    assert contexts.active() == contexts.Context(url="http://lab:8080", token="t")
    monkeypatch.setenv("LOCKSTEP_URL", "http://elsewhere")
    assert contexts.active() == contexts.Context(url="http://elsewhere", token="t")
    with pytest.raises(contexts.NoContext, match="no context named 'gone'"):
        contexts.active("gone")


def test_master_flags_give_the_master_a_spec_of_its_own() -> None:
    body = build(
        options(
            image="img",
            command=["python", "train.py"],
            environment=["A=1"],
            gpu_devices=2,
            master=MasterOptions(
                command="python", args="serve.py", environment=["A=2", "B=3"], gpu_portion=0.5
            ),
        )
    )
    assert body["masterSpecSameAsWorker"] is False
    assert body["masterSpec"] == {
        "image": "img",
        "command": "python",
        "args": "serve.py",
        "environmentVariables": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
        "compute": {"gpuDevicesRequest": 2, "gpuRequestType": "portion", "gpuPortionRequest": 0.5},
    }
    assert body["spec"]["compute"] == {"gpuDevicesRequest": 2}
    same = build(options(master=MasterOptions()))
    assert same["masterSpecSameAsWorker"] is True and "masterSpec" not in same


def test_name_prefix() -> None:
    assert build(options(name_prefix=True))["useGivenNameAsPrefix"] is True
    assert "useGivenNameAsPrefix" not in build(options())


@pytest.mark.parametrize("framework", ["pytorch", "tf", "xgboost", "jax"])
def test_no_master_counts_every_pod_among_the_workers(framework: str) -> None:
    body = build(
        SubmitOptions(
            name="j", framework=framework, project_id="1", cluster_id="c", workers=4, no_master=True
        )
    )
    assert body["spec"]["numWorkers"] == 3
    assert body["masterSpecSameAsWorker"] is True and "masterSpec" not in body


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"workers": 1}, "needs --workers 2 or more"),
        ({"framework": "mpi", "workers": 3}, "always has its launcher"),
        ({"workers": 3, "master": MasterOptions(args="x")}, "cannot be combined"),
    ],
)
def test_no_master_refuses_what_it_cannot_mean(fields: dict[str, object], message: str) -> None:
    with pytest.raises(BadFlag, match=message):
        build(options(no_master=True, **fields))
