"""What a pod's `python3` and relative paths are on this machine (runtimes/local/launch.py): a
pod of an unmapped image gets lockstep's own virtual environment first on PATH; a mapped image
its own environment instead; a relative path in the command line of a pod without a
`workingDir` resolves against the directory lockstep was started from."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lockstep.runtimes.local.pod_launch import (
    Launch,
    launch_of,
    lockstep_environment,
    with_paths_from,
)
from tests.unit.specs import plan_of
from tests.unit.test_launch import INHERITED, endpoints, identity

OWN = Path("/srv/lockstep/.venv")


def launch(*, spec: dict[str, Any] | None = None, **options: Any) -> Launch:
    plan = plan_of("PyTorch", 1, name="job", spec=spec or {})
    return launch_of(
        plan,
        plan.workers[0],
        pod=identity(plan, 1),
        endpoints=endpoints(plan),
        inherited=INHERITED,
        project_id="1",
        **options,
    )


def test_lockstep_s_environment_is_the_venv_it_runs_in() -> None:
    expected = Path(sys.prefix) if sys.prefix != sys.base_prefix else None
    assert lockstep_environment() == expected


def test_an_unmapped_image_gets_lockstep_s_environment_first_on_path() -> None:
    env = launch(own_environment=OWN).env
    assert env["PATH"] == f"{OWN}/bin:/usr/bin:/bin"
    assert "VIRTUAL_ENV" not in env


def test_a_mapped_image_gets_its_own_environment_instead(tmp_path: Path) -> None:
    mapped = tmp_path / "torch"
    (mapped / "bin").mkdir(parents=True)
    (mapped / "pyvenv.cfg").write_text("home = /usr/bin\n")
    env = launch(
        spec={"image": "pytorch/pytorch:2.4"},
        own_environment=OWN,
        image_environments={"pytorch/pytorch": mapped},
    ).env
    assert env["PATH"] == f"{mapped}/bin:/usr/bin:/bin"


def test_a_path_the_spec_sets_wins() -> None:
    spec = {"environmentVariables": [{"name": "PATH", "value": "/opt/bin"}]}
    assert launch(spec=spec, own_environment=OWN).env["PATH"] == "/opt/bin"


def test_relative_paths_resolve_against_the_directory_lockstep_started_from(
    tmp_path: Path,
) -> None:
    (tmp_path / "examples" / "pytorch").mkdir(parents=True)
    (tmp_path / "examples" / "pytorch" / "allreduce.py").touch()
    (tmp_path / "python3").touch()
    (tmp_path / "data").mkdir()
    argv = (
        "python3",
        "examples/pytorch/allreduce.py",
        "--out",
        "results/run-1",
        "--config=examples/pytorch/allreduce.py",
        "data",
        "/etc/hostname",
        "bert-base/uncased",
        "x" * 5000,
    )
    assert with_paths_from(argv, tmp_path) == (
        "python3",  # a command without a slash is looked up on PATH
        f"{tmp_path}/examples/pytorch/allreduce.py",
        "--out",
        "results/run-1",  # names nothing there: left to the pod's own directory
        "--config=examples/pytorch/allreduce.py",
        f"{tmp_path}/data",
        "/etc/hostname",
        "bert-base/uncased",
        "x" * 5000,
    )
    assert with_paths_from(("examples/pytorch/allreduce.py",), tmp_path) == (
        f"{tmp_path}/examples/pytorch/allreduce.py",
    )


def test_the_launch_resolves_relative_paths_unless_a_working_dir_is_set(tmp_path: Path) -> None:
    (tmp_path / "train.py").touch()
    spec = {"command": "python3", "args": "train.py"}
    assert launch(spec=spec, paths_from=tmp_path).argv == ("python3", f"{tmp_path}/train.py")
    in_working_dir = {**spec, "workingDir": "/srv/job"}
    assert launch(spec=in_working_dir, paths_from=tmp_path).argv == ("python3", "train.py")
    assert launch(spec=spec).argv == ("python3", "train.py")
