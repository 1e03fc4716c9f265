"""The options every `submit` shares (cli/submit_flags.py): parsed into one `SubmitFlags`, the
command's own options placed among them where it says, and turned into `PodOptions` fields."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from lockstep.cli.requests import PodOptions
from lockstep.cli.submit_flags import (
    SubmitFlags,
    arranged,
    shared_parameters,
    with_submit_flags,
)


def _command(seen: list[tuple[SubmitFlags, dict[str, object]]]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_submit_flags(after={"retries": "toleration"})
    def submit(
        given: SubmitFlags,
        *,
        workers: Annotated[int | None, typer.Option("--workers")] = None,
        retries: Annotated[int, typer.Option("--retries")] = 0,
        quiet: Annotated[bool, typer.Option("--quiet")] = False,
    ) -> None:
        """Submit something."""
        seen.append((given, {"workers": workers, "retries": retries, "quiet": quiet}))

    @app.command()
    def other() -> None:
        """Another command, so that `submit` is named on the command line."""

    return app


def test_the_shared_options_arrive_as_one_submit_flags_and_the_own_options_apart() -> None:
    seen: list[tuple[SubmitFlags, dict[str, object]]] = []
    result = CliRunner().invoke(
        _command(seen),
        [
            "submit",
            "fit",
            "-p",
            "team",
            "-i",
            "python:3.12",
            "-e",
            "A=1",
            "-e",
            "B=2",
            "-g",
            "2",
            "--cpu-core-limit",
            "1.5",
            "--toleration",
            "gpu",
            "--new-pvc",
            "claimname=c,size=1G,path=/d",
            "--name-prefix",
            "-f",
            "request.json",
            "--wait",
            "-o",
            "yaml",
            "--workers",
            "3",
            "--retries",
            "2",
            "--",
            "python",
            "-c",
            "pass",
        ],
    )
    assert result.exit_code == 0, result.output
    [(given, own)] = seen
    assert given == SubmitFlags(
        name="fit",
        command=["python", "-c", "pass"],
        project="team",
        image="python:3.12",
        environment=["A=1", "B=2"],
        gpu_devices_request=2,
        cpu_core_limit=1.5,
        toleration=["gpu"],
        new_pvc=["claimname=c,size=1G,path=/d"],
        name_prefix=True,
        request_file=Path("request.json"),
        wait=True,
        output="yaml",
    )
    assert own == {"workers": 3, "retries": 2, "quiet": False}


def test_unset_options_keep_their_defaults() -> None:
    seen: list[tuple[SubmitFlags, dict[str, object]]] = []
    result = CliRunner().invoke(_command(seen), ["submit", "fit"])
    assert result.exit_code == 0, result.output
    assert seen == [(SubmitFlags(name="fit"), {"workers": None, "retries": 0, "quiet": False})]


def test_own_options_are_listed_after_the_image_or_where_the_command_says() -> None:
    seen: list[tuple[SubmitFlags, dict[str, object]]] = []
    result = CliRunner().invoke(_command(seen), ["submit", "--help"])
    expected = [
        "--image",
        "--workers",
        "--environment",
        "--toleration",
        "--retries",
        "--quiet",
        "--label",
        "--output",
    ]
    assert all(option in result.output for option in expected)
    assert sorted(expected, key=result.output.index) == expected
    assert "Submit something." in result.output


def test_the_shared_parameters_follow_the_fields_of_submit_flags() -> None:
    names = [parameter.name for parameter in shared_parameters()]
    assert names[:4] == ["name", "command", "project", "image"]
    assert names[-6:] == [
        "request_file",
        "dry_run",
        "wait",
        "wait_for_completion",
        "follow",
        "output",
    ]
    assert shared_parameters()[0].default is inspect.Parameter.empty


def test_an_own_option_placed_after_no_shared_one_is_refused() -> None:
    own = [inspect.Parameter("extra", inspect.Parameter.KEYWORD_ONLY, default=None)]
    with pytest.raises(ValueError, match="no shared submit flag nowhere"):
        arranged(shared_parameters(), own, {"extra": "nowhere"})


def test_an_own_option_may_not_take_a_shared_name() -> None:
    def submit(given: SubmitFlags, *, image: str | None = None) -> None:
        del given, image

    with pytest.raises(ValueError, match="image: already a shared submit flag"):
        with_submit_flags()(submit)


def test_the_pod_fields_fill_pod_options() -> None:
    given = SubmitFlags(
        name="fit",
        command=["python", "train.py"],
        image="img",
        environment=["A=1"],
        gpu_portion_request=0.5,
        cpu_memory_request="1G",
        node_pools=["a", "b"],
        label=["team=x"],
        annotation=["note=y"],
        name_prefix=True,
    )
    storage = {"pvc": [{"claimName": "c", "path": "/d"}]}
    fields = given.pod_fields(project_id="7", cluster_id="c", storage=storage, base={"k": 1})
    assert PodOptions(**fields) == PodOptions(
        name="fit",
        project_id="7",
        cluster_id="c",
        image="img",
        command=["python", "train.py"],
        environment=["A=1"],
        gpu_portion=0.5,
        cpu_memory_request="1G",
        node_pools=["a", "b"],
        labels=["team=x"],
        annotations=["note=y"],
        name_prefix=True,
        storage=storage,
        base={"k": 1},
    )
    assert PodOptions(
        **SubmitFlags(name="x").pod_fields(project_id="1", cluster_id="c", storage={}, base={})
    ) == PodOptions(name="x", project_id="1", cluster_id="c")
