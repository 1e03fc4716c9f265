"""`scripts/install`, the first step of `scripts/serve`: pip runs once, a restart skips it while
pyproject.toml and the script are unchanged, and an edited pyproject.toml installs again.

The real `.venv` is not touched: the script runs, as written, in a copy of the checkout whose
pyproject.toml names a one-module project without dependencies, built by a backend of its own
(tests/support/probe_build_backend.py), and it makes that copy's `.venv` itself. pip works
offline there, with the pip that Python's ensurepip bundles, so that what is measured is the
script, not the network."""

from __future__ import annotations

import ensurepip
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.requests import REPOSITORY

BUNDLED = Path(ensurepip.__file__).parent / "_bundled"
SKIPPED_RESTART_SECONDS = 5.0
"""A restart hashes two files and looks for three programs: well under this, even on a busy
machine, where a pip install takes longer."""


def project(version: str) -> str:
    return (
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
        f'[project]\nname = "install-probe"\nversion = "{version}"\n'
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    for name in ("install", "system-packages"):
        shutil.copy2(REPOSITORY / "scripts" / name, tmp_path / "scripts" / name)
    (tmp_path / "pyproject.toml").write_text(project("1.0"))
    shutil.copy2(REPOSITORY / "tests/support/probe_build_backend.py", tmp_path / "backend.py")
    (tmp_path / "install_probe.py").write_text('"""A module to install."""\n')
    return tmp_path


def install(checkout: Path) -> tuple[str, float]:
    """Run `scripts/install` as `scripts/serve` does; its output and how long it took."""
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PIP_")},
        "PYTHON": sys.executable,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(BUNDLED),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    started = time.monotonic()
    finished = subprocess.run(
        ["scripts/install"],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    took = time.monotonic() - started
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output
    return output, took


def installed_version(checkout: Path) -> str:
    finished = subprocess.run(
        [
            str(checkout / ".venv/bin/python"),
            "-c",
            "import importlib.metadata as m; print(m.version('install-probe'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return finished.stdout.strip()


def dist_info(checkout: Path) -> Path:
    (found,) = (checkout / ".venv/lib").glob("python3*/site-packages/install_probe-*.dist-info")
    return found


def test_a_restart_skips_the_install_and_an_edit_installs_again(checkout: Path) -> None:
    output, _ = install(checkout)
    assert "up to date" not in output
    assert installed_version(checkout) == "1.0"
    first = dist_info(checkout).stat().st_mtime_ns
    stamp = checkout / ".venv/lockstep-install"
    assert stamp.is_file()

    output, took = install(checkout)
    assert "scripts/install: .venv is up to date with pyproject.toml" in output
    assert took < SKIPPED_RESTART_SECONDS, f"a restart with nothing changed took {took:.1f} s"
    assert dist_info(checkout).stat().st_mtime_ns == first  # pip did not install again

    (checkout / "pyproject.toml").write_text(project("2.0"))
    output, _ = install(checkout)
    assert "up to date" not in output
    assert installed_version(checkout) == "2.0"
    output, _ = install(checkout)
    assert "up to date" in output

    script = checkout / "scripts/install"
    script.write_text(f"{script.read_text()}# edited\n")
    second = dist_info(checkout).stat().st_mtime_ns
    output, _ = install(checkout)
    assert "up to date" not in output
    assert dist_info(checkout).stat().st_mtime_ns != second
