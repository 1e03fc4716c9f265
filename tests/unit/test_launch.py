"""What the local runtime runs for a pod (runtimes/local/pod_launch.py): shell-style argv, the
environment a pod inherits, user variables, framework wiring and pod identity in order of
precedence, `podFieldRef` paths, secret and config map references, limits and image
environments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.secrets import ProjectSecrets, SecretKind
from lockstep.frameworks import pytorch
from lockstep.frameworks.endpoints import Endpoint
from lockstep.frameworks.registry import WIRING
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.pod_launch import (
    LOOPBACK,
    WORKER_AGENT,
    ImageEnvironment,
    Launch,
    Limits,
    PodIdentity,
    ValueReference,
    argv_of,
    environment_for_image,
    launch_of,
    resolve,
    resolve_references,
)
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import EnvironmentVariable
from tests.unit.specs import plan_of

INHERITED = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/lockstep",
    "USER": "lockstep",
    "LOGNAME": "lockstep",
    "SHELL": "/bin/bash",
    "LANGUAGE": "en",
    "TERM": "xterm",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "TMPDIR": "/tmp",
    "LC_ALL": "C.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "LOCKSTEP_DATABASE_URL": "postgresql://user:password@db/lockstep",
    "AWS_SECRET_ACCESS_KEY": "do-not-leak",
    "PYTHONPATH": "/srv/lockstep",
    "VIRTUAL_ENV": "/srv/lockstep/.venv",
    "CUDA_VISIBLE_DEVICES": "0,1",
    "HOSTNAME": "lockstep-host",
}
PASSED = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TERM",
    "LC_ALL",
    "LC_CTYPE",
}
"""What a container inherits from its image, more or less: never lockstep's own settings."""


def identity(plan: ReplicaPlan, index: int) -> PodIdentity:
    name = plan.replicas[index].pod_name
    return PodIdentity(uid=f"uid-{name}", name=name, namespace="runai-team", node_name="node-1")


def endpoints(plan: ReplicaPlan) -> dict[str, Endpoint]:
    return {r.pod_name: Endpoint(LOOPBACK, 30000 + i) for i, r in enumerate(plan.replicas)}


def launch(
    plan: ReplicaPlan | None = None,
    *,
    index: int = 1,
    inherited: dict[str, str] | None = None,
) -> Launch:
    """The launch of replica `index` (worker-0 by default) of `plan`."""
    plan = plan or plan_of("PyTorch", 2, name="job")
    return launch_of(
        plan,
        plan.replicas[index],
        pod=identity(plan, index),
        endpoints=endpoints(plan),
        inherited=INHERITED if inherited is None else inherited,
        project_id="1",
    )


def with_env(*variables: dict[str, Any]) -> ReplicaPlan:
    return plan_of("PyTorch", 2, name="job", spec={"environmentVariables": list(variables)})


def variable(**fields: Any) -> EnvironmentVariable:
    return EnvironmentVariable.model_validate_json(json.dumps(fields))


POD = PodIdentity(uid="0f0e-uid", name="job-worker-3", namespace="runai-team", node_name="gpu-7")


# --- argv -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "argv"),
    [
        ("python", "-c pass", ("python", "-c", "pass")),
        ("python -u", "train.py --lr 0.1", ("python", "-u", "train.py", "--lr", "0.1")),
        ("python", None, ("python",)),
        ("torchrun", "--nnodes=2 'my script.py'", ("torchrun", "--nnodes=2", "my script.py")),
        ("bash -c", "'echo \"$HOME\" && exit 3'", ("bash", "-c", 'echo "$HOME" && exit 3')),
        ("/opt/my\\ tools/run", "a\\ b", ("/opt/my tools/run", "a b")),
        ("python", "-c 'print(1)'  x   y", ("python", "-c", "print(1)", "x", "y")),
        ("  python  ", "  -V  ", ("python", "-V")),
        ("python", "''", ("python", "")),
    ],
)
def test_argv_is_split_like_a_shell(command: str, args: str | None, argv: tuple[str, ...]) -> None:
    spec: dict[str, Any] = {"command": command}
    if args is not None:
        spec["args"] = args
    plan = plan_of(spec=spec, without=() if args is not None else ("args",), name="job")
    for replica in plan.replicas:
        assert argv_of(plan, replica) == argv


def test_leader_with_its_own_spec_runs_its_own_command() -> None:
    master = {"image": "m:1", "command": "python", "args": "lead.py"}
    plan = plan_of(name="job", same_as_worker=False, master=master)
    assert argv_of(plan, plan.leader) == ("python", "lead.py")
    assert argv_of(plan, plan.workers[0]) == ("python", "-c", "pass")


def test_no_command_cannot_run_locally() -> None:
    plan = plan_of(name="job", without=("command", "args"))
    with pytest.raises(PodStartError, match=r"pod job-worker-0 has no command.*set spec\.command"):
        argv_of(plan, plan.replicas[1])


def test_args_without_a_command_cannot_run_locally() -> None:
    """On Kubernetes args alone go to the image's entrypoint, which lockstep cannot run."""
    plan = plan_of(name="job", without=("command",))
    with pytest.raises(PodStartError, match="has no command"):
        argv_of(plan, plan.replicas[0])


def test_mpi_workers_without_a_command_run_the_worker_agent() -> None:
    plan = plan_of(
        "MPI",
        2,
        name="job",
        same_as_worker=False,
        master={"image": "i", "command": "mpirun"},
        without=("command", "args"),
    )
    assert argv_of(plan, plan.leader) == ("mpirun",)
    for worker in plan.workers:
        assert argv_of(plan, worker) == WORKER_AGENT


def test_launch_of_a_pod_without_command_is_a_pod_start_error() -> None:
    with pytest.raises(PodStartError, match="has no command"):
        launch(plan_of(name="job", without=("command", "args")))


def test_unbalanced_quote_is_a_pod_start_error() -> None:
    plan = plan_of(spec={"args": "-c 'print(1)"}, name="job")
    with pytest.raises(PodStartError):
        argv_of(plan, plan.replicas[0])


# --- the launch -------------------------------------------------------------------------------


def test_launch_describes_the_replica() -> None:
    plan = plan_of("PyTorch", 2, name="job", spec={"workingDir": "/work"})
    result = launch(plan, index=2)
    assert result.pod_name == "job-worker-1"
    assert (result.role, result.index) == ("worker", 1)
    assert result.image == "python:3.11"
    assert result.argv == ("python", "-c", "pass")
    assert result.working_dir == "/work"


def test_launch_survives_a_json_round_trip() -> None:
    original = launch(with_env({"name": "A", "value": "1"}))
    data = json.loads(json.dumps(original.to_json()))
    assert Launch.from_json(data) == original


def test_every_framework_is_wired() -> None:
    assert set(WIRING) == set(DistributedFramework)


# --- environment ------------------------------------------------------------------------------


def test_only_the_pass_through_variables_and_locale_are_inherited() -> None:
    env = launch().env
    inherited = {key for key in INHERITED if key in env and env[key] == INHERITED[key]}
    assert inherited == PASSED
    for secret in ("LOCKSTEP_DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH", "VIRTUAL_ENV"):
        assert secret not in env
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_nothing_inherited_when_lockstep_has_an_empty_environment() -> None:
    env = launch(inherited={}).env
    assert not set(env) & set(INHERITED) - {"HOSTNAME"}


def test_environment_holds_the_framework_wiring_and_identity() -> None:
    plan = plan_of("PyTorch", 2, name="job")
    env = launch(plan, index=2).env
    wiring = pytorch.environment(plan, plan.replicas[2], endpoints(plan))
    assert {key: env[key] for key in wiring} == wiring
    assert env["RANK"] == "2"
    assert env["HOSTNAME"] == "job-worker-1"
    assert env[POD_MARKER] == "uid-job-worker-1"


def test_user_variables_are_set() -> None:
    env = launch(with_env({"name": "EPOCHS", "value": "3"}, {"name": "EMPTY"})).env
    assert env["EPOCHS"] == "3"
    assert env["EMPTY"] == ""


def test_user_variables_override_inherited_ones() -> None:
    env = launch(
        with_env({"name": "PATH", "value": "/opt/bin"}, {"name": "HOME", "value": "/h"})
    ).env
    assert env["PATH"] == "/opt/bin"
    assert env["HOME"] == "/h"


def test_framework_wiring_overrides_user_variables() -> None:
    plan = with_env(
        {"name": "RANK", "value": "99"},
        {"name": "MASTER_ADDR", "value": "elsewhere"},
        {"name": "PYTHONUNBUFFERED", "value": "0"},
    )
    env = launch(plan, index=1).env
    assert env["RANK"] == "1"
    assert env["MASTER_ADDR"] == LOOPBACK
    assert env["PYTHONUNBUFFERED"] == "1"


def test_pod_identity_overrides_everything() -> None:
    plan = with_env({"name": "HOSTNAME", "value": "mine"}, {"name": POD_MARKER, "value": "forged"})
    env = launch(plan, index=1).env
    assert env["HOSTNAME"] == "job-worker-0"
    assert env[POD_MARKER] == "uid-job-worker-0"


def test_excluded_variables_are_left_out() -> None:
    plan = with_env(
        {"name": "KEEP", "value": "1"},
        {"name": "DROP", "value": "2", "exclude": True},
        {"name": "PATH", "value": "/nowhere", "exclude": True},
        {"name": "TOKEN", "secret": {"name": "s", "key": "k"}, "exclude": True},
        {"name": "KEPT_TOO", "value": "3", "exclude": False},
    )
    env = launch(plan).env
    assert env["KEEP"] == "1"
    assert env["KEPT_TOO"] == "3"
    assert "DROP" not in env
    assert "TOKEN" not in env
    assert env["PATH"] == INHERITED["PATH"]


def test_a_later_user_variable_with_the_same_name_wins() -> None:
    env = launch(with_env({"name": "A", "value": "1"}, {"name": "A", "value": "2"})).env
    assert env["A"] == "2"


def test_pod_field_refs_are_resolved_per_pod() -> None:
    plan = with_env({"name": "MY_POD", "podFieldRef": {"path": "metadata.name"}})
    assert launch(plan, index=0).env["MY_POD"] == "job-master-0"
    assert launch(plan, index=2).env["MY_POD"] == "job-worker-1"


# --- resolve ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.name", "job-worker-3"),
        ("metadata.namespace", "runai-team"),
        ("metadata.uid", "0f0e-uid"),
        ("spec.nodeName", "gpu-7"),
        ("spec.serviceAccountName", "default"),
        ("status.podIP", "127.0.0.1"),
        ("status.podIPs", "127.0.0.1"),
        ("status.hostIP", "127.0.0.1"),
        ("status.hostIPs", "127.0.0.1"),
    ],
)
def test_pod_field_ref(path: str, value: str) -> None:
    assert resolve(variable(name="X", podFieldRef={"path": path}), POD) == value


def test_a_pod_field_ref_wins_over_a_literal_value() -> None:
    ref = variable(name="X", value="literal", podFieldRef={"path": "metadata.namespace"})
    assert resolve(ref, POD) == "runai-team"


@pytest.mark.parametrize(
    "path", ["metadata.labels", "status.phase", "metadata.name ", "METADATA.NAME"]
)
def test_unknown_pod_field_ref_names_the_known_ones(path: str) -> None:
    with pytest.raises(PodStartError) as caught:
        resolve(variable(name="X", podFieldRef={"path": path}), POD)
    message = str(caught.value)
    assert message.startswith(f"environment variable X: podFieldRef {path!r} is not one of ")
    assert "metadata.name, metadata.namespace, metadata.uid" in message


def test_user_credentials_cannot_be_resolved_locally() -> None:
    reference = {"userCredential": {"name": "u", "key": "k"}}
    with pytest.raises(PodStartError, match=r"^environment variable DB_PASSWORD: user credentials"):
        resolve(variable(name="DB_PASSWORD", value="fallback", **reference), POD)


def test_secret_and_config_map_references_win_over_a_value_and_are_kept_unresolved() -> None:
    plan = with_env(
        {"name": "DB", "value": "fallback", "secret": {"name": "db", "key": "password"}},
        {"name": "MODE", "configMap": {"name": "cfg", "key": "mode"}},
    )
    pod = launch(plan)
    assert "DB" not in pod.env
    assert "MODE" not in pod.env
    assert pod.references == {
        "DB": ValueReference(SecretKind.SECRET, "db", "password"),
        "MODE": ValueReference(SecretKind.CONFIG_MAP, "cfg", "mode"),
    }
    assert Launch.from_json(json.loads(json.dumps(pod.to_json()))) == pod
    assert "fallback" not in json.dumps(pod.to_json())


def test_a_later_literal_replaces_a_reference_and_wiring_drops_one() -> None:
    plan = with_env(
        {"name": "DB", "secret": {"name": "db", "key": "password"}},
        {"name": "DB", "value": "plain"},
        {"name": "RANK", "secret": {"name": "db", "key": "rank"}},
    )
    pod = launch(plan)
    assert pod.env["DB"] == "plain"
    assert pod.env["RANK"] == "1"
    assert pod.references == {}


def test_references_resolve_against_the_project_values() -> None:
    plan = with_env(
        {"name": "DB", "secret": {"name": "db", "key": "password"}},
        {"name": "MODE", "configMap": {"name": "cfg", "key": "mode"}},
    )
    values = ProjectSecrets(
        secrets={"db": {"password": "s3cret"}}, config_maps={"cfg": {"mode": "fast"}}
    )
    assert resolve_references(launch(plan), values) == {"DB": "s3cret", "MODE": "fast"}


@pytest.mark.parametrize(
    ("values", "missing"),
    [
        (ProjectSecrets(), "secret 'db' with a key 'password'"),
        (ProjectSecrets(secrets={"db": {"user": "u"}}), "secret 'db' with a key 'password'"),
        (ProjectSecrets(config_maps={"db": {"password": "p"}}), "secret 'db'"),
    ],
)
def test_a_missing_secret_or_key_is_named(values: ProjectSecrets, missing: str) -> None:
    plan = with_env({"name": "DB", "secret": {"name": "db", "key": "password"}})
    with pytest.raises(
        PodStartError, match=f"^environment variable DB: the project has no {missing}"
    ):
        resolve_references(launch(plan), values)


def test_a_plain_value() -> None:
    assert resolve(variable(name="X", value="a=b c"), POD) == "a=b c"
    assert resolve(variable(name="X"), POD) == ""


# --- limits and image environments -------------------------------------------------------------


def test_limits_come_from_the_compute_spec() -> None:
    plan = plan_of(
        "PyTorch", 1, name="job", spec={"compute": {"cpuMemoryLimit": "1.5Gi", "cpuCoreLimit": 1.5}}
    )
    limits = launch(plan).limits
    assert limits == Limits(memory_bytes=1610612736, cpu_cores=1.5)
    assert limits.whole_cpus == 2
    assert Limits(cpu_cores=0.2).whole_cpus == 1
    assert launch().limits == Limits()


def test_a_mapped_image_puts_its_environment_first_on_path(tmp_path: Path) -> None:
    venv = tmp_path / "torch"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    conda = tmp_path / "conda"
    plan = plan_of("PyTorch", 1, name="job", spec={"image": "pytorch/pytorch:2.4-cuda12"})
    pod = launch_of(
        plan,
        plan.workers[0],
        pod=identity(plan, 1),
        endpoints=endpoints(plan),
        inherited=INHERITED,
        project_id="1",
        image_environments={"pytorch/pytorch": venv, "pytorch/pytorch:2.5": conda},
    )
    assert pod.env["PATH"] == f"{venv}/bin:/usr/bin:/bin"
    assert pod.env["VIRTUAL_ENV"] == str(venv)
    assert pod.notes == (f"image pytorch/pytorch:2.4-cuda12 runs in the local environment {venv}",)


@pytest.mark.parametrize(
    ("image", "found"),
    [
        ("repo/img:1", "exact"),
        ("repo/img:2", "repository"),
        ("repo/img@sha256:abc", "repository"),
        ("registry:5000/repo/img", "registry"),
        ("registry:5000/repo/img:3", "registry"),
        ("registry:5000/repo/other", None),
        ("other", None),
    ],
)
def test_images_match_exactly_then_by_repository(image: str, found: str | None) -> None:
    environments = {
        "repo/img:1": Path("/exact"),
        "repo/img": Path("/repository"),
        "registry:5000/repo/img": Path("/registry"),
    }
    mapped = environment_for_image(image, environments)
    assert (None if mapped is None else mapped.prefix.name) == found


def test_a_conda_prefix_sets_conda_prefix(tmp_path: Path) -> None:
    assert ImageEnvironment(tmp_path).variables("/bin") == {
        "PATH": f"{tmp_path}/bin:/bin",
        "CONDA_PREFIX": str(tmp_path),
    }


def test_an_unmapped_image_says_so() -> None:
    assert launch().notes == (
        "image python:3.11 has no local environment mapped: the pod runs in lockstep's own "
        "environment",
    )
