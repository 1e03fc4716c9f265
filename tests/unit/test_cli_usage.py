"""What a new user meets before reaching a server: `--version`, `-h` on every level, one
suggestion for a mistyped command, `tensorflow` for `tf`, and a server URL without its scheme."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lockstep import __version__
from lockstep.cli.contexts import server_url


def lockstep(*args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")}
    done = subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        env=env | {"COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    return done


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    assert lockstep(flag).stdout == f"lockstep {__version__}\n"


@pytest.mark.parametrize(
    "words",
    [[], ["training"], ["training", "pytorch"], ["training", "tf", "submit"], ["login"]],
    ids=lambda words: " ".join(words) or "lockstep",
)
def test_dash_h_is_help_at_every_level(words: list[str]) -> None:
    short = lockstep(*words, "-h").stdout
    assert short.startswith("Usage: lockstep")
    assert "-h, --help" in short
    assert short == lockstep(*words, "--help").stdout


@pytest.mark.parametrize(
    ("words", "suggestion"),
    [
        (["training", "pytorhc", "submit", "x"], "'pytorch'"),
        (["trainng", "list"], "'training'"),
        (["training", "lisst"], "'list'"),
    ],
)
def test_a_mistyped_command_gets_one_suggestion(words: list[str], suggestion: str) -> None:
    error = lockstep(*words, status=2).stderr
    assert error.count("Did you mean") == 1, error
    assert f"Did you mean {suggestion}?" in error


def test_tensorflow_is_tf() -> None:
    assert "TensorFlow workloads (also: tensorflow)." in lockstep("training", "-h").stdout
    assert (
        "Submit a distributed TensorFlow"
        in lockstep("training", "tensorflow", "submit", "-h").stdout
    )


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("localhost:8080", "http://localhost:8080"),
        ("127.0.0.1:8080/", "http://127.0.0.1:8080"),
        (" lockstep.example.com ", "http://lockstep.example.com"),
        ("http://host:1", "http://host:1"),
        ("https://host", "https://host"),
    ],
)
def test_a_server_url_without_a_scheme_is_http(given: str, url: str) -> None:
    assert server_url(given) == url
